package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/telemetry"
)

// fakeRoCEPort is the target of fakeSysfs's mlx5_1 port 1 as its netdev,
// eth2, resolves (eth2 itself exists only in the fake tree).
func fakeRoCEPort(t *testing.T, root string) Target {
	t.Helper()
	devs, err := ListRDMADevices(root)
	if err != nil {
		t.Fatal(err)
	}
	d, p, ok := portOfNetdev(devs, "eth2")
	if !ok {
		t.Fatal("eth2 is no RDMA port's netdev")
	}
	return Target{Name: "eth2", Netdev: "eth2", Device: *d, Port: p, Sysfs: root}
}

func TestCheckTelemetry(t *testing.T) {
	root := fakeSysfs(t)
	if tg := fakeRoCEPort(t, root); tg.CheckTelemetry() != nil || tg.Device.Name != "mlx5_1" || tg.Port.Num != 1 {
		t.Errorf("eth2: %+v", tg)
	}
	tg, err := Resolve("lo", root)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.CheckTelemetry(); err == nil || !strings.Contains(err.Error(), "neither an RDMA device") {
		t.Errorf("lo: %v", err)
	}
}

// The sampler writes a sidecar the telemetry package reads back, with a
// first sample at the start and a last one at Stop.
func TestTelemetrySidecar(t *testing.T) {
	root := fakeSysfs(t)
	path := filepath.Join(t.TempDir(), "out.pcap"+TelemetrySuffix)
	tel, err := StartTelemetry(fakeRoCEPort(t, root), 10*time.Millisecond, path)
	if err != nil {
		t.Fatal(err)
	}
	// Let the counter move between samples, as traffic would: a sample
	// of the old value first, then of the new one, however slowly the
	// sampler runs on a busy machine.
	testenv.WaitFor(t, 0, "a first sample", func() bool { return tel.sampler.Samples() >= 1 })
	// Replace the file whole: sysfs never shows a half-written value.
	tmp := filepath.Join(root, "new")
	os.WriteFile(tmp, []byte("2000\n"), 0o644)
	os.Rename(tmp, filepath.Join(telemetry.SysfsPortDir(root, "mlx5_1", 1), "counters/port_xmit_data"))
	after := tel.sampler.Samples()
	testenv.WaitFor(t, 0, "a sample after the counter moved", func() bool { return tel.sampler.Samples() > after })
	rep, err := tel.Stop()
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Samples
	if n < 2 || rep.Warning() != "" {
		t.Fatalf("%d samples", n)
	}
	series, err := telemetry.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || uint64(series[0].Len()) != n {
		t.Fatalf("sidecar holds %d series; want 1 with %d samples", len(series), n)
	}
	s := series[0]
	col := s.Col("port_xmit_data")
	if col < 0 {
		t.Fatalf("no port_xmit_data column")
	}
	if first, last := s.Value(0, col), s.Value(s.Len()-1, col); first != 1000 || last != 2000 {
		t.Errorf("port_xmit_data %d ... %d, want 1000 ... 2000", first, last)
	}
}

// A sidecar is opened as a capture is: a symbolic link is refused and its
// target untouched.
func TestTelemetrySidecarRefusesLink(t *testing.T) {
	tg := fakeRoCEPort(t, fakeSysfs(t))
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "out.pcap"+TelemetrySuffix)
	os.Symlink(target, link)
	if tel, err := StartTelemetry(tg, time.Second, link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if tel != nil {
			tel.Stop()
		}
		t.Errorf("sidecar onto a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target now %q", b)
	}
}

// A software RoCE device deleted and added again during a capture (rdma
// link del and add) costs the samples taken meanwhile, said in one
// warning with the true count, and is no error of the capture; its
// hw_counters are 64-bit in the sidecar. A counter file that would not
// read while the device was there is an error.
func TestTelemetryDeviceGoneIsNoError(t *testing.T) {
	root := fakeSysfs(t)
	devs, err := ListRDMADevices(root)
	if err != nil {
		t.Fatal(err)
	}
	rxe := findRDMA(devs, "rxe0")
	tg := Target{Name: "rxe0", Device: *rxe, Port: rxe.Ports[0], Netdev: rxe.Parent, Sysfs: root}
	path := filepath.Join(t.TempDir(), "out.pcap"+TelemetrySuffix)
	tel, err := StartTelemetry(tg, 2*time.Millisecond, path)
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		if !testenv.Poll(0, ok) {
			t.Fatalf("%s: %d samples, failures %+v", what, tel.sampler.Samples(), tel.sampler.Failures())
		}
	}
	dev := filepath.Join(telemetry.SysfsClassDir(root), "rxe0")
	away := filepath.Join(root, "rxe0-deleted")
	waitFor("a first sample", func() bool { return tel.sampler.Samples() >= 1 })
	if err := os.Rename(dev, away); err != nil {
		t.Fatal(err)
	}
	waitFor("samples while gone", func() bool { return tel.sampler.Failures().GoneSamples >= 3 })
	if err := os.Rename(away, dev); err != nil {
		t.Fatal(err)
	}
	n := tel.sampler.Samples()
	waitFor("samples after", func() bool { return tel.sampler.Samples() >= n+2 })
	rep, err := tel.Stop()
	if err != nil {
		t.Fatalf("a device that went away failed the capture: %v", err)
	}
	f := rep.Failures
	want := fmt.Sprintf("telemetry: %d counter reads failed in %d of %d samples of rxe0 port 1, all while the device",
		f.Reads, f.Samples, rep.Samples)
	// Two counters: a sample that straddles the removal misses one.
	if f.Reads < f.Samples || f.Reads > 2*f.Samples || f.GoneReads != f.Reads || !strings.HasPrefix(rep.Warning(), want) || !strings.Contains(rep.Warning(), path) {
		t.Errorf("warning %q; failures %+v", rep.Warning(), f)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "# counter sent_pkts unit=count width=64") {
		t.Errorf("sent_pkts not 64-bit in the sidecar:\n%s", b)
	}

	bad := filepath.Join(telemetry.SysfsPortDir(root, "rxe0", 1), "hw_counters", "rcvd_pkts")
	if err := os.WriteFile(bad, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tel, err = StartTelemetry(tg, time.Hour, filepath.Join(t.TempDir(), "x"+TelemetrySuffix))
	if err != nil {
		t.Fatal(err)
	}
	// Read at the start and at Stop: two failures.
	if _, err := tel.Stop(); err == nil || !strings.Contains(err.Error(), "2 counter reads failed with the device present") || !strings.Contains(err.Error(), "garbage") {
		t.Errorf("a counter that would not parse: %v", err)
	}
}

package capture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/telemetry"
)

func TestTelemetryPort(t *testing.T) {
	cfg := &Config{SysfsRoot: fakeSysfs(t)}
	for in, want := range map[string]struct {
		dev  string
		port int
	}{"mlx5_0": {"mlx5_0", 1}, "mlx5_1:2": {"mlx5_1", 2}, "eth2": {"mlx5_1", 1}, "eth3": {"mlx5_1", 2}} {
		dev, port, err := TelemetryPort(in, cfg)
		if err != nil || dev != want.dev || port != want.port {
			t.Errorf("%s: %s %d %v, want %s %d", in, dev, port, err, want.dev, want.port)
		}
	}
	if _, _, err := TelemetryPort("lo", cfg); err == nil || !strings.Contains(err.Error(), "neither an RDMA device") {
		t.Errorf("lo: %v", err)
	}
}

// The sampler writes a sidecar the telemetry package reads back, with a
// first sample at the start and a last one at Stop.
func TestTelemetrySidecar(t *testing.T) {
	root := fakeSysfs(t)
	cfg := &Config{SysfsRoot: root}
	dev, port, err := TelemetryPort("eth2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.pcap"+TelemetrySuffix)
	tel, err := StartTelemetry(dev, port, 10*time.Millisecond, path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Let the counter move between samples, as traffic would.
	for i := 0; i < 5; i++ {
		time.Sleep(15 * time.Millisecond)
		// Replace the file whole: sysfs never shows a half-written value.
		tmp := filepath.Join(root, "new")
		os.WriteFile(tmp, []byte("2000\n"), 0o644)
		os.Rename(tmp, filepath.Join(root, "mlx5_1/ports/1/counters/port_xmit_data"))
	}
	n, err := tel.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
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
	cfg := &Config{SysfsRoot: fakeSysfs(t)}
	dev, port, err := TelemetryPort("eth2", cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "out.pcap"+TelemetrySuffix)
	os.Symlink(target, link)
	if tel, err := StartTelemetry(dev, port, time.Second, link, cfg); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if tel != nil {
			tel.Stop()
		}
		t.Errorf("sidecar onto a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("link target now %q", b)
	}
}

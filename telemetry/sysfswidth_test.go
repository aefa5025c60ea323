package telemetry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
)

// Counter widths come from what the device and the file say: mlx5's Q
// counters are 32-bit and its congestion counters 64-bit; every hw_counter
// of a software RoCE device (rdma_rxe, told by its parent attribute) is
// 64-bit; a 32-bit one whose file holds more is 64-bit too.
func TestSysfsCounterWidths(t *testing.T) {
	for name, want := range map[string]uint8{OutOfSequence: 32, OutOfBuffer: 32, NpCNPSent: 64, RpCNPHandled: 64,
		RpCNPIgnored: 64, NpECNMarkedRoCEPackets: 64} {
		if c := SysfsCounter("hw_counters", name); c.Width != want || c.Saturating {
			t.Errorf("%s: %+v, want %d bits wrapping", name, c, want)
		}
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{PortXmitData: "1"}, map[string]string{OutOfSequence: "5000000000", PacketSeqErr: "7"})
	s, err := ReadSysfs(dir, "mlx5_2", 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := s.Counters[s.Col(OutOfSequence)].Width; w != 64 {
		t.Errorf("out_of_sequence reading 5e9: width %d, want 64", w)
	}
	if w := s.Counters[s.Col(PacketSeqErr)].Width; w != 32 {
		t.Errorf("packet_seq_err: width %d, want 32", w)
	}

	soft := writeSoftRoCE(t, map[string]string{"sent_pkts": "10", "rcvd_pkts": "20", "duplicate_request": "0"})
	if p := SoftRoCEParent(soft, "rxe0"); p != "veth0" {
		t.Errorf("parent %q", p)
	}
	s, err = ReadSysfs(soft, "rxe0", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Counters {
		if c.Width != 64 || c.Saturating {
			t.Errorf("rxe0 %s: %d bits, saturating %v; want 64-bit", c.Name, c.Width, c.Saturating)
		}
	}
	// The same counter names on a hardware device keep the catalogue's.
	if p := SoftRoCEParent(dir, "mlx5_2"); p != "" {
		t.Errorf("mlx5_2 taken for software RoCE on %q", p)
	}
}

// writeSoftRoCE writes a sysfs tree (its mount point returned) with rxe0
// as rdma_rxe shows it: a parent attribute and port 1's hw_counters.
func writeSoftRoCE(t *testing.T, hw map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(SysfsClassDir(root), "rxe0")
	base := SysfsPortDir(root, "rxe0", 1)
	if err := os.MkdirAll(filepath.Join(base, "hw_counters"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, filepath.Join(dev, "parent"), "veth0")
	writeFileAtomic(t, filepath.Join(dev, "node_type"), "1: CA")
	for k, v := range hw {
		writeFileAtomic(t, filepath.Join(base, "hw_counters", k), v)
	}
	return root
}

// A software RoCE device deleted and added again during sampling (rdma
// link del, rdma link add: its counters restart at 0) costs the samples
// taken while it was gone, each counted, with every read failure counted
// however many there are; the sidecar declares the counters 64-bit and
// marks the return ("# reset"), so the delta across the gap is a reset,
// never a wrap of 2^32 minus the old value, nor an increase when the
// counter has grown past its old value by then.
func TestSysfsSamplerDeviceGoneAndBack(t *testing.T) {
	// 20 counters: 6 samples while gone fail 120 reads, past any cap of 100.
	hw := map[string]string{}
	for i := 0; i < 18; i++ {
		hw[fmt.Sprintf("err_%02d", i)] = "0"
	}
	hw["sent_pkts"], hw["rcvd_pkts"] = "1000", "2000"
	root := t.TempDir()
	soft := writeSoftRoCE(t, hw)
	dev := filepath.Join(SysfsClassDir(soft), "rxe0")
	var out syncBuffer
	s, err := NewSysfsSampler(soft, "rxe0", 1, 5*time.Millisecond, &out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		if !testenv.Poll(0, ok) {
			t.Fatalf("%s: %d samples, failures %+v", what, s.Samples(), s.Failures())
		}
	}
	waitFor("samples before", func() bool { return s.Samples() >= 3 })
	writeFileAtomic(t, filepath.Join(SysfsPortDir(soft, "rxe0", 1), "hw_counters", "rcvd_pkts"), "2500")
	waitFor("a sample of 2500", func() bool { return strings.Contains(out.String(), ",2500,") })
	// rdma link del: the device's directory goes at once.
	gone := filepath.Join(root, "rxe0-deleted")
	if err := os.Rename(dev, gone); err != nil {
		t.Fatal(err)
	}
	// 8 samples: at most the first and the last straddle the removal.
	waitFor("samples while gone", func() bool { return s.Failures().GoneSamples >= 8 })
	// rdma link add: the same device, its counters from 0; rcvd_pkts has
	// grown past its old value by the first sample after, which no value
	// drop would show.
	for k := range hw {
		writeFileAtomic(t, filepath.Join(gone, "ports", "1", "hw_counters", k), "0")
	}
	writeFileAtomic(t, filepath.Join(gone, "ports", "1", "hw_counters", "rcvd_pkts"), "9000")
	if err := os.Rename(gone, dev); err != nil {
		t.Fatal(err)
	}
	n := s.Samples()
	waitFor("samples after", func() bool { return s.Samples() >= n+3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	f := s.Failures()
	got, err := ReadSidecar(strings.NewReader(out.String()), "sidecar")
	if err != nil || len(got) != 1 {
		t.Fatalf("%d series, %v", len(got), err)
	}
	g := got[0]
	// Every failure counted: as many as the sidecar's empty fields.
	empty, emptySamples := uint64(0), uint64(0)
	for i := 0; i < g.Len(); i++ {
		n := 0
		for col := range g.Counters {
			if !g.Valid(i, col) {
				n++
			}
		}
		empty += uint64(n)
		if n > 0 {
			emptySamples++
		}
	}
	if f.Reads != empty || f.Samples != emptySamples || f.Samples != f.GoneSamples || f.GoneReads != f.Reads || f.Reads <= 100 ||
		len(f.First) != maxKeptErrors {
		t.Errorf("failures %d reads in %d samples (%d gone), %d kept; the sidecar has %d empty fields in %d samples",
			f.Reads, f.Samples, f.GoneSamples, len(f.First), empty, emptySamples)
	}
	if !strings.Contains(out.String(), "# counter rcvd_pkts unit=count width=64") {
		t.Errorf("rcvd_pkts not declared 64-bit:\n%s", out.String()[:min(len(out.String()), 600)])
	}
	col := g.Col("rcvd_pkts")
	missing, resets := 0, 0
	for i := 1; i < g.Len(); i++ {
		if !g.Valid(i, col) {
			missing++
			continue
		}
		d := g.Delta(i, col)
		if d.Flags&FlagWrapped != 0 || d.Flags&FlagReset == 0 && d.Value > 500 {
			t.Errorf("sample %d: delta %d flags %v: the restart taken for a wrap or an increase", i, d.Value, d.Flags)
		}
		if d.Flags&FlagReset != 0 {
			resets++
			if d.Flags&FlagMissing == 0 || d.Value != 9000 {
				t.Errorf("sample %d: the delta across the gap is %d, %v; want the later reading 9000, reset and missing", i, d.Value, d.Flags)
			}
		}
	}
	// A sample that straddles the removal or the return, its reads on
	// either side, may have read rcvd_pkts and failed others: up to two
	// failed samples hold it (seen once, on a loaded machine).
	if uint64(missing) > f.Samples || uint64(missing)+2 < f.Samples || resets != 1 || strings.Count(out.String(), "\n# reset\n") != 1 {
		t.Errorf("%d samples missing (sampler counted %d failed), %d resets; want one reset after the gap, marked once in the sidecar",
			missing, f.Samples, resets)
	}
	if len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0].String(), "counters reset: the device went away and came back") {
		t.Errorf("warnings %v", g.Warnings)
	}
}

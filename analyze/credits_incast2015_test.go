package analyze_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
	"github.com/ibscope/ibscope/telemetry"
)

// TestGroundTruthIncast2015 runs the 2015 study's incast at full size (two
// SDR 4x senders, 128 MiB each, MTU 2 KiB, 32 KiB per switch input VL;
// about 131,000 data packets) and checks that ibscope reproduces its findings:
// about 2 us between a sender's packets alone, about 4 us when the two
// share the receiver's link, a 32 KiB input buffer, and the simulated
// PortXmitWait tick.
func TestGroundTruthIncast2015(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size incast (131,072 packets, 560 MB of captures) skipped in -short")
	}
	dir := t.TempDir()
	s, err := sim.Preset("incast2015")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sim.Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.DataPackets != 131072 {
		t.Errorf("%d data packets, want 131072", tr.DataPackets)
	}
	s1 := filepath.Join(dir, "s1.pcapng")

	// IPD phases of sender 1's packets.
	r, err := capfile.Open(s1)
	if err != nil {
		t.Fatal(err)
	}
	var ts []int64
	var f decode.Frame
	for r.Next(&f) == nil {
		if f.Transport == decode.TransportIB && f.Iface == sim.IfaceTx && f.BTH.OpCode.IsData() {
			ts = append(ts, f.TsNs)
		}
	}
	r.Close()
	phases := analyze.DetectPhases(ts, 0)
	if len(phases) < 2 {
		t.Fatalf("phases %+v: want alone then shared", phases)
	}
	alone, shared := phases[0].MedianIPDNs, phases[1].MedianIPDNs
	t.Logf("sender 1: %d packets; alone %d ns apart, shared %d ns apart", len(ts), alone, shared)
	if math.Abs(float64(alone)-2000) > 150 || math.Abs(float64(shared)-4000) > 300 {
		t.Errorf("spacing alone %d ns, shared %d ns: want about 2 us and 4 us", alone, shared)
	}

	cr, err := analyze.Credits(files(s1), analyze.CreditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cr.Links[0].BufferBytes; got != 32<<10 {
		t.Errorf("credits: buffer %d bytes, want 32 KiB", got)
	}
	br, err := analyze.RunBuffer(openT(t, s1, filepath.Join(dir, "s2.pcapng")), openT(t, filepath.Join(dir, "r.pcapng")), analyze.BufferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range br.Senders {
		if math.Abs(float64(bs.EstimateBytes-32<<10)) > 0.05*(32<<10) {
			t.Errorf("buffer from %s: %d bytes, want 32 KiB", filepath.Base(bs.File), bs.EstimateBytes)
		}
	}
	series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := analyze.RunTick(openT(t, s1), series, "perfquery.txt", analyze.TickOptions{Iface: -1})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tk.TickNs-tr.TickNs) > 0.05*tr.TickNs {
		t.Errorf("tick %.3f ns, truth %g", tk.TickNs, tr.TickNs)
	}
	t.Logf("credits buffer %d B, buffer estimate %d B, tick %.3f ns (%.2f symbols; truth %g ns)",
		cr.Links[0].BufferBytes, br.Senders[0].EstimateBytes, tk.TickNs, tk.TickSymbols, tr.TickNs)
}

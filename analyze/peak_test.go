package analyze

import (
	"math"
	"testing"
)

// TestPeakWindow: the peak is the best window of 100 packets, each ending
// at the next one's first packet; fewer packets are measured over all of
// them but the last one's bytes; the link rate caps it.
func TestPeakWindow(t *testing.T) {
	var w peakWindow
	if g := w.gbps(0, 1000, 0, false); g != 0 {
		t.Errorf("empty: %v", g)
	}
	w.add(1000, 0, 1000)
	if g := w.gbps(1000, 1000, 0, false); g != 0 {
		t.Errorf("one packet: %v", g)
	}
	w.add(1800, 1000, 1000) // 1000 bytes in 800 ns: 10 Gb/s
	if g := w.gbps(1800, 1000, 0, false); g != 10 {
		t.Errorf("two packets: %v Gb/s, want 10", g)
	}
	// 99 more at 10 Gb/s, then 99 at 20 Gb/s: the first window (ending
	// at the 101st packet) is 10, the second 20 once it holds 100 packets
	// (measured to its own last one) and after the 201st ends it.
	ts := int64(1800)
	for range 99 {
		ts += 800
		w.add(ts, ts-800, 1000)
	}
	for range 99 {
		ts += 400
		w.add(ts, ts-400, 1000)
	}
	if g := w.gbps(ts, 1000, 0, false); g != 20 {
		t.Errorf("one whole window and a full one no packet has ended: %v Gb/s, want 20 (the second counts once full)", g)
	}
	w.add(ts+400, ts, 1000)
	if g := w.gbps(ts+400, 1000, 0, false); g != 20 {
		t.Errorf("two whole windows: %v Gb/s, want 20", g)
	}
	if g := w.gbps(ts+400, 1000, 12.5, false); g != 12.5 {
		t.Errorf("capped at 12.5: %v", g)
	}
	// A slower tail of fewer than 100 packets leaves the peak as it was.
	ts += 400
	for range 50 {
		w.add(ts+4000, ts, 1000)
		ts += 4000
	}
	if g := w.gbps(ts, 1000, 0, false); g != 20 {
		t.Errorf("after a slow partial window: %v Gb/s, want 20", g)
	}
}

// TestPeakWindowFinal: in the final report the packets after the last
// whole window count as part of it, so that the windows tile every packet
// and the mean (wire bytes but the last packet's over first to last) is
// never above the peak; reports so far leave them out.
func TestPeakWindowFinal(t *testing.T) {
	var w peakWindow
	ts, prev := int64(0), int64(0)
	add := func(gap int64) {
		prev, ts = ts, ts+gap
		w.add(ts, prev, 1000)
	}
	w.add(0, 0, 1000)
	for range 100 { // a whole window of 100 packets at 10 Gb/s, ended by the 101st
		add(800)
	}
	for range 27 { // 27 more at 20 Gb/s: 28 in the open window
		add(400)
	}
	// 127 gaps: 100 of 800 ns and 27 of 400; the mean leaves out the last
	// packet's bytes.
	mean := float64(127*1000*8) / float64(100*800+27*400)
	if g := w.gbps(ts, 1000, 0, false); g != 10 {
		t.Errorf("so far: %v Gb/s, want 10 (the partial window left out)", g)
	}
	if g := w.gbps(ts, 1000, 0, true); math.Abs(g-mean) > 1e-12 || g <= 10 {
		t.Errorf("final: %v Gb/s, want the whole flow's %v (the last whole window joined to the partial one)", g, mean)
	}
	if g := w.gbps(ts, 1000, 10.5, true); g != 10.5 {
		t.Errorf("final, capped at 10.5: %v", g)
	}
	// A whole window that lasted longer than 2^32 ns is not joined.
	var slow peakWindow
	slow.add(0, 0, 1000)
	for i := range 100 {
		slow.add(int64(i+1)*100_000_000, int64(i)*100_000_000, 1000) // 10 s
	}
	slow.add(10_000_000_100, 10_000_000_000, 1000)
	if g := slow.gbps(10_000_000_100, 1000, 0, true); g != float64(100*1000*8)/10e9 {
		t.Errorf("a 10 s window: %v Gb/s", g)
	}
}

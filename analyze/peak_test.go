package analyze

import "testing"

// TestPeakWindow: the peak is the best window of 100 packets, each ending
// at the next one's first packet; fewer packets are measured over all of
// them but the last one's bytes; the link rate caps it.
func TestPeakWindow(t *testing.T) {
	var w peakWindow
	if g := w.gbps(0, 0); g != 0 {
		t.Errorf("empty: %v", g)
	}
	w.add(1000, 0, 1000)
	if g := w.gbps(1000, 0); g != 0 {
		t.Errorf("one packet: %v", g)
	}
	w.add(1800, 1000, 1000) // 1000 bytes in 800 ns: 10 Gb/s
	if g := w.gbps(1800, 0); g != 10 {
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
	if g := w.gbps(ts, 0); g != 20 {
		t.Errorf("one whole window and a full one no packet has ended: %v Gb/s, want 20 (the second counts once full)", g)
	}
	w.add(ts+400, ts, 1000)
	if g := w.gbps(ts+400, 0); g != 20 {
		t.Errorf("two whole windows: %v Gb/s, want 20", g)
	}
	if g := w.gbps(ts+400, 12.5); g != 12.5 {
		t.Errorf("capped at 12.5: %v", g)
	}
	// A slower tail of fewer than 100 packets leaves the peak as it was.
	ts += 400
	for range 50 {
		w.add(ts+4000, ts, 1000)
		ts += 4000
	}
	if g := w.gbps(ts, 0); g != 20 {
		t.Errorf("after a slow partial window: %v Gb/s, want 20", g)
	}
}

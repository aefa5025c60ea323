package capture

import (
	"testing"
)

func TestPlanRing(t *testing.T) {
	p, err := planRing(64<<20, maxFrameBytes("Ethernet", 9000), 32768)
	if err != nil || p.SlotBytes != 9088 || p.Slots != 64<<20/9088 {
		t.Errorf("64 MiB, 9000 MTU: %+v %v", p, err)
	}
	if p, _ := planRing(1<<30, verbsIBFrameBytes, 16384); p.Slots != 16384 {
		t.Errorf("capped by max_qp_wr: %+v", p)
	}
	if p, _ := planRing(1, 1500, 0); p.Slots != verbsMinSlots || p.SlotBytes != 1536 {
		t.Errorf("tiny -B: %+v", p)
	}
	if _, err := planRing(1<<20, 1500, 100); err == nil {
		t.Error("device allowing 100 WRs accepted")
	}
	if _, err := planRing(1<<20, 0, 100); err == nil {
		t.Error("0-byte frames accepted")
	}
}

// The ring hands out every slot once, takes completions in any order,
// reposts in batches and notices when the device ran dry.
func TestRecvRingAccounting(t *testing.T) {
	r := newRecvRing(ringPlan{Slots: 256, SlotBytes: 128})
	ids := r.toRepost(true)
	if len(ids) != 256 {
		t.Fatalf("initial post of %d slots", len(ids))
	}
	r.reposted(len(ids))
	if r.posted != 256 || len(r.pending) != 0 {
		t.Fatalf("posted %d pending %d", r.posted, len(r.pending))
	}
	for i := range 10 {
		off, err := r.completed(uint64(255 - i))
		if err != nil || off != (255-i)*128 {
			t.Fatalf("completion %d: offset %d %v", i, off, err)
		}
	}
	if got := r.toRepost(false); got != nil {
		t.Errorf("reposted %d slots before a batch gathered", len(got))
	}
	for i := 10; i < 200; i++ {
		r.completed(uint64(255 - i))
	}
	got := r.toRepost(false)
	if len(got) != 200 {
		t.Fatalf("below half: repost %d, want all 200", len(got))
	}
	r.reposted(150) // the device took only part of them
	if r.posted != 206 || len(r.pending) != 50 || r.pending[0] != uint32(255-150) {
		t.Errorf("after a partial repost: posted %d pending %d first %d", r.posted, len(r.pending), r.pending[0])
	}
	if _, err := r.completed(256); err == nil {
		t.Error("completion for a slot past the ring accepted")
	}
	for i := 0; i < 206; i++ {
		r.completed(uint64(i % 256))
	}
	if r.emptyEvents != 1 {
		t.Errorf("device ran dry: emptyEvents %d, want 1", r.emptyEvents)
	}
	if _, err := r.completed(0); err == nil {
		t.Error("completion with nothing posted accepted")
	}
}

package analyze

import (
	"math/rand/v2"
	"testing"
)

// incastSeries is the 2015 study's incast seen by one flow: n1 packets
// 2 us apart while it has the SDR link alone, then n2 packets 4 us apart
// once a second sender shares it, with jitter, microsecond stamps and a few
// 320 us stalls.
func incastSeries(n1, n2 int) (ts []int64, switchNs int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	t := int64(1_700_000_000_000_000_000)
	for i := range n1 + n2 {
		gap := int64(2000)
		if i >= n1 {
			gap = 4000
		}
		gap += rng.Int64N(300) - 150
		if i%500 == 499 {
			gap = 320_000
		}
		t += gap
		if i == n1 {
			switchNs = t / 1000 * 1000
		}
		ts = append(ts, t/1000*1000)
	}
	return ts, switchNs
}

func TestDetectPhasesIncast(t *testing.T) {
	ts, switchNs := incastSeries(3000, 2000)
	ph := detectPhases(ts, 64)
	if len(ph) != 2 {
		t.Fatalf("%d phases, want 2: %+v", len(ph), ph)
	}
	if ph[0].MedianIPDNs != 2000 || ph[1].MedianIPDNs != 4000 {
		t.Errorf("median IPDs %d, %d ns, want 2000, 4000", ph[0].MedianIPDNs, ph[1].MedianIPDNs)
	}
	if ph[0].Packets+ph[1].Packets != 5000 {
		t.Errorf("packets %d + %d, want 5000", ph[0].Packets, ph[1].Packets)
	}
	// The boundary is refined to the packet where the spacing changed.
	if d := ph[1].StartNs - switchNs; d < -4200 || d > 4200 {
		t.Errorf("second phase starts %d ns from the switch", d)
	}
	if ph[0].StartNs != ts[0] || ph[1].EndNs != ts[len(ts)-1] {
		t.Errorf("phases span %d..%d, series %d..%d", ph[0].StartNs, ph[1].EndNs, ts[0], ts[len(ts)-1])
	}
	if ph[0].EndNs >= ph[1].StartNs {
		t.Errorf("phases overlap: %+v", ph)
	}
}

func TestDetectPhasesSteady(t *testing.T) {
	ts, _ := incastSeries(5000, 0)
	if ph := detectPhases(ts, 64); len(ph) != 1 || ph[0].Packets != 5000 {
		t.Fatalf("steady series: %+v", ph)
	}
	// A burst shorter than the minimum phase is no phase.
	var short []int64
	tt := int64(0)
	for i := range 1000 {
		gap := int64(2000)
		if i >= 500 && i < 530 {
			gap = 8000
		}
		tt += gap
		short = append(short, tt)
	}
	if ph := detectPhases(short, 64); len(ph) != 1 {
		t.Errorf("30-packet excursion made %d phases: %+v", len(ph), ph)
	}
	if detectPhases(nil, 0) != nil {
		t.Error("phases of an empty series")
	}
	if ph := detectPhases([]int64{5}, 0); len(ph) != 1 || ph[0].Packets != 1 {
		t.Errorf("one packet: %+v", ph)
	}
}

// TestPhaseChangeAfterFirstCandidateBlock: a first block of the new level
// that ends with an IPD of the old one ([10 10 10 2] after 2s) puts the
// change after that whole block; the start was summed past the end of the
// IPDs looked at, a panic (found by FuzzAnalyses through tick).
func TestPhaseChangeAfterFirstCandidateBlock(t *testing.T) {
	d := newPhaseDetector(8) // blocks of 4 IPDs, 2 to confirm
	ts := int64(0)
	d.Add(ts)
	for _, ipd := range []int64{2, 2, 2, 2, 10, 10, 10, 2, 10, 10, 10, 10} {
		ts += ipd
		d.Add(ts)
	}
	ps := d.Phases()
	if len(ps) != 2 || ps[0].EndNs != 40 || ps[1].StartNs != 50 || ps[1].EndNs != 80 {
		t.Fatalf("phases %+v: want a change after the IPD that ends at 40", ps)
	}
}

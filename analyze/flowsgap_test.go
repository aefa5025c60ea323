package analyze

import (
	"math"
	"reflect"
	"testing"
)

// TestFlowsNoThroughput: without the throughput series, every count is as
// with it; only the series and its peak are left out.
func TestFlowsNoThroughput(t *testing.T) {
	with := NewFlowsAnalysis(FlowsOptions{})
	without := NewFlowsAnalysis(FlowsOptions{NoThroughput: true})
	var p Packet
	for i := range 3000 {
		oneFlowPacket(&p, i%7)
		p.TsNs = testBaseNs + int64(i)*3000
		with.Add(&p)
		without.Add(&p)
	}
	got, _ := without.Result()
	want, _ := with.Result()
	for i := range want.NumFlows() {
		g, w := got.Flow(i), want.Flow(i)
		if len(g.ThroughputGbps) != 0 || g.PeakGbps != 0 {
			t.Errorf("flow %d: throughput %v, peak %v without a series", i, g.ThroughputGbps, g.PeakGbps)
		}
		if w.PeakGbps == 0 {
			t.Errorf("flow %d: no peak with the series", i)
		}
		g.ThroughputGbps, g.PeakGbps = w.ThroughputGbps, w.PeakGbps
		if !reflect.DeepEqual(g, w) {
			t.Errorf("flow %d:\n%+v\n%+v", i, g, w)
		}
	}
}

// TestFlowsCounts: Counts and Key agree with Flow for every flow (NAKs,
// marks and retransmissions included), the flows past the bound too.
func TestFlowsCounts(t *testing.T) {
	path, _ := healthCapture(t)
	for _, maxFlows := range []int{0, 1} {
		s, err := OpenStream([]string{path}, StreamOptions{CheckCRC: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runFlows(s, nil, FlowsOptions{MaxFlows: maxFlows})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		var sum FlowCounts
		for i := range r.NumFlows() {
			h := r.Flow(i)
			want := FlowCounts{Packets: h.Packets, WireBytes: h.WireBytes, CNPs: h.CNPs, ECNCE: h.ECNCE,
				Retrans: h.PSN.Duplicates, PSNGaps: h.PSN.Gaps, Other: h.Key.Transport == "other"}
			for _, n := range h.NAKs {
				want.NAKs += n.Count
			}
			for _, n := range h.RNRNAKs {
				want.NAKs += n.Count
			}
			if got := r.Counts(i); got != want {
				t.Errorf("max flows %d, flow %d: Counts %+v, Flow %+v", maxFlows, i, got, want)
			}
			if got := r.Key(i); !reflect.DeepEqual(got, h.Key) {
				t.Errorf("max flows %d, flow %d: Key %+v, Flow %+v", maxFlows, i, got, h.Key)
			}
			sum.NAKs, sum.CNPs, sum.ECNCE, sum.Retrans, sum.PSNGaps = sum.NAKs+want.NAKs, sum.CNPs+want.CNPs,
				sum.ECNCE+want.ECNCE, sum.Retrans+want.Retrans, sum.PSNGaps+want.PSNGaps
		}
		if maxFlows == 0 && (sum.NAKs == 0 || sum.CNPs == 0 || sum.ECNCE == 0 || sum.Retrans == 0 || sum.PSNGaps == 0) {
			t.Errorf("the capture should exercise every count: %+v", sum)
		}
	}
}

// TestFlowsMeanRate: the mean leaves the last packet's bytes out, as the
// peak does: packets sent back to back at a rate read that rate (two of
// them read twice it with their bytes in), a flow of fewer than 100
// packets has its peak for its mean, with or without the series, a late
// packet (stamped before the latest) does not replace the latest's bytes,
// and the link rate caps the mean.
func TestFlowsMeanRate(t *testing.T) {
	for _, c := range []struct {
		name  string
		ts    []int64 // ns after testBaseNs; 1000 wire bytes each but the last, 500
		link  float64
		noThr bool
		want  float64 // Gb/s
	}{
		{name: "two at 10 Gb/s", ts: []int64{0, 800}, want: 10},
		{name: "ten at 10 Gb/s", ts: []int64{0, 800, 1600, 2400, 3200, 4000, 4800, 5600, 6400, 7200}, want: 10},
		{name: "no series", ts: []int64{0, 800, 1600}, noThr: true, want: 10},
		{name: "a late packet", ts: []int64{0, 800, 1600, 700}, want: float64(2500) * 8 / 1600},
		{name: "capped", ts: []int64{0, 800}, link: 4, want: 4},
	} {
		a := NewFlowsAnalysis(FlowsOptions{NoThroughput: c.noThr, LinkGbps: c.link})
		var p Packet
		for i, ts := range c.ts {
			oneFlowPacket(&p, 0)
			p.TsNs, p.PSN, p.WireBytes = testBaseNs+ts, uint32(i), 1000
			if i == len(c.ts)-1 {
				p.WireBytes = 500
			}
			a.Add(&p)
		}
		r, _ := a.Result()
		f := r.Flow(0)
		if math.Abs(f.MeanGbps-c.want) > 1e-9 {
			t.Errorf("%s: mean %v Gb/s, want %v", c.name, f.MeanGbps, c.want)
		}
		if !c.noThr && c.name != "a late packet" && f.PeakGbps != f.MeanGbps {
			t.Errorf("%s: peak %v, mean %v: a flow of fewer than 100 packets has its peak for its mean", c.name, f.PeakGbps, f.MeanGbps)
		}
	}
}

// TestFlowsMeanNotAbovePeak: a flow whose last packets, fewer than a peak
// window, come faster than any whole window (128 ACKs, the last 28 at
// twice the rate, as ibsim's incast2015 receiver sends them): its final
// peak joins them to the last whole window, so that its mean (139 against
// 126 kb/s before) is not above it; a report so far leaves them out.
func TestFlowsMeanNotAbovePeak(t *testing.T) {
	a := NewFlowsAnalysis(FlowsOptions{})
	var p Packet
	ts := int64(0)
	for i := range 128 {
		oneFlowPacket(&p, 0)
		p.TsNs, p.PSN, p.WireBytes = testBaseNs+ts, uint32(i), 30
		a.Add(&p)
		if i < 100 {
			ts += 2000
		} else {
			ts += 1000
		}
	}
	soFar, _ := a.result(false)
	final, _ := a.Result()
	f, s := final.Flow(0), soFar.Flow(0)
	if f.MeanGbps > f.PeakGbps || f.MeanGbps != s.MeanGbps {
		t.Errorf("final: mean %v Gb/s above the peak %v (so far: mean %v)", f.MeanGbps, f.PeakGbps, s.MeanGbps)
	}
	if want := float64(100*30*8) / 200_000; s.PeakGbps != want || s.PeakGbps >= f.PeakGbps {
		t.Errorf("so far: peak %v Gb/s, want %v, the whole window alone (final %v)", s.PeakGbps, want, f.PeakGbps)
	}
}

package analyze

import (
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

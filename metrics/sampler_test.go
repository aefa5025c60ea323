package metrics

import (
	"encoding/binary"
	"io"
	"math"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// steadySource sends flows RoCEv2 flows round robin, one packet every gapNs,
// each flow's PSNs in order (no loss, no resend): what a busy port looks
// like to the sampler.
type steadySource struct {
	memSource
	frame [][]byte
	psn   []uint32
	gapNs int64
	buf   []byte
}

// bthPSNAt is where testcap's RoCEv2 frames (Ethernet, IPv4, UDP) keep the
// BTH's PSN.
const bthPSNAt = 14 + 20 + 8 + 9

func newSteadySource(t *testing.T, flows, n int, gapNs int64) *steadySource {
	s := &steadySource{gapNs: gapNs, psn: make([]uint32, flows)}
	for i := range flows {
		s.frame = append(s.frame, testcap.RoCEFrame(t, testcap.Packet{Src: 1, Dst: 2, QP: uint32(0x100 + i), Op: 0x0a, Payload: 64, DMALen: 64}))
	}
	s.n = n
	return s
}

func (s *steadySource) Next() (capfile.Packet, error) {
	if s.i >= s.n {
		return capfile.Packet{}, io.EOF
	}
	j := s.i % len(s.frame)
	s.buf = append(s.buf[:0], s.frame[j]...)
	binary.BigEndian.PutUint32(s.buf[bthPSNAt-1:], s.psn[j]) // the byte before the PSN is reserved
	s.psn[j]++
	s.i++
	return capfile.Packet{Data: s.buf, TsNs: testcap.BaseNs + int64(s.i)*s.gapNs, WireLenBytes: len(s.buf)}, nil
}

// TestSamplingScalesCounts: up to SamplePps every packet is counted; above
// it one window in N is, each packet N times, N is served, and the skipped
// windows make no PSN gap, retransmission or long IPD. The estimates are
// off by at most the packets of one period (a period's counts are added
// in its window, wherever that falls), the gaps also by each window's
// first gap of each flow.
func TestSamplingScalesCounts(t *testing.T) {
	const flows = 100
	for _, c := range []struct {
		name      string
		gapNs     int64 // between packets
		n         int
		wantEvery uint64
	}{
		{"40,000 packets/s, every packet", 25_000, 20_000, 1},
		{"1,000,000 packets/s, one window in 20", 1_000, 3_000_000, 20},
	} {
		src := newSteadySource(t, flows, c.n, c.gapNs)
		l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet, SamplePps: 50_000, TopFlows: flows})
		if err != nil {
			t.Fatal(err)
		}
		l.Finish(runCapture(t, l, src))
		mf := gather(t, l)
		gauge := func(name string) float64 { return mf[name].GetMetric()[0].GetGauge().GetValue() }
		counter := func(name string) float64 { return mf[name].GetMetric()[0].GetCounter().GetValue() }
		sum := func(name string) (v float64) {
			for _, m := range mf[name].GetMetric() {
				v += m.GetCounter().GetValue()
			}
			return v
		}
		if got := gauge("ibscope_metrics_sampling_rate"); got != float64(c.wantEvery) {
			t.Errorf("%s: sampling rate %v, want %d", c.name, got, c.wantEvery)
		}
		period := float64(c.wantEvery) * sampleWindowNs / float64(c.gapNs) // packets
		if got := sum("ibscope_flow_packets_total"); math.Abs(got-float64(c.n)) > period || (c.wantEvery == 1 && got != float64(c.n)) {
			t.Errorf("%s: flow packets %v, want %d within %.0f", c.name, got, c.n, period)
		}
		if got := counter("ibscope_metrics_packets_analyzed_total"); got != sum("ibscope_flow_packets_total") {
			t.Errorf("%s: packets analysed %v, the flows' %v", c.name, got, sum("ibscope_flow_packets_total"))
		}
		if got := counter("ibscope_capture_bytes_captured_total"); got != float64(c.n*len(src.frame[0])) {
			t.Errorf("%s: captured bytes %v, want %d (every packet's, sampled or not)", c.name, got, c.n*len(src.frame[0]))
		}
		for _, name := range []string{"ibscope_flow_psn_gaps_total", "ibscope_flow_retransmissions_total", "ibscope_flow_naks_total"} {
			if got := sum(name); got != 0 {
				t.Errorf("%s: %s %v, want 0: the skipped windows are no loss", c.name, name, got)
			}
		}
		h := mf["ibscope_flow_ipd_seconds"].GetMetric()[0].GetHistogram()
		flowGapNs := float64(flows * c.gapNs)
		if mean := h.GetSampleSum() / float64(h.GetSampleCount()) * 1e9; math.Abs(mean-flowGapNs) > 1 {
			t.Errorf("%s: mean IPD %.0f ns, want %.0f (no gap across the skipped windows)", c.name, mean, flowGapNs)
		}
		// Each window also loses its flows' first gaps (they begin anew),
		// each counted N times.
		periods := float64(c.n) / max(period, 1)
		slack := period + float64(flows)*float64(c.wantEvery)*(periods+1)
		if c.wantEvery == 1 {
			slack = 0
		}
		if wantGaps := float64(c.n - flows); math.Abs(float64(h.GetSampleCount())-wantGaps) > slack {
			t.Errorf("%s: %d gaps, want %.0f within %.0f", c.name, h.GetSampleCount(), wantGaps, slack)
		}
	}
}

package metrics

import (
	"context"
	"io"
	"math"
	"net/http/httptest"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// memSource hands out frames, then io.EOF: a capture without a device.
// Packet i is stamped its frame's time plus i times stepNs (1 when 0).
type memSource struct {
	frames [][]byte
	ts     []int64
	i, n   int // next frame; frames to hand out (cycling)
	stepNs int64
}

func (s *memSource) Next() (capfile.Packet, error) {
	if s.i >= s.n {
		return capfile.Packet{}, io.EOF
	}
	j := s.i % len(s.frames)
	s.i++
	return capfile.Packet{Data: s.frames[j], TsNs: s.ts[j] + int64(s.i)*max(1, s.stepNs), WireLenBytes: len(s.frames[j])}, nil
}
func (s *memSource) LinkType() int                 { return decode.LinkTypeEthernet }
func (s *memSource) Stats() (capture.Stats, error) { return capture.Stats{}, nil }
func (s *memSource) Device() string                { return "mem" }
func (s *memSource) Close() error                  { return nil }

// flowFrames makes flows RoCE flows of packets packets each; flow i's
// packets have 64+i payload bytes, so the flows rank by bytes in QP order.
func flowFrames(t testing.TB, flows, packets int) *memSource {
	s := &memSource{}
	for i := range flows {
		for _, p := range testcap.Stream(packets, 1, 2, uint32(0x1000+i), 0, 64+i, testcap.BaseNs, func(int) int64 { return 1000 }) {
			s.frames = append(s.frames, testcap.RoCEFrame(t, p))
			s.ts = append(s.ts, p.TsNs)
		}
	}
	s.n = len(s.frames)
	return s
}

// runCapture runs capture.Run on src through l (nil: no metrics) and
// returns the report.
func runCapture(t testing.TB, l *Live, src capture.Source) capture.Report {
	w, err := capture.NewWriter(capture.WriterConfig{Path: "-", Stdout: io.Discard, LinkType: decode.LinkTypeEthernet, SnapLenBytes: 128})
	if err != nil {
		t.Fatal(err)
	}
	opts := capture.RunOptions{}
	if l != nil {
		src, opts.Status = l.Source(src), l.Status
	}
	rep, err := capture.Run(context.Background(), src, w, opts)
	if err != nil { // the source's io.EOF ends Run as a count would
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return rep
}

func gather(t testing.TB, l *Live) map[string]*dto.MetricFamily {
	mfs, err := l.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*dto.MetricFamily{}
	for _, f := range mfs {
		m[f.GetName()] = f
	}
	return m
}

func flowValue(f *dto.MetricFamily, flow string) (float64, bool) {
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "flow" && l.GetValue() == flow {
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

// TestTopFlowsAndOther: past TopFlows flows, the smallest are summed in
// flow="other", so the series stay TopFlows+1 however many flows come.
func TestTopFlowsAndOther(t *testing.T) {
	src := flowFrames(t, 50, 4)
	l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet, TopFlows: 10})
	if err != nil {
		t.Fatal(err)
	}
	rep := runCapture(t, l, src)
	l.Finish(rep)
	mf := gather(t, l)
	if n := len(mf["ibscope_flow_packets_total"].GetMetric()); n != 11 {
		t.Fatalf("%d flow series, want 10 and other", n)
	}
	if got, _ := flowValue(mf["ibscope_flow_packets_total"], "other"); got != 40*4 {
		t.Errorf(`flow="other" packets %v, want %d`, got, 40*4)
	}
	var sum float64
	for _, m := range mf["ibscope_flow_packets_total"].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	if sum != float64(src.n) || float64(rep.Written) != sum {
		t.Errorf("flow packets add up to %v, want %d (written %d)", sum, src.n, rep.Written)
	}
	// The device's totals do not depend on the flows' ranks.
	if got := mf["ibscope_metrics_packets_analyzed_total"].GetMetric()[0].GetCounter().GetValue(); got != sum {
		t.Errorf("packets analyzed %v, want %v", got, sum)
	}
	var wire float64
	for _, m := range mf["ibscope_flow_bytes_total"].GetMetric() {
		wire += m.GetCounter().GetValue()
	}
	if got := mf["ibscope_metrics_wire_bytes_analyzed_total"].GetMetric()[0].GetCounter().GetValue(); got != wire {
		t.Errorf("wire bytes analyzed %v, want %v (the flows')", got, wire)
	}
	if got := mf["ibscope_capture_stopped"].GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("ibscope_capture_stopped %v after Finish", got)
	}
	if got := mf["ibscope_capture_packets_captured_total"].GetMetric()[0].GetCounter().GetValue(); got != float64(src.n) {
		t.Errorf("captured %v, want %d", got, src.n)
	}
}

func TestIPDBuckets(t *testing.T) {
	for _, c := range []struct {
		spec analyze.HistSpec
		want []float64
		bad  bool
	}{
		{spec: analyze.HistSpec{Mode: analyze.ModeLinear, BinNs: 100, Bins: 3}, want: []float64{100, 200, 300}},
		{spec: analyze.HistSpec{Mode: analyze.ModeExp, BinNs: 100, Bins: 4}, want: []float64{100, 200, 400, 800}},
		{spec: analyze.HistSpec{Mode: analyze.ModeEdges, EdgesNs: []int64{0, 10, 50}}, want: []float64{10, 50}},
		{spec: analyze.HistSpec{Mode: analyze.ModeEdges, EdgesNs: []int64{10, 5}}, bad: true},
		{spec: analyze.HistSpec{Mode: analyze.ModeLinear, BinNs: 1, Bins: maxIPDBuckets + 1}, bad: true},
		{spec: analyze.HistSpec{Mode: analyze.ModeExp, BinNs: 1, Bins: 63}, bad: true},
	} {
		got, err := IPDBucketsNs(c.spec)
		if (err != nil) != c.bad {
			t.Errorf("%+v: error %v", c.spec, err)
			continue
		}
		if !c.bad && !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.spec, got, c.want)
		}
	}
	if b := DefaultIPDBucketsNs(); len(b) != DefaultIPDBuckets || b[0] != DefaultIPDFirstNs {
		t.Errorf("default buckets %v", b)
	}
}

// BenchmarkScrape1000Flows is one scrape of /metrics (text format) with
// 1,000 flows analysed and the default 100 top flows served;
// BenchmarkScrape1000FlowsAll serves all 1,000 (7,000 flow series), and
// BenchmarkScrape1000FlowsAllGzip gzips them as Prometheus asks.
func BenchmarkScrape1000Flows(b *testing.B)        { benchScrape(b, 1000, DefaultTopFlows, false) }
func BenchmarkScrape1000FlowsAll(b *testing.B)     { benchScrape(b, 1000, 1000, false) }
func BenchmarkScrape1000FlowsAllGzip(b *testing.B) { benchScrape(b, 1000, 1000, true) }

func benchScrape(b *testing.B, flows, top int, gzip bool) {
	src := flowFrames(b, flows, 2)
	l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet, TopFlows: top})
	if err != nil {
		b.Fatal(err)
	}
	l.Finish(runCapture(b, l, src))
	h := l.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/metrics", nil)
		if gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// benchLoop runs capture.Run over 1,000 flows at 500,000 packets a second
// (a packet every 2 us): without metrics (samplePps < 0), or with them,
// sampling above samplePps (0: every packet analysed).
func benchLoop(b *testing.B, samplePps int64) {
	src := flowFrames(b, 1000, 1)
	src.n, src.stepNs = b.N, 2000
	var l *Live
	if samplePps >= 0 {
		var err error
		if l, err = New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet, SamplePps: samplePps}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep := runCapture(b, l, src)
	b.StopTimer()
	b.ReportMetric(float64(rep.Written)/b.Elapsed().Seconds(), "pkt/s")
	if l != nil {
		l.Finish(rep)
	}
}

// BenchmarkCaptureLoop, BenchmarkCaptureLoopMetrics and
// BenchmarkCaptureLoopMetricsExact are capture.Run's cost per packet (pcap
// to io.Discard) without --metrics, with it (sampling: 1 window in 10 at
// this rate) and with every packet analysed (--metrics-sample-pps 0).
func BenchmarkCaptureLoop(b *testing.B)             { benchLoop(b, -1) }
func BenchmarkCaptureLoopMetrics(b *testing.B)      { benchLoop(b, DefaultSamplePps) }
func BenchmarkCaptureLoopMetricsExact(b *testing.B) { benchLoop(b, 0) }

// BenchmarkAnalyse is what the flow metrics add to the capture loop per
// packet (the lock, decode, flow lookup, counts, IPD), 1,000 flows at
// 500,000 packets a second.
func BenchmarkAnalyse(b *testing.B) {
	src := flowFrames(b, 1000, 1)
	l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet})
	if err != nil {
		b.Fatal(err)
	}
	var p capfile.Packet
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % len(src.frames)
		p = capfile.Packet{Data: src.frames[j], TsNs: src.ts[j] + int64(i)*2000, WireLenBytes: len(src.frames[j])}
		l.flowMu.Lock()
		l.count(&p, 1)
		l.flowMu.Unlock()
	}
	if l.analyzed == 0 {
		b.Fatal("no packet analysed")
	}
}

// TestIPDPerFlow: the histogram takes the gap from each packet to the
// next of its flow, none across flows: two flows of 5 packets 1,001 ns
// apart (memSource adds 1 ns a packet) give 8 gaps of 1,001 ns.
func TestIPDPerFlow(t *testing.T) {
	src := flowFrames(t, 2, 5)
	l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	l.Finish(runCapture(t, l, src))
	h := gather(t, l)["ibscope_flow_ipd_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 8 || math.Abs(h.GetSampleSum()-8*1001e-9) > 1e-15 {
		t.Errorf("IPD histogram: %d gaps adding up to %g s, want 8 and %g", h.GetSampleCount(), h.GetSampleSum(), 8*1001e-9)
	}
}

// TestScrapeDuringAnalysis: scrapes while the capture counts (go test
// -race checks that the flows are read under the lock, or only what never
// changes without it), and the totals are exact once the capture ends.
func TestScrapeDuringAnalysis(t *testing.T) {
	src := flowFrames(t, 300, 2)
	src.n = 100_000
	l, err := New(Config{Device: "mem", LinkType: decode.LinkTypeEthernet, TopFlows: 50})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan capture.Report)
	go func() { done <- runCapture(t, l, src) }()
	var rep capture.Report
	for scraping := true; scraping; {
		select {
		case rep = <-done:
			scraping = false
		default:
			gather(t, l)
		}
	}
	l.Finish(rep)
	mf := gather(t, l)
	var sum float64
	for _, m := range mf["ibscope_flow_packets_total"].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	if sum != float64(src.n) || float64(rep.Written) != float64(src.n) {
		t.Errorf("flow packets %v, want %d (written %d)", sum, src.n, rep.Written)
	}
}

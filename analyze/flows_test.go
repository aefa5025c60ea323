package analyze

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/protostate"
)

// healthCapture is one RC RDMA WRITE flow 1 -> 2 (QP 0x11) of 100 PSNs in
// messages of 10 packets, with AckReq on each message's last packet, and
// its ACK flow 2 -> 1 (QP 0x22): PSN 10 is lost, PSN 31 comes before 30,
// PSNs 20 and 21 are sent twice, 5 packets are ECN-CE marked, 1 has a bad
// ICRC; the ACK flow holds 9 ACKs 5 us after each request (one of them a
// PSN sequence NAK), an RNR NAK (timer 14), a remote access error NAK and
// 3 CNPs.
func healthCapture(t *testing.T) (string, []testcap.Packet) {
	var pkts []testcap.Packet
	ts := testcap.BaseNs
	emit := func(p testcap.Packet) {
		ts += 1000
		p.TsNs = ts
		pkts = append(pkts, p)
	}
	req := func(psn uint32) testcap.Packet {
		op := decode.Opcode(0x07)
		switch psn % 10 {
		case 0:
			op = 0x06
		case 9:
			op = 0x08
		}
		return testcap.Packet{Src: 1, Dst: 2, QP: 0x11, PSN: psn, Op: op, Payload: 1024, DMALen: 10240, AckReq: psn%10 == 9}
	}
	ack := func(psn uint32, syndrome uint8) testcap.Packet {
		return testcap.Packet{Src: 2, Dst: 1, QP: 0x22, PSN: psn, Op: 0x11, Syndrome: syndrome}
	}
	for psn := uint32(0); psn < 100; psn++ {
		switch psn {
		case 10:
			continue // lost
		case 30:
			emit(req(31))
			emit(req(30))
			continue
		case 31:
			continue
		case 22:
			emit(req(20)) // go-back: 20 and 21 again
			emit(req(21))
		}
		p := req(psn)
		if psn >= 50 && psn < 55 {
			p.ECN = 3
		}
		p.BadICRC = psn == 77
		emit(p)
		if psn%10 == 9 {
			syn := uint8(0)
			if psn == 19 {
				syn = 0x60 // NAK PSN sequence error at 20: acknowledges up to 19
				emit(ack(20, syn))
				continue
			}
			emit(ack(psn, syn))
		}
	}
	emit(ack(99, 0x20|14)) // RNR NAK, timer 14
	emit(ack(99, 0x60|2))  // remote access error
	for range 3 {
		emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, Op: decode.OpcodeCNP})
	}
	return testcap.Write(t, "health.pcap", false, pkts), pkts
}

// flowsOut is a flows result with every flow made into its FlowHealth.
type flowsOut struct {
	*FlowsReport
	Flows []*FlowHealth
}

func runFlowsFiles(t *testing.T, paths ...string) *flowsOut {
	t.Helper()
	return runFlowsWith(t, StreamOptions{CheckCRC: true}, paths...)
}

// runFlowsWith runs the flows analysis over paths read with opts.
func runFlowsWith(t *testing.T, opts StreamOptions, paths ...string) *flowsOut {
	t.Helper()
	s, err := OpenStream(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := runFlows(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &flowsOut{r, r.Top(0)}
}

func TestFlowsHealth(t *testing.T) {
	path, pkts := healthCapture(t)
	r := runFlowsFiles(t, path)
	if len(r.Flows) != 2 {
		t.Fatalf("%d flows", len(r.Flows))
	}
	w, a := r.Flows[0], r.Flows[1]
	if w.Key.String() != "rocev2 192.168.7.1>192.168.7.2 qp 0x000011" {
		t.Fatalf("first flow %s", w.Key)
	}
	if w.Packets != 101 || w.Messages != (Messages{First: 9, Middle: 80, Last: 10, Total: 9, Resent: 1}) {
		t.Errorf("packets %d, messages %+v", w.Packets, w.Messages)
	}
	// 31 before 30: a gap of one (30) that 30 then fills; 10 is never seen.
	want := protostate.PSNStats{Gaps: 2, Missing: 2, OutOfOrder: 1, Duplicates: 2, Lost: 1}
	if w.PSN != want {
		t.Errorf("PSN %+v, want %+v", w.PSN, want)
	}
	if w.ECNCE != 5 || w.ICRCBad != 1 || w.VCRCBad != 0 || w.CNPs != 0 {
		t.Errorf("ecn %d icrc %d vcrc %d cnp %d", w.ECNCE, w.ICRCBad, w.VCRCBad, w.CNPs)
	}
	if a.ResponsePSN != (protostate.PSNStats{}) || a.PSN != (protostate.PSNStats{}) {
		t.Errorf("ack flow: coalesced ACKs judged as anomalies: requests %+v, responses %+v", a.PSN, a.ResponsePSN)
	}
	if a.Acks != 9 || a.CNPs != 3 || a.Packets != 15 {
		t.Errorf("ack flow: acks %d cnps %d packets %d", a.Acks, a.CNPs, a.Packets)
	}
	wantNAKs := []NAKCount{{0, "PSN_SEQUENCE_ERROR", 1}, {2, "REMOTE_ACCESS_ERROR", 1}}
	if !slices.Equal(a.NAKs, wantNAKs) || len(a.RNRNAKs) != 1 || a.RNRNAKs[0] != (RNRCount{Timer: 14, DelayNs: 1_280_000, Count: 1}) {
		t.Errorf("NAKs %+v RNR %+v", a.NAKs, a.RNRNAKs)
	}
	// Every request with AckReq is answered 1 us later (the next packet).
	if w.AckLatencyNs == nil || w.AckLatencyNs.Count != 10 || w.AckLatencyNs.Min != 1000 || w.AckLatencyNs.Max != 1000 {
		t.Errorf("ACK latency %+v", w.AckLatencyNs)
	}
	if w.AckPeer == nil || w.AckPeer.String() != a.Key.String() {
		t.Errorf("ack peer %v", w.AckPeer)
	}
	var bytes, frameBytes uint64
	for _, p := range pkts {
		if p.Src == 1 {
			bytes += uint64(len(testcap.RoCEFrame(t, p)) + 24)
			frameBytes += uint64(len(testcap.RoCEFrame(t, p)))
		}
	}
	if w.WireBytes != bytes || w.FrameBytes != frameBytes {
		t.Errorf("wire bytes %d, frame bytes %d; want %d and %d", w.WireBytes, w.FrameBytes, bytes, frameBytes)
	}
	var sum float64
	for _, g := range w.ThroughputGbps {
		sum += g * float64(r.ThroughputBinNs) / 8
	}
	if int64(sum+0.5) != int64(bytes) {
		t.Errorf("throughput series holds %v bytes, want %d", sum, bytes)
	}
}

func TestRateSeriesCoarsens(t *testing.T) {
	var r testSeries
	var total uint64
	for i := range int64(5000) {
		r.add(0, i*1000, 10)
		total += 10
	}
	if len(r.bytes()) > maxSeriesBins || r.binNs() != 16000 {
		t.Errorf("%d bins of %d ns", len(r.bytes()), r.binNs())
	}
	var got uint64
	for _, b := range r.bytes() {
		got += b
	}
	if got != total {
		t.Errorf("series holds %d bytes, want %d", got, total)
	}
}

// A series holds only the bins from its first packet to its last, numbered
// from the common origin; coarsening keeps each byte in the bin of its time.
func TestRateSeriesLazy(t *testing.T) {
	var r testSeries
	r.add(0, 300_500, 7) // bin 300
	if r.startBin != 300 || len(r.bytes()) != 1 {
		t.Fatalf("one packet: bins %d.. (%d of them)", r.startBin, len(r.bytes()))
	}
	r.add(0, 299_000, 1) // late: bin 299, before the first
	r.add(0, 303_000, 2) // bin 303
	if r.startBin != 299 || !slices.Equal(r.bytes(), []uint64{1, 7, 0, 0, 2}) {
		t.Fatalf("bins from %d: %v", r.startBin, r.bytes())
	}
	r.add(0, 2_100_000, 4) // bin 2100: three coarsenings, to 8 us bins
	if r.binNs() != 8000 || r.startBin != 37 || r.bytes()[0] != 10 || r.bytes()[len(r.bytes())-1] != 4 || int(r.startBin)+len(r.bytes()) != 263 {
		t.Fatalf("after coarsening: %d ns bins from %d: %v", r.binNs(), r.startBin, r.bytes())
	}
	g := r.gbps(16000)
	if len(g) != 132 || g[18] != 10*8/16000.0 || g[131] != 4*8/16000.0 {
		t.Errorf("re-binned to 16 us: %d bins, bin 18 %v, bin 131 %v", len(g), g[18], g[131])
	}
}

// The ring of requests waiting for an ACK grows, keeps order across its
// growth and wrap, and drops the oldest beyond pendingAcks.
func TestWaitRing(t *testing.T) {
	var f ackTiming
	for psn := range uint32(40) {
		f.wait(psn, int64(psn))
	}
	if n := f.covered(19, true); n != 20 {
		t.Fatalf("ACK of 19 covers %d, want 20", n)
	}
	f.waitHead, f.waitN = (f.waitHead+20)%int32(len(f.waitReqs)), f.waitN-20
	for psn := uint32(40); psn < 40+2000; psn++ {
		f.wait(psn&decode.PSNMask, int64(psn))
	}
	if f.waitN != pendingAcks || len(f.waitReqs) != pendingAcks {
		t.Fatalf("%d waiting in a ring of %d", f.waitN, len(f.waitReqs))
	}
	if oldest := f.waitReqs[f.waitHead].psn; oldest != 40+2000-pendingAcks {
		t.Errorf("oldest waiting PSN %d", oldest)
	}
	if n := f.covered(2039, true); n != pendingAcks {
		t.Errorf("last ACK covers %d", n)
	}
}

// TestFlowsKnownTruth runs flows over every generated capture whose
// expect.json entry says what flows must find (testdata/gen writes them
// with known losses and retransmissions): packets, ACKs and both PSN
// sequences of each flow.
func TestFlowsKnownTruth(t *testing.T) {
	const pcaps = "../testdata/pcaps"
	b, err := os.ReadFile(filepath.Join(pcaps, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]struct {
		Flows []struct {
			Flow        string              `json:"flow"`
			Packets     uint64              `json:"packets"`
			Acks        uint64              `json:"acks"`
			PSN         protostate.PSNStats `json:"psn"`
			ResponsePSN protostate.PSNStats `json:"response_psn"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, e := range expect {
		if len(e.Flows) == 0 {
			continue
		}
		n++
		r := runFlowsFiles(t, filepath.Join(pcaps, name))
		got := map[string]*FlowHealth{}
		for _, f := range r.Flows {
			got[f.Key.String()] = f
		}
		if len(got) != len(e.Flows) {
			t.Errorf("%s: %d flows, want %d", name, len(got), len(e.Flows))
		}
		for _, w := range e.Flows {
			f := got[w.Flow]
			if f == nil {
				t.Errorf("%s: no flow %s", name, w.Flow)
				continue
			}
			if f.Packets != w.Packets || f.Acks != w.Acks || f.PSN != w.PSN || f.ResponsePSN != w.ResponsePSN {
				t.Errorf("%s: %s: %d packets, %d ACKs, requests %+v, responses %+v;\nwant %d, %d, %+v, %+v", name, w.Flow,
					f.Packets, f.Acks, f.PSN, f.ResponsePSN, w.Packets, w.Acks, w.PSN, w.ResponsePSN)
			}
		}
	}
	if n == 0 {
		t.Error("expect.json holds no capture with flows truth")
	}
}

// testSeries is a rateSeries with the total its owner would keep.
type testSeries struct {
	rateSeries
	total uint64
}

func (s *testSeries) add(originNs, tsNs int64, b uint64) {
	s.rateSeries.add(max((tsNs-originNs)/DefaultThroughputBinNs, 0), b, s.total)
	s.total += b
}

func (s *testSeries) bytes() []uint64 { return s.bins(s.total) }

func (s *testSeries) gbps(binNs int64) []float64 { return s.rateSeries.gbps(binNs, s.total, 0) }

// TestSeriesCarryPastLink: with the link rate known, what a bin holds past
// it goes into the bins after it (a packet stamped near a bin's end is on
// the wire in the next), after the last bin into new ones, and no byte is
// lost; without it the bins are as counted.
func TestSeriesCarryPastLink(t *testing.T) {
	var s testSeries
	// 1 us bins: 1,500 bytes (12 Gb/s), 500 (4), 1,250 (10) on a 10 Gb/s link.
	s.add(0, 100, 1500)
	s.add(0, 1100, 500)
	s.add(0, 2900, 1250)
	if got := s.rateSeries.gbps(1000, s.total, 10); len(got) != 3 || got[0] != 10 || got[1] != 6 || got[2] != 10 {
		t.Errorf("carried: %v, want [10 6 10]", got)
	}
	s.add(0, 2950, 250) // bin 2 now 12 Gb/s: 2 carried into a new bin
	if got := s.rateSeries.gbps(1000, s.total, 10); len(got) != 4 || got[2] != 10 || math.Abs(got[3]-2) > 1e-9 {
		t.Errorf("carried past the last bin: %v, want [10 6 10 2]", got)
	}
	if got := s.gbps(1000); got[0] != 12 || got[2] != 12 || len(got) != 3 {
		t.Errorf("link unknown: %v, want [12 4 12]", got)
	}
	sum := 0.0
	for _, g := range s.rateSeries.gbps(1000, s.total, 10) {
		sum += g * 1000 / 8
	}
	if math.Abs(sum-float64(s.total)) > 1e-6 {
		t.Errorf("%v bytes in the carried series, %d counted", sum, s.total)
	}
}

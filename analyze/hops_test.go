package analyze

import (
	"encoding/binary"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// testHop is one hop's metadata in a test probe.
type testHop struct {
	dev       uint32
	port      uint16
	resNs     uint32
	occupancy uint32
	ce        bool
}

// ifaProbeFrame is an IFA 2.0 probe on an RDMA WRITE from host src to
// host dst carrying hops, the newest first; a hop's occupancy is its first
// opaque word.
func ifaProbeFrame(t testing.TB, src, dst byte, qp uint32, hops []testHop) []byte {
	var md []decode.IFAHop
	for _, h := range hops {
		e := decode.IFAHop{LNS: 1, DeviceID: h.dev, IPTTL: 60, EgressPortSpeed: 4, EgressPort: h.port, IngressPort: 1, ResidenceNs: h.resNs}
		if h.ce {
			e.Congestion = 3
		}
		binary.BigEndian.PutUint32(e.Opaque[:], h.occupancy)
		md = append(md, e)
	}
	return testcap.IFAProbe(t, testcap.Packet{Src: src, Dst: dst, QP: qp, Op: 0x0A, Payload: 64, DMALen: 64}, md) // RDMA WRITE Only
}

func runHops(t *testing.T, frames []rawFrame, o HopsOptions) *HopsReport {
	t.Helper()
	s, err := OpenStream([]string{writeFrames(t, frames)}, StreamOptions{Ethernet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := NewHopsAnalysis(o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, a, RunOptions[*HopsReport]{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hopsFrames: flow A (host 1, QP 0x11) sends 4 probes 1 us apart through
// switches 0xA1 port 1 (100 ns), 0xA2 port 2 (1000, 1100, 1200, 1300 ns,
// occupancy 0, 10, 20, 30; the last two CE) and 0xA3 port 3 (200 ns);
// flow B (host 2) sends 2 through 0xA3 port 3 (5000 ns) and 0xA4 port 4
// (10 ns). A plain RoCE packet between them carries no hops.
func hopsFrames(t *testing.T) []rawFrame {
	t0 := testcap.BaseNs
	var f []rawFrame
	for i := range 4 {
		f = append(f, rawFrame{t0 + int64(i)*1000, ifaProbeFrame(t, 1, 9, 0x11, []testHop{
			{0xA3, 3, 200, 0, false}, {0xA2, 2, uint32(1000 + 100*i), uint32(10 * i), i >= 2}, {0xA1, 1, 100, 0, false}})})
	}
	f = append(f, rawFrame{t0 + 4500, roceAt(t, 1, 9, 0x11, 0, -1)})
	for i := range 2 {
		f = append(f, rawFrame{t0 + 5000 + int64(i), ifaProbeFrame(t, 2, 9, 0x12, []testHop{{0xA4, 4, 10, 0, false}, {0xA3, 3, 5000, 7, false}})})
	}
	return f
}

func findPort(t *testing.T, r *HopsReport, dev uint32, port uint16) HopPort {
	t.Helper()
	for _, p := range r.Ports {
		if p.DeviceID == dev && p.EgressPort == port {
			return p
		}
	}
	t.Fatalf("no port dev 0x%x port %d in %+v", dev, port, r.Ports)
	return HopPort{}
}

func TestHopsPorts(t *testing.T) {
	r := runHops(t, hopsFrames(t), HopsOptions{IntervalNs: 2000})
	if r.Probes != 6 || r.HopRecords != 16 || len(r.Ports) != 4 || r.OriginNs != testcap.BaseNs || r.IntervalNs != 2000 {
		t.Fatalf("probes %d, records %d, ports %d, origin %d, interval %d", r.Probes, r.HopRecords, len(r.Ports), r.OriginNs, r.IntervalNs)
	}
	// Ports by residence time: 0xA3 (10,800 ns), 0xA2 (4,600), 0xA1, 0xA4.
	if r.Ports[0].DeviceID != 0xA3 || r.Ports[1].DeviceID != 0xA2 || r.Ports[2].DeviceID != 0xA1 || r.Ports[3].DeviceID != 0xA4 {
		t.Errorf("port order %v %v %v %v", r.Ports[0].HopID, r.Ports[1].HopID, r.Ports[2].HopID, r.Ports[3].HopID)
	}
	p := findPort(t, r, 0xA2, 2)
	if p.LNS != 1 || p.Records != 4 || p.Congested != 2 || p.ResidenceNs != (ValueStats{1000, 1300, 1150}) || p.Occupancy != (ValueStats{0, 30, 15}) {
		t.Errorf("port 0xA2/2: %+v", p)
	}
	// Default residence bins: exponential from 64 ns, 27 of them, to 2^32.
	h := p.ResidenceHistogram
	if h.Mode != ModeExp || len(h.Bins) != 27 || h.Bins[26].HiNs != 1<<32 {
		t.Errorf("residence bins: %s, %d, last %+v", h.Mode, len(h.Bins), h.Bins[len(h.Bins)-1])
	}
	counts := map[int64]uint64{}
	for _, b := range h.Bins {
		if b.Count > 0 {
			counts[b.LoNs] = b.Count
		}
	}
	if len(counts) != 2 || counts[512] != 1 || counts[1024] != 3 {
		t.Errorf("residence counts by bin start: %v, want 512:1 1024:3", counts)
	}
	// Occupancy from 1: [0,1) holds the 0, [8,16) the 10, [16,32) 20 and 30.
	occ := map[int64]uint64{}
	for _, b := range p.OccupancyHistogram.Bins {
		if b.Count > 0 {
			occ[b.Lo] = b.Count
		}
	}
	if len(occ) != 3 || occ[0] != 1 || occ[8] != 1 || occ[16] != 2 {
		t.Errorf("occupancy counts by bin start: %v", occ)
	}
	// The series, 2 us intervals: probes 0 and 1, then 2 and 3.
	want := []HopPoint{{testcap.BaseNs, 2, 1050, 1100, 5, 10}, {testcap.BaseNs + 2000, 2, 1250, 1300, 25, 30}}
	if len(p.Series) != 2 || p.Series[0] != want[0] || p.Series[1] != want[1] {
		t.Errorf("series %+v, want %+v", p.Series, want)
	}
	if p3 := findPort(t, r, 0xA3, 3); p3.Records != 6 || p3.ResidenceNs.Mean != float64(4*200+2*5000)/6 {
		t.Errorf("port 0xA3/3: %+v", p3.ResidenceNs)
	}
}

func TestHopsWorstHop(t *testing.T) {
	r := runHops(t, hopsFrames(t), HopsOptions{})
	if len(r.Flows) != 2 {
		t.Fatalf("flows %+v", r.Flows)
	}
	// Flow B: 10,020 ns over 2 probes first; its worst hop is 0xA3.
	b, a := r.Flows[0], r.Flows[1]
	if b.Key.Src != "192.168.7.2" || b.Probes != 2 || b.WorstHop.DeviceID != 0xA3 || b.WorstHop.ResidenceNs != 10_000 || b.MeanPathResidenceNs != 5010 {
		t.Errorf("flow B: %+v", b)
	}
	if a.Key.Src != "192.168.7.1" || a.Probes != 4 || len(a.Hops) != 3 || a.MeanPathResidenceNs != 1450 {
		t.Errorf("flow A: %+v", a)
	}
	w := a.WorstHop
	if w.DeviceID != 0xA2 || w.EgressPort != 2 || w.Records != 4 || w.ResidenceNs != 4600 || w.MeanResidenceNs != 1150 || w.MaxResidenceNs != 1300 || w.Share != 4600.0/5800 {
		t.Errorf("flow A's worst hop: %+v", w)
	}
	if a.Hops[1].DeviceID != 0xA3 || a.Hops[2].DeviceID != 0xA1 {
		t.Errorf("flow A's hops: %+v", a.Hops)
	}
}

// Linear and free-edge bins count the same residences.
func TestHopsHistogramModes(t *testing.T) {
	lin := runHops(t, hopsFrames(t), HopsOptions{Residence: HistSpec{Mode: ModeLinear, BinNs: 500, Bins: 4}})
	h := findPort(t, lin, 0xA2, 2).ResidenceHistogram
	if len(h.Bins) != 4 || h.Bins[2].Count != 4 || h.Above != 0 {
		t.Errorf("linear: %+v", h)
	}
	if h := findPort(t, lin, 0xA3, 3).ResidenceHistogram; h.Bins[0].Count != 4 || h.Above != 2 {
		t.Errorf("linear, 0xA3: %+v", h)
	}
	edges := runHops(t, hopsFrames(t), HopsOptions{Residence: HistSpec{Mode: ModeEdges, EdgesNs: []int64{150, 1150, 10_000}},
		Occupancy: HistSpec{Mode: ModeLinear, BinNs: 10, Bins: 2}})
	p := findPort(t, edges, 0xA2, 2)
	if h := p.ResidenceHistogram; h.Bins[0].Count != 2 || h.Bins[1].Count != 2 || h.Below != 0 {
		t.Errorf("edges: %+v", h)
	}
	if h := findPort(t, edges, 0xA1, 1).ResidenceHistogram; h.Below != 4 {
		t.Errorf("edges, 0xA1: %+v", h)
	}
	if o := p.OccupancyHistogram; o.Bins[0].Count != 1 || o.Bins[1].Count != 1 || o.Above != 2 {
		t.Errorf("occupancy, linear: %+v", o)
	}
	if _, err := NewHopsAnalysis(HopsOptions{Residence: HistSpec{Mode: ModeLinear}}); err == nil {
		t.Error("linear bins without a width accepted")
	}
	if _, err := NewHopsAnalysis(HopsOptions{IntervalNs: -1}); err == nil {
		t.Error("negative interval accepted")
	}
}

// A series longer than 512 intervals doubles its interval; every record
// stays counted, and a report so far changes nothing.
func TestHopsSeriesBounded(t *testing.T) {
	var f []rawFrame
	for i := range 600 {
		f = append(f, rawFrame{testcap.BaseNs + int64(i)*1000, ifaProbeFrame(t, 1, 9, 0x11, []testHop{{0xA1, 1, uint32(i), 0, false}})})
	}
	s, err := OpenStream([]string{writeFrames(t, f)}, StreamOptions{Ethernet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := NewHopsAnalysis(HopsOptions{})
	reports := 0
	r, err := Run(s, a, RunOptions[*HopsReport]{EveryNs: 100_000, OnReport: func(int64, *HopsReport, error) { reports++ }})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Ports[0]
	var n uint32
	for _, pt := range p.Series {
		n += pt.Records
	}
	if r.IntervalNs != 2000 || len(p.Series) != 300 || n != 600 || p.Series[299].MaxResidenceNs != 599 || reports != 5 {
		t.Errorf("interval %d, %d points, %d records, last %+v, %d reports so far", r.IntervalNs, len(p.Series), n, p.Series[len(p.Series)-1], reports)
	}
}

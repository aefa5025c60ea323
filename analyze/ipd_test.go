package analyze

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/protostate"
)

// flowList builds every flow of a (small) result.
func flowList(r *IPDReport) []*IPDFlow {
	out := make([]*IPDFlow, r.NumFlows())
	for i := range out {
		out[i] = r.Flow(i)
	}
	return out
}

func runIPDFiles(t *testing.T, cfg IPDOptions, paths ...string) (*IPDReport, error) {
	t.Helper()
	s, err := OpenStream(paths, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return runIPD(s, cfg, nil)
}

// The study's transfer: 2074-byte native IB packets (2048 bytes of payload)
// at SDR 4x, spaced exactly 2074 ns with some 3 us, 5 us and a 320 us
// outlier: exact counts per bin and exact percentiles.
func TestIPDStudyExact(t *testing.T) {
	gaps := map[int]int64{100: 3000, 200: 3000, 300: 5000, 400: 320_000}
	pkts := testcap.Stream(1000, 1, 2, 0x12, 0, 2048, testcap.BaseNs, func(i int) int64 {
		if g, ok := gaps[i]; ok {
			return g
		}
		return 2074
	})
	path := testcap.Write(t, "study.pcap", true, pkts)
	sdr, _ := protostate.ParseLinkRate("SDR")
	r, err := runIPDFiles(t, IPDOptions{Hist: HistSpec{Mode: ModeLinear, BinNs: 1000, Bins: 10}, DataGbps: sdr.DataGbps(4), RateName: "SDR 4x"}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(flowList(r)) != 1 {
		t.Fatalf("%d flows, want 1", len(flowList(r)))
	}
	f := flowList(r)[0]
	if f.Packets != 1000 || f.IPDNs.Count != 999 {
		t.Errorf("packets %d, IPDs %d", f.Packets, f.IPDNs.Count)
	}
	// The first packet's RETH adds 16 bytes: 2074.016 on average.
	if f.MeanWireBytes < 2074 || f.MeanWireBytes > 2074.1 || f.ExpectedIPDNs != 2074 || f.Ratio != 1 {
		t.Errorf("wire %v bytes, expected %d ns, ratio %v", f.MeanWireBytes, f.ExpectedIPDNs, f.Ratio)
	}
	want := make([]uint64, 10)
	want[2], want[3], want[5] = 995, 2, 1
	got := make([]uint64, 10)
	for i, b := range f.Histogram.Bins {
		got[i] = b.Count
		if b.LoNs != int64(i)*1000 || b.HiNs != int64(i+1)*1000 {
			t.Errorf("bin %d is [%d, %d)", i, b.LoNs, b.HiNs)
		}
	}
	if !slices.Equal(got, want) || f.Histogram.Above != 1 || f.Histogram.Below != 0 {
		t.Errorf("bins %v above %d, want %v above 1", got, f.Histogram.Above, want)
	}
	s := f.IPDNs
	if s.Min != 2074 || s.P50 != 2074 || s.P99 != 2074 || s.P999 != 320_000 || s.Max != 320_000 || s.P90 != 2074 {
		t.Errorf("figures %+v", s)
	}
	if r.ResolutionNs != 1 {
		t.Errorf("resolution %d ns, want 1", r.ResolutionNs)
	}
	if f.Key.String() != "ib lid 1>2 qp 0x000012" {
		t.Errorf("key %q", f.Key)
	}
}

func TestIPDGroupingAndOpcodes(t *testing.T) {
	a := testcap.Stream(100, 1, 3, 0x10, 0, 256, testcap.BaseNs, func(int) int64 { return 4000 })
	b := testcap.Stream(100, 2, 3, 0x20, 0, 256, testcap.BaseNs+2000, func(int) int64 { return 4000 })
	var acks []testcap.Packet
	for i := range 10 {
		acks = append(acks, testcap.Packet{TsNs: testcap.BaseNs + int64(i)*40_000 + 100, Src: 3, Dst: 1, QP: 0x30, PSN: uint32(i * 10), Op: 0x11})
	}
	all := append(append(a, b...), acks...)
	slices.SortStableFunc(all, func(x, y testcap.Packet) int { return int(x.TsNs - y.TsNs) })
	path := testcap.Write(t, "two.pcap", false, all)

	r, err := runIPDFiles(t, IPDOptions{}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(flowList(r)) != 2 || flowList(r)[0].IPDNs.P50 != 4000 || r.Counted != 200 {
		t.Fatalf("by flow: %d flows, counted %d", len(flowList(r)), r.Counted)
	}
	r, err = runIPDFiles(t, IPDOptions{By: ByLink}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(flowList(r)) != 1 || flowList(r)[0].IPDNs.P50 != 2000 || flowList(r)[0].Key.DestQP != nil || flowList(r)[0].Key.Dst != "192.168.7.3" {
		t.Fatalf("by link: %+v", flowList(r)[0])
	}
	r, err = runIPDFiles(t, IPDOptions{Opcodes: []decode.Opcode{0x11}}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(flowList(r)) != 1 || flowList(r)[0].IPDNs.P50 != 40_000 || r.Opcodes[0] != "RC_ACKNOWLEDGE" {
		t.Fatalf("acks only: %d flows, %+v", len(flowList(r)), flowList(r)[0].IPDNs)
	}
}

// MADs (UD SENDs to QP 0 and 1: subnet management, SA, rdma_cm's CM) are
// no data: by default they are not counted, so that one between a link's
// data packets does not cut a delay in two (--by link); the count says how
// many were left out when nothing else was, and --opcodes counts them.
func TestIPDLeavesMADsOut(t *testing.T) {
	data := testcap.Stream(50, 1, 3, 0x10, 0, 256, testcap.BaseNs, func(int) int64 { return 4000 })
	var mads []testcap.Packet
	for i := range 5 {
		for _, qp := range []uint32{0, 1} {
			mads = append(mads, testcap.Packet{TsNs: testcap.BaseNs + int64(i)*40_000 + 1000 + int64(qp)*100, Src: 1, Dst: 3, QP: qp, Op: 0x64, Payload: 256}) // UD SEND_ONLY
		}
	}
	all := append(slices.Clone(data), mads...)
	slices.SortStableFunc(all, func(x, y testcap.Packet) int { return int(x.TsNs - y.TsNs) })
	path := testcap.Write(t, "mads.pcap", false, all)
	r, err := runIPDFiles(t, IPDOptions{By: ByLink}, path)
	if err != nil {
		t.Fatal(err)
	}
	if f := flowList(r); len(f) != 1 || r.Counted != 50 || f[0].IPDNs.Min != 4000 || f[0].IPDNs.Max != 4000 {
		t.Fatalf("by link: counted %d, %+v", r.Counted, f)
	}
	r, err = runIPDFiles(t, IPDOptions{By: ByLink, Opcodes: allOpcodes()}, path)
	if err != nil {
		t.Fatal(err)
	}
	if f := flowList(r); r.Counted != 60 || f[0].IPDNs.Min >= 4000 {
		t.Fatalf("with --opcodes: counted %d, %+v", r.Counted, f[0].IPDNs)
	}
	_, err = runIPDFiles(t, IPDOptions{}, testcap.Write(t, "only.pcap", false, mads))
	var ne *NoIPDError
	if !errors.As(err, &ne) || ne.MADs != 10 || ne.Counted != 0 || ne.Found() != "10 MADs (UD SENDs to QP 0 or 1)" {
		t.Fatalf("MADs only: %v", err)
	}
}

// A capture stamped in whole microseconds cannot resolve sub-microsecond
// IPDs: the resolution is detected and finer bins are refused.
func TestIPDResolutionRule(t *testing.T) {
	pkts := testcap.Stream(200, 1, 2, 5, 0, 512, testcap.BaseNs, func(i int) int64 { return 2074 })
	micro := testcap.WriteMicro(t, "micro.pcap", pkts)
	_, err := runIPDFiles(t, IPDOptions{Hist: HistSpec{BinNs: 100}}, micro)
	if err == nil || !strings.Contains(err.Error(), "finer than the capture's timestamp resolution 1us") {
		t.Fatalf("100 ns bins on a microsecond pcap: %v", err)
	}
	r, err := runIPDFiles(t, IPDOptions{}, micro)
	if err != nil {
		t.Fatal(err)
	}
	if r.ResolutionNs != 1000 || flowList(r)[0].Histogram.Bins[1].HiNs-flowList(r)[0].Histogram.Bins[1].LoNs != 1000 {
		t.Errorf("resolution %d, bins %+v", r.ResolutionNs, flowList(r)[0].Histogram.Bins[:2])
	}
	// Microsecond stamps in a nanosecond file: detected from the data.
	for i := range pkts {
		pkts[i].TsNs = pkts[i].TsNs / 1000 * 1000
	}
	nano := testcap.Write(t, "nano-us.pcap", false, pkts)
	if _, err := runIPDFiles(t, IPDOptions{Hist: HistSpec{Mode: ModeEdges, EdgesNs: []int64{0, 500, 1000, 5000}}}, nano); err == nil {
		t.Error("500 ns edges accepted on microsecond data")
	}
	r, err = runIPDFiles(t, IPDOptions{Hist: HistSpec{Mode: ModeExp, BinNs: 1000, Bins: 4}}, nano)
	if err != nil {
		t.Fatal(err)
	}
	if r.ResolutionNs != 1000 || flowList(r)[0].Histogram.Bins[3].HiNs != 8000 {
		t.Errorf("exp on us data: res %d, bins %+v", r.ResolutionNs, flowList(r)[0].Histogram.Bins)
	}
	// 2074 ns stamped in us: 2000 or 3000, counted in [2us,4us).
	if b := flowList(r)[0].Histogram.Bins; b[2].Count != 199 {
		t.Errorf("exp bins %+v", b)
	}
}

func TestIPDTwoPhases(t *testing.T) {
	pkts := testcap.Stream(2000, 1, 2, 7, 0, 2048, testcap.BaseNs, func(i int) int64 {
		if i >= 1200 {
			return 4148
		}
		return 2074
	})
	path := testcap.Write(t, "phases.pcap", true, pkts)
	r, err := runIPDFiles(t, IPDOptions{Phases: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	ph := flowList(r)[0].Phases
	if len(ph) != 2 || ph[0].Packets != 1200 || ph[1].Packets != 800 || ph[0].MedianIPDNs != 2074 || ph[1].MedianIPDNs != 4148 {
		t.Fatalf("phases %+v", ph)
	}
	if ph[1].StartNs != pkts[1200].TsNs || ph[0].EndNs != pkts[1199].TsNs {
		t.Errorf("boundary at %d, want %d", ph[1].StartNs, pkts[1200].TsNs)
	}
}

// Out-of-order timestamps are counted and located, sorted within the
// window, and never give a negative IPD; a packet beyond the window is late.
func TestIPDOutOfOrder(t *testing.T) {
	pkts := testcap.Stream(100, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	pkts[10], pkts[11] = pkts[11], pkts[10]
	path := testcap.Write(t, "ooo.pcap", false, pkts)
	r, err := runIPDFiles(t, IPDOptions{}, path)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Input.Disorder
	if d.OutOfOrder != 1 || d.First == nil || d.First.Frame != 12 || d.MaxStepBackNs != 1000 || d.Late != 0 {
		t.Errorf("disorder %+v first %+v", d, d.First)
	}
	if flowList(r)[0].IPDNs.Min != 1000 || flowList(r)[0].IPDNs.Max != 1000 {
		t.Errorf("IPDs after reordering %+v", flowList(r)[0].IPDNs)
	}
	s, err := OpenStream([]string{path}, StreamOptions{WindowPackets: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err = runIPD(s, IPDOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Input.Disorder.Late != 1 || flowList(r)[0].Late != 1 || flowList(r)[0].IPDNs.Min < 0 || flowList(r)[0].IPDNs.Count != 98 {
		t.Errorf("window 1: late %d, flow %+v", r.Input.Disorder.Late, flowList(r)[0])
	}
}

// A packet stamped far back (beyond the window) is handed out late where the
// file has it, not ahead of the window of packets read before it: the PSN
// sequence shows no gap or duplicate, and no IPD is negative.
func TestStreamLateKeepsFileOrder(t *testing.T) {
	pkts := testcap.Stream(300, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	pkts[250].TsNs = pkts[20].TsNs + 1
	pkts[120].TsNs, pkts[121].TsNs = pkts[121].TsNs, pkts[120].TsNs // within the window: sorted
	path := testcap.Write(t, "late.pcap", false, pkts)
	s, err := OpenStream([]string{path}, StreamOptions{WindowPackets: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var psns []uint32
	var p Packet
	for s.Next(&p) == nil {
		if p.Late != (p.PSN == 250) {
			t.Errorf("PSN %d: late %v", p.PSN, p.Late)
		}
		psns = append(psns, p.PSN)
	}
	want := make([]uint32, 300)
	for i := range want {
		want[i] = uint32(i)
	}
	want[120], want[121] = 121, 120
	if !slices.Equal(psns, want) {
		t.Errorf("PSN order %v", psns)
	}
	r := runFlowsWith(t, StreamOptions{WindowPackets: 64}, path)
	if ps := r.Flows[0].PSN; ps.Lost != 0 || ps.Duplicates != 0 || ps.OutOfOrder != 1 || r.Flows[0].Late != 1 {
		t.Errorf("flows: PSN %+v late %d", ps, r.Flows[0].Late)
	}
	si, err := OpenStream([]string{path}, StreamOptions{WindowPackets: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer si.Close()
	ri, err := runIPD(si, IPDOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := flowList(ri)[0]; f.IPDNs.Min != 1000 || f.IPDNs.Max != 2000 || f.IPDNs.Count != 298 || f.Late != 1 {
		t.Errorf("ipd: IPDs %+v, late %d", f.IPDNs, f.Late)
	}
}

// Rotated pieces of one capture, given in any order, make one stream.
func TestStreamRotatedFiles(t *testing.T) {
	pkts := testcap.Stream(300, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1500 })
	p1 := testcap.Write(t, "part1.pcap", false, pkts[:100])
	p2 := testcap.Write(t, "part2.pcap", false, pkts[100:200])
	p3 := testcap.Write(t, "part3.pcap", false, pkts[200:])
	r, err := runIPDFiles(t, IPDOptions{}, p3, p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	if f := flowList(r)[0]; f.Packets != 300 || f.IPDNs.Min != 1500 || f.IPDNs.Max != 1500 || r.Input.Disorder.OutOfOrder != 0 {
		t.Errorf("rotated: %+v", f.IPDNs)
	}
}

func TestIPDBadInput(t *testing.T) {
	one := testcap.Write(t, "one.pcap", false, testcap.Stream(1, 1, 2, 7, 0, 64, testcap.BaseNs, nil))
	if _, err := runIPDFiles(t, IPDOptions{}, one); !errors.Is(err, ErrNoIPD) {
		t.Errorf("one packet: %v", err)
	}
	empty := testcap.Write(t, "empty.pcap", false, nil)
	if _, err := runIPDFiles(t, IPDOptions{}, empty); !errors.Is(err, ErrNoIPD) {
		t.Errorf("no packets: %v", err)
	}
}

// The study's incast on an SDR 4x link: sender 1 alone sends 2074-byte
// packets back to back (2074 ns); when sender 2 joins, the receiver's link
// alternates between them, so each flow's spacing doubles while the link's
// stays at 2074 ns.
func TestIPDIncast(t *testing.T) {
	var pkts []testcap.Packet
	ts := testcap.BaseNs
	psn := [3]uint32{}
	for i := range 3000 {
		src := byte(1)
		if i >= 1000 && i%2 == 1 {
			src = 2
		}
		pkts = append(pkts, testcap.Packet{TsNs: ts, Src: src, Dst: 3, QP: 0x40 + uint32(src), PSN: psn[src], Op: 0x07, Payload: 2048})
		psn[src]++
		ts += 2074
	}
	path := testcap.Write(t, "incast.pcap", true, pkts)
	r, err := runIPDFiles(t, IPDOptions{Phases: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	f1 := flowList(r)[0]
	if f1.Key.String() != "ib lid 1>3 qp 0x000041" || len(f1.Phases) != 2 || f1.Phases[0].MedianIPDNs != 2074 || f1.Phases[1].MedianIPDNs != 4148 {
		t.Fatalf("sender 1: %s phases %+v", f1.Key, f1.Phases)
	}
	if f1.Phases[1].StartNs != pkts[1002].TsNs {
		t.Errorf("second phase starts at %d, want %d (sender 1's first packet after sender 2 joined)", f1.Phases[1].StartNs, pkts[1002].TsNs)
	}
	if f2 := flowList(r)[1]; len(f2.Phases) != 1 || f2.Phases[0].MedianIPDNs != 4148 {
		t.Errorf("sender 2: %+v", f2.Phases)
	}
	r, err = runIPDFiles(t, IPDOptions{Phases: true, By: ByLink}, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(flowList(r)) != 1 || len(flowList(r)[0].Phases) != 1 || flowList(r)[0].IPDNs.Max != 2074 {
		t.Errorf("link: %+v", flowList(r)[0])
	}
}

// A flow that starts after the bins were picked (from the first 8192 IPDs)
// still gets every IPD in its histogram.
func TestIPDLateFlowHistogram(t *testing.T) {
	a := testcap.Stream(binSamplePackets+1000, 1, 3, 0x10, 0, 256, testcap.BaseNs, func(int) int64 { return 2000 })
	b := testcap.Stream(500, 2, 3, 0x20, 0, 256, a[len(a)-1].TsNs+1000, func(int) int64 { return 3000 })
	path := testcap.Write(t, "late.pcap", true, append(a, b...))
	for _, spec := range []HistSpec{{}, {Mode: ModeLinear, BinNs: 1000, Bins: 5}} {
		r, err := runIPDFiles(t, IPDOptions{Hist: spec}, path)
		if err != nil {
			t.Fatal(err)
		}
		if len(flowList(r)) != 2 {
			t.Fatalf("%d flows, want 2", len(flowList(r)))
		}
		for _, f := range flowList(r) {
			if got := f.Hist().Total(); got != f.IPDNs.Count {
				t.Errorf("spec %+v: flow %s: histogram holds %d IPDs, want %d", spec, f.Key, got, f.IPDNs.Count)
			}
		}
		if got := flowList(r)[1].Histogram.Bins[3].Count; got != 499 {
			t.Errorf("spec %+v: late flow's [3us, 4us) bin holds %d, want 499", spec, got)
		}
	}
}

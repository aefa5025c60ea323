package analyze

import (
	"net"
	"reflect"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// rawFrame is one frame of a test capture.
type rawFrame struct {
	tsNs int64
	b    []byte
}

func writeFrames(t testing.TB, frames []rawFrame) string {
	fs := make([]testcap.Frame, len(frames))
	for i, f := range frames {
		fs[i] = testcap.Frame{TsNs: f.tsNs, B: f.b}
	}
	return testcap.WriteFrames(t, "frames.pcap", fs)
}

// hostMAC is test host n's MAC.
func hostMAC(n byte) net.HardwareAddr { return testcap.HostMAC(n) }

// pfcFrame asks host src's neighbour to pause the priorities in quanta.
func pfcFrame(t testing.TB, src byte, quanta map[int]uint16) []byte {
	return testcap.PFCFrame(t, src, quanta)
}

// roceAt builds a RoCEv2 RDMA WRITE from host src to host dst with the
// given DSCP, or, with pcp >= 0, VLAN-tagged at that priority.
func roceAt(t testing.TB, src, dst byte, qp uint32, dscp uint8, pcp int) []byte {
	return testcap.RoCEAt(t, testcap.Packet{Src: src, Dst: dst, QP: qp, Op: 0x0A, Payload: 64, DMALen: 64}, dscp, pcp) // RDMA WRITE Only
}

func runPFC(t *testing.T, path string, o PFCOptions) *PFCReport {
	t.Helper()
	s, err := OpenStream([]string{path}, StreamOptions{MACControl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := NewPFCAnalysis(o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(s, a, RunOptions[*PFCReport]{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// findPrio returns the report of one priority of the link whose sender is
// host n.
func findPrio(t *testing.T, r *PFCReport, n byte, prio int) PausePriority {
	t.Helper()
	for _, l := range r.Links {
		if l.Link != hostMAC(n).String() {
			continue
		}
		for _, p := range l.Priorities {
			if p.Priority == prio {
				return p
			}
		}
	}
	t.Fatalf("no priority %d on link %s in %+v", prio, hostMAC(n), r.Links)
	return PausePriority{}
}

// At 100 Gb/s a quantum is 5.12 ns: 1000 quanta are 5,120 ns, 100 are
// 512, 10 are 51 (51.2 cut to whole ns).
func TestPFCPauseTime(t *testing.T) {
	t0 := testcap.BaseNs
	f := []rawFrame{
		// Priority 3 on host 9: XOFF, a refresh before it runs out, then
		// XON: one pause of 6,000 ns, ended early.
		{t0, pfcFrame(t, 9, map[int]uint16{3: 1000})},
		{t0 + 1000, roceAt(t, 1, 9, 0x11, 26, -1)}, // DSCP 26 → priority 3, while paused
		{t0 + 3000, pfcFrame(t, 9, map[int]uint16{3: 1000})},
		{t0 + 6000, pfcFrame(t, 9, map[int]uint16{3: 0})},
		{t0 + 7000, roceAt(t, 1, 9, 0x11, 26, -1)}, // after the XON
		// A pause left to run out: 512 ns.
		{t0 + 20_000, pfcFrame(t, 9, map[int]uint16{3: 100})},
		{t0 + 20_100, roceAt(t, 1, 9, 0x11, 26, -1)}, // paused
		{t0 + 20_600, roceAt(t, 1, 9, 0x11, 26, -1)}, // the pause ran out at 20,512
		// A frame after the pause ran out starts a new one: 51 + 51 ns.
		{t0 + 30_000, pfcFrame(t, 9, map[int]uint16{3: 10})},
		{t0 + 30_100, pfcFrame(t, 9, map[int]uint16{3: 10})},
		// An XON with no pause changes nothing.
		{t0 + 31_000, pfcFrame(t, 9, map[int]uint16{3: 0})},
		// Priority 5 (VLAN PCP 5), paused by the same frame as 6.
		{t0 + 40_000, pfcFrame(t, 9, map[int]uint16{5: 2000, 6: 1})},
		{t0 + 40_001, roceAt(t, 1, 9, 0x12, 26, 5)},
		// 802.3x PAUSE from host 10: every priority, 10,240 ns.
		{t0 + 50_000, testcap.MACControlFrame(t, 10, &decode.Pause{Opcode: decode.MACControlOpPause, Quanta: 2000})},
		{t0 + 50_010, roceAt(t, 1, 10, 0x13, 0, -1)}, // priority 0, paused
		{t0 + 70_000, roceAt(t, 1, 10, 0x13, 0, -1)},
	}
	r := runPFC(t, writeFrames(t, f), PFCOptions{LinkBitsPerSec: 100e9})
	if r.PFCFrames != 8 || r.PauseFrames != 1 || r.RateGbps != 100 || r.RateAssumed {
		t.Errorf("frames %d PFC %d PAUSE, rate %v assumed %v", r.PFCFrames, r.PauseFrames, r.RateGbps, r.RateAssumed)
	}
	if r.FirstNs != t0 || r.LastNs != t0+70_000 || r.SpanNs != 70_000 {
		t.Errorf("span %d..%d (%d)", r.FirstNs-t0, r.LastNs-t0, r.SpanNs)
	}
	p3 := findPrio(t, r, 9, 3)
	want3 := PausePriority{Priority: 3, Frames: 7, Pauses: 4, XONs: 1, Quanta: 2120, PausedNs: 6000 + 512 + 51 + 51, LongestNs: 6000,
		PausedShare: float64(6614) / 70_000}
	got3 := p3
	got3.Intervals, got3.StormList = nil, nil
	if !reflect.DeepEqual(got3, want3) {
		t.Errorf("priority 3:\n got %+v\nwant %+v", got3, want3)
	}
	wantIv := []PauseInterval{{StartNs: t0, EndNs: t0 + 6000}, {StartNs: t0 + 20_000, EndNs: t0 + 20_512}, {StartNs: t0 + 30_000, EndNs: t0 + 30_051}, {StartNs: t0 + 30_100, EndNs: t0 + 30_151}}
	if len(p3.Intervals) != len(wantIv) {
		t.Fatalf("intervals %v", p3.Intervals)
	}
	for i := range wantIv {
		if p3.Intervals[i] != wantIv[i] {
			t.Errorf("interval %d: %v, want %v", i, p3.Intervals[i], wantIv[i])
		}
	}
	if p5, p6 := findPrio(t, r, 9, 5), findPrio(t, r, 9, 6); p5.PausedNs != 10_240 || p6.PausedNs != 5 {
		t.Errorf("priorities 5 and 6 paused %d and %d ns, want 10240 and 5", p5.PausedNs, p6.PausedNs)
	}
	for prio := range 8 {
		if p := findPrio(t, r, 10, prio); p.PausedNs != 10_240 || p.Pauses != 1 {
			t.Errorf("PAUSE, priority %d: %+v", prio, p)
		}
	}
	// The flows: on priority 3, 2 of 5 packets were sent while paused.
	var f3, f5, f0 *PFCFlow
	for _, pr := range r.Priorities {
		for i := range pr.Flows {
			switch pr.Priority {
			case 3:
				f3 = &pr.Flows[i]
			case 5:
				f5 = &pr.Flows[i]
			case 0:
				f0 = &pr.Flows[i]
			}
		}
	}
	if f3 == nil || f5 == nil || f0 == nil {
		t.Fatalf("flows per priority: %+v", r.Priorities)
	}
	wire := f3.Bytes / 4
	if f3.Packets != 4 || f3.PausedPackets != 2 || f3.PausedBytes != 2*wire || f3.Link != hostMAC(9).String() {
		t.Errorf("priority 3 flow %+v", *f3)
	}
	if f3.PausedGbps == nil || *f3.PausedGbps != float64(2*wire*8)/6614 {
		t.Errorf("priority 3 paused throughput %v, want %v", f3.PausedGbps, float64(2*wire*8)/6614)
	}
	if f3.UnpausedGbps == nil || *f3.UnpausedGbps != float64(2*wire*8)/(70_000-6614) {
		t.Errorf("priority 3 unpaused throughput %v", f3.UnpausedGbps)
	}
	if f5.PausedPackets != 1 || f0.PausedPackets != 1 || f0.Packets != 2 {
		t.Errorf("priority 5 flow %+v, priority 0 flow %+v", *f5, *f0)
	}
}

// A pause holds back only the frames not yet begun: the part of a pause
// during which a frame of its priority begun before it was still on the
// wire (at 1 Gb/s, W wire bytes last 8W ns) is in InFlightNs, and the
// flows' rates count it as not paused. A frame of another priority, or one
// that ended before the pause, adds nothing; a pause shorter than the frame
// is in flight throughout.
func TestPFCFrameInFlight(t *testing.T) {
	t0 := testcap.BaseNs
	r := runPFC(t, writeFrames(t, []rawFrame{
		{t0, roceAt(t, 1, 9, 0x11, 26, -1)},                  // priority 3, on the wire until t0+8W
		{t0 + 200, pfcFrame(t, 9, map[int]uint16{3: 10})},    // 5,120 ns, 8W-200 of them in flight
		{t0 + 10_000, roceAt(t, 1, 9, 0x12, 0, -1)},          // priority 0
		{t0 + 10_100, pfcFrame(t, 9, map[int]uint16{3: 10})}, // none in flight
		{t0 + 20_000, roceAt(t, 1, 9, 0x11, 26, -1)},         // priority 3 again
		{t0 + 20_100, pfcFrame(t, 9, map[int]uint16{3: 1})},  // 512 ns, all in flight
		{t0 + 30_000, roceAt(t, 1, 9, 0x11, 26, -1)},
	}), PFCOptions{LinkBitsPerSec: 1e9})
	var f3 *PFCFlow
	for _, pr := range r.Priorities {
		if pr.Priority == 3 {
			f3 = &pr.Flows[0]
		}
	}
	if f3 == nil || f3.Packets != 3 || f3.PausedPackets != 0 {
		t.Fatalf("priority 3: %+v", r.Priorities)
	}
	w := int64(f3.Bytes / 3)
	p3 := findPrio(t, r, 9, 3)
	wantFlight := 8*w - 200 + 512
	if p3.PausedNs != 5120+5120+512 || p3.InFlightNs != wantFlight || 8*w <= 512 {
		t.Errorf("paused %d ns, %d in flight; want %d and %d (a frame %d ns)", p3.PausedNs, p3.InFlightNs, 5120+5120+512, wantFlight, 8*w)
	}
	want := float64(3*w*8) / float64(30_000-(p3.PausedNs-wantFlight))
	if f3.UnpausedGbps == nil || *f3.UnpausedGbps != want || f3.PausedGbps == nil || *f3.PausedGbps != 0 {
		t.Errorf("rates paused %v, not paused %v; want 0 and %v", f3.PausedGbps, f3.UnpausedGbps, want)
	}
}

// A pause refreshed without a gap for longer than the storm threshold is
// one storm; a pause still running at the end is counted to its timer's end.
func TestPFCStorm(t *testing.T) {
	t0 := testcap.BaseNs
	var f []rawFrame
	for i := range 10 { // every 4 us, 5,120 ns each: one pause of 9*4000+5120 ns
		f = append(f, rawFrame{t0 + int64(i)*4000, pfcFrame(t, 9, map[int]uint16{3: 1000})})
	}
	f = append(f, rawFrame{t0 + 100_000, pfcFrame(t, 9, map[int]uint16{3: 1000})}) // short, and still running
	r := runPFC(t, writeFrames(t, f), PFCOptions{LinkBitsPerSec: 100e9, StormNs: 20_000})
	p := findPrio(t, r, 9, 3)
	if p.Pauses != 2 || p.Storms != 1 || p.StormNs != 41_120 || p.LongestNs != 41_120 || p.PausedNs != 41_120+5120 || !p.Paused {
		t.Errorf("storm: %+v", p)
	}
	if len(p.StormList) != 1 || p.StormList[0] != (PauseInterval{StartNs: t0, EndNs: t0 + 41_120}) {
		t.Errorf("storm list %v", p.StormList)
	}
	if r.LastNs != t0+105_120 {
		t.Errorf("span ends %d ns in, want at the running pause's end 105120", r.LastNs-t0)
	}
	// With the default threshold (10 ms) there is no storm.
	if p := findPrio(t, runPFC(t, writeFrames(t, f), PFCOptions{}), 9, 3); p.Storms != 0 || p.PausedNs != 41_120+5120 {
		t.Errorf("default threshold: %+v", p)
	}
}

// A report so far changes nothing: the open pause is counted to its end
// in the report and still refreshed afterwards.
func TestPFCReportSoFar(t *testing.T) {
	t0 := testcap.BaseNs
	f := []rawFrame{
		{t0, pfcFrame(t, 9, map[int]uint16{3: 1000})},
		{t0 + 3000, pfcFrame(t, 9, map[int]uint16{3: 1000})},
		{t0 + 10_000, roceAt(t, 1, 9, 0x11, 26, -1)},
	}
	s, err := OpenStream([]string{writeFrames(t, f)}, StreamOptions{MACControl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := NewPFCAnalysis(PFCOptions{})
	var mid []int64
	r, err := Run(s, a, RunOptions[*PFCReport]{EveryNs: 2000, OnReport: func(_ int64, r *PFCReport, _ error) {
		mid = append(mid, findPrio(t, r, 9, 3).PausedNs)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(mid) != 2 || mid[0] != 5120 || mid[1] != 8120 {
		t.Errorf("reports so far: paused %v ns, want [5120 8120]", mid)
	}
	if p := findPrio(t, r, 9, 3); p.PausedNs != 8120 || p.Pauses != 1 || len(p.Intervals) != 1 || !r.RateAssumed {
		t.Errorf("final %+v (rate assumed %v)", p, r.RateAssumed)
	}
}

// Without StreamOptions.MACControl the pauses are not handed out.
func TestPFCNeedsMACControl(t *testing.T) {
	path := writeFrames(t, []rawFrame{{testcap.BaseNs, pfcFrame(t, 9, map[int]uint16{3: 1000})}, {testcap.BaseNs + 1, roceAt(t, 1, 9, 1, 0, -1)}})
	s, err := OpenStream([]string{path}, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := NewPFCAnalysis(PFCOptions{})
	r, _ := Run(s, a, RunOptions[*PFCReport]{})
	if r.PFCFrames != 0 || r.Input.NotIB != 1 || r.Input.Packets != 1 {
		t.Errorf("PFC frames %d, not IB %d, packets %d", r.PFCFrames, r.Input.NotIB, r.Input.Packets)
	}
}

func TestPFCOptionsRefused(t *testing.T) {
	for _, o := range []PFCOptions{{LinkBitsPerSec: -1}, {StormNs: -1}, {MaxIntervals: MaxPauseIntervals + 1}, {MaxFlows: -1}} {
		if _, err := NewPFCAnalysis(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

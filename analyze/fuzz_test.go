package analyze

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/telemetry"
)

// FuzzAnalyses feeds arbitrary files to the IPD, flows, pfc, hops, cm,
// credits, tick, buffer and compare analyses: bad input must give errors
// or results, never a panic.
func FuzzAnalyses(f *testing.F) {
	pkts := testcap.Stream(12, 1, 2, 7, 0xFFFFFA, 64, testcap.BaseNs, func(i int) int64 { return int64(1000 - 90*i) })
	pkts = append(pkts, testcap.Packet{TsNs: testcap.BaseNs + 5000, Src: 2, Dst: 1, QP: 9, PSN: 3, Op: 0x11, Syndrome: 0x61})
	var roce []byte // compare's other side
	for _, native := range []bool{false, true} {
		b, err := os.ReadFile(testcap.Write(f, "seed.pcap", native, pkts))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if !native {
			roce = b
		}
	}
	// Pauses, tagged RoCE and IFA probes for the pfc and hops analyses.
	write := testcap.Packet{Src: 1, Dst: 9, QP: 0x11, Op: 0x0A, Payload: 64, DMALen: 64}
	b, err := os.ReadFile(testcap.WriteFrames(f, "pause.pcap", []testcap.Frame{
		{TsNs: testcap.BaseNs, B: testcap.PFCFrame(f, 9, map[int]uint16{3: 1000, 5: 7})},
		{TsNs: testcap.BaseNs + 10, B: testcap.RoCEAt(f, write, 26, 5)},
		{TsNs: testcap.BaseNs + 20, B: testcap.IFAProbe(f, write, []decode.IFAHop{{DeviceID: 1, ResidenceNs: 900}, {DeviceID: 2, ResidenceNs: 5}})},
		{TsNs: testcap.BaseNs + 30, B: testcap.PFCFrame(f, 9, map[int]uint16{3: 0})},
	}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	// CM messages (rdma_cm's REQ, REP, REJ, ...) and native IB with link
	// packets for the cm and credits analyses.
	for _, name := range []string{"rocev2_cm.pcap", "ib_native_247.pcap"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "pcaps", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// PortXmitWait of LID 1 port 1 across the seeds' times, for tick.
	wait := telemetry.NewSeries(telemetry.Source{Device: "lid:1", Port: 1}, telemetry.ClockHost, []telemetry.Counter{telemetry.PerfqueryCounter("PortXmitWait", true)})
	for i := range 8 {
		ns := testcap.BaseNs + int64(i)*2000
		wait.Append(uint64(i), ns, ns, []uint64{uint64(i * i * 10)})
	}
	// Readers over memory, not files: file system calls make the fuzzer's
	// coverage noisy and it then spends its time minimising.
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, run := range []func(s *Stream){
			func(s *Stream) { runIPD(s, IPDOptions{Phases: true, PhasePackets: 4, Opcodes: allOpcodes()}, nil) },
			func(s *Stream) { // every flow made into its FlowHealth, so far and at the end, on a link rate
				top := func(_ int64, r *FlowsReport, _ error) {
					if r != nil {
						r.Top(0)
					}
				}
				r, err := Run(s, NewFlowsAnalysis(FlowsOptions{LinkGbps: 0.001}), RunOptions[*FlowsReport]{EveryNs: 50, OnReport: top})
				top(0, r, err)
			},
			func(s *Stream) { // the pfc analysis reads PFC and PAUSE frames (MACControl)
				a, _ := NewPFCAnalysis(PFCOptions{StormNs: 100, MaxIntervals: 2, MaxFlows: 2, PausedTime: true})
				Run(s, a, RunOptions[*PFCReport]{EveryNs: 50, OnReport: func(int64, *PFCReport, error) {}})
			},
			func(s *Stream) {
				a, _ := NewHopsAnalysis(HopsOptions{IntervalNs: 1, MaxFlows: 2})
				Run(s, a, RunOptions[*HopsReport]{EveryNs: 50, OnReport: func(int64, *HopsReport, error) {}})
			},
			func(s *Stream) { // the cm analysis reads the CM MADs (Packet.CM)
				a, _ := NewCMAnalysis(2)
				Run(s, a, RunOptions[*CMReport]{})
			},
			func(s *Stream) { // credits reads the link packets (FCPs)
				a, _ := NewCreditsAnalysis(CreditOptions{NsPerByte: 0.25, MaxPoints: 4})
				Run(s, a, RunOptions[*CreditReport]{})
			},
			func(s *Stream) {
				runTick(s, []*telemetry.Series{wait}, "wait", TickOptions{Iface: -1, MinPhasePackets: 2, MaxPackets: 64})
			},
			func(s *Stream) { // buffer: the file as the senders' capture and the receiver's
				r, err := capfile.NewReader(bytes.NewReader(data), "receiver.pcap")
				if err != nil {
					return
				}
				receiver := NewStream([]*capfile.Reader{r}, StreamOptions{WindowPackets: 3})
				defer receiver.Close()
				runBuffer(s, receiver, BufferOptions{MaxPoints: 4, MaxPackets: 64, NsPerByte: 0.25})
			},
			func(s *Stream) { // compare: the file beside the RoCE seed
				r, _ := capfile.NewReader(bytes.NewReader(roce), "b.pcap")
				b := NewStream([]*capfile.Reader{r}, StreamOptions{WindowPackets: 3})
				defer b.Close()
				RunCompare(s, b, IPDOptions{Phases: true, PhasePackets: 4}, 1000, nil)
			},
		} {
			r, err := capfile.NewReader(bytes.NewReader(data), "fuzz.pcap")
			if err != nil {
				continue
			}
			s := NewStream([]*capfile.Reader{r}, StreamOptions{WindowPackets: 3, CheckCRC: true, MACControl: i == 2, Ethernet: i == 3, CM: i == 4, LinkPackets: i == 5})
			run(s)
			s.Close()
		}
	})
}

func allOpcodes() []decode.Opcode {
	ops, _ := decode.ParseOpcodes("all")
	return ops
}

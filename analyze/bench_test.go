package analyze

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// benchCapture is a RoCEv2 capture for the benchmarks: IBSCOPE_BENCH_FILE
// when set (such as the 2M-frame capture bench/analyze.sh writes), otherwise 200,000
// frames written once: RDMA WRITE messages of four 128-byte packets on 8
// QPs, an ACK after each.
func benchCapture(b *testing.B) string {
	if p := os.Getenv("IBSCOPE_BENCH_FILE"); p != "" {
		return p
	}
	benchOnce.Do(func() {
		var pkts []testcap.Packet
		ts := testcap.BaseNs
		psn := map[uint32]uint32{}
		for len(pkts) < 200_000 {
			qp := uint32(len(pkts)/5%8 + 1)
			for i, op := range []decode.Opcode{0x06, 0x07, 0x07, 0x08} {
				ts += 113 + int64(len(pkts)%7)*11
				pkts = append(pkts, testcap.Packet{TsNs: ts, Src: 1, Dst: 2, QP: qp, PSN: psn[qp], Op: op, Payload: 128, DMALen: 512, AckReq: i == 3})
				psn[qp]++
			}
			ts += 113
			pkts = append(pkts, testcap.Packet{TsNs: ts, Src: 2, Dst: 1, QP: qp + 100, PSN: psn[qp] - 1, Op: 0x11})
		}
		dir, err := os.MkdirTemp("", "ibscope-analyze-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
		benchPath = testcap.WriteIn(b, dir, "bench.pcap", false, pkts)
	})
	return benchPath
}

var (
	benchOnce sync.Once
	benchPath string
	benchDir  string
)

// benchRun runs run on the benchmark capture, decoded on one goroutine
// (workers=1) and read ahead on GOMAXPROCS (StreamOptions.Workers): the
// wall time is ns/op; the CPU time of each stage shows in a profile
// (analyze.Run the caller's, capfile's decodePool.decode the workers').
func benchRun(b *testing.B, opts StreamOptions, run func(s *Stream) error) {
	path := benchCapture(b)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var frames int
			b.SetBytes(fi.Size())
			o := opts
			o.Workers = workers
			for b.Loop() {
				s, err := OpenStream([]string{path}, o)
				if err != nil {
					b.Fatal(err)
				}
				if err := run(s); err != nil {
					b.Fatal(err)
				}
				frames = s.Stats().Frames
				s.Close()
			}
			b.ReportMetric(float64(frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkIPD is `ibanalyze ipd` end to end: file reading, decoding, IPD per flow.
func BenchmarkIPD(b *testing.B) {
	benchRun(b, StreamOptions{}, func(s *Stream) error {
		_, err := runIPD(s, IPDOptions{}, nil)
		return err
	})
}

// BenchmarkFlows is `ibanalyze flows` end to end, CRCs checked.
func BenchmarkFlows(b *testing.B) {
	benchRun(b, StreamOptions{CheckCRC: true}, func(s *Stream) error {
		_, err := runFlows(s, nil)
		return err
	})
}

// BenchmarkStream is reading and reordering alone.
func BenchmarkStream(b *testing.B) {
	benchRun(b, StreamOptions{}, func(s *Stream) error {
		var p Packet
		for s.Next(&p) == nil {
		}
		return nil
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

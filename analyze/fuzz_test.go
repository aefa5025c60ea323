package analyze

import (
	"bytes"
	"os"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// FuzzAnalyses feeds arbitrary files to the IPD and flows analyses: bad
// input must give errors or results, never a panic.
func FuzzAnalyses(f *testing.F) {
	pkts := testcap.Stream(12, 1, 2, 7, 0xFFFFFA, 64, testcap.BaseNs, func(i int) int64 { return int64(1000 - 90*i) })
	pkts = append(pkts, testcap.Packet{TsNs: testcap.BaseNs + 5000, Src: 2, Dst: 1, QP: 9, PSN: 3, Op: 0x11, Syndrome: 0x61})
	for _, native := range []bool{false, true} {
		b, err := os.ReadFile(testcap.Write(f, "seed.pcap", native, pkts))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Readers over memory, not files: file system calls make the fuzzer's
	// coverage noisy and it then spends its time minimising.
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, run := range []func(s *Stream){
			func(s *Stream) { RunIPD(s, IPDConfig{Phases: true, PhasePackets: 4, Opcodes: allOpcodes()}, nil) },
			func(s *Stream) { RunFlows(s, nil) },
		} {
			r, err := decode.NewReader(bytes.NewReader(data), "fuzz.pcap")
			if err != nil {
				continue
			}
			s := NewStream([]*decode.Reader{r}, StreamOptions{WindowPackets: 3, CheckCRC: true})
			run(s)
			s.Close()
		}
	})
}

func allOpcodes() []decode.Opcode {
	ops, _ := decode.ParseOpcodes("all")
	return ops
}

package analyze

import (
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/protostate"
)

// A reused QP number is a new sequence, not a retransmission: frames made
// like the real capture of issue 21, where QP 0x11 carries one SEND at PSN
// 7,825,157 and, three minutes later, a new connection's SEND at PSN
// 16,227,732, each acknowledged on QP 0x12 (flows reported 2 duplicates).
func TestFlowsReusedQP(t *testing.T) {
	const minute = int64(60_000_000_000)
	send := func(ts int64, psn uint32) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: 1, Dst: 2, QP: 0x11, PSN: psn, Op: 0x04, Payload: 64, AckReq: true}
	}
	ack := func(ts int64, psn uint32) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: 2, Dst: 1, QP: 0x12, PSN: psn, Op: 0x11, Syndrome: 0x1F}
	}
	path := testcap.Write(t, "reused.pcap", false, []testcap.Packet{
		send(0, 7_825_157), ack(8_000, 7_825_157),
		send(3*minute, 16_227_732), ack(3*minute+8_000, 16_227_732),
	})
	r := runFlowsFiles(t, path)
	if len(r.Flows) != 2 {
		t.Fatalf("%d flows", len(r.Flows))
	}
	for _, f := range r.Flows {
		psn, other := f.PSN, f.ResponsePSN
		if f.Key.Src == "192.168.7.2" {
			psn, other = f.ResponsePSN, f.PSN
		}
		if psn != (protostate.PSNStats{NewSequences: 1}) || other != (protostate.PSNStats{}) {
			t.Errorf("%s: sequence %+v, the other %+v: want one new sequence and nothing else", f.Key, psn, other)
		}
	}
	if w := r.Flows[0]; w.Key.Src == "192.168.7.1" && w.Messages != (Messages{Only: 2, Total: 2}) {
		t.Errorf("messages %+v", w.Messages)
	}
}

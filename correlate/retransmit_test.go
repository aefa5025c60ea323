package correlate

import (
	"io"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestRetransmitsRestartOnCM: a QP number used again by a new connection
// 10 ms after its last packet (too soon for the idle rule), whose PSNs
// start where the old one's did, is no retransmission when a CM REQ and
// REP set the connection up, as in flows (analyze's TestFlowsRestartOnCM);
// without the CM the same packets are resends of PSNs seen before.
func TestRetransmitsRestartOnCM(t *testing.T) {
	const ms = int64(1_000_000)
	send := func(ts int64, src, dst byte, qp, psn uint32) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: src, Dst: dst, QP: qp, PSN: psn, Op: 0x04, Payload: 64}
	}
	mad := func(ts int64, src, dst byte, b []byte) testcap.Packet {
		return testcap.Packet{TsNs: testcap.BaseNs + ts, Src: src, Dst: dst, QP: 1, PSN: 1, Op: 0x64, MAD: b}
	}
	first := []testcap.Packet{
		send(0, 1, 2, 0x22, 100), send(1, 2, 1, 0x11, 500),
		send(2, 1, 2, 0x22, 101), send(3, 2, 1, 0x11, 501),
	}
	cm := []testcap.Packet{
		mad(10*ms, 1, 2, testcap.CMMAD(decode.CMRequest, 7, 0, 0x11, 500)),
		mad(10*ms+1, 2, 1, testcap.CMMAD(decode.CMReply, 8, 7, 0x22, 100)),
		mad(10*ms+2, 1, 2, testcap.CMMAD(decode.CMReadyToUse, 7, 8, 0, 0)),
	}
	second := []testcap.Packet{
		send(11*ms, 1, 2, 0x22, 100), send(11*ms+1, 2, 1, 0x11, 500),
		send(11*ms+2, 1, 2, 0x22, 101), send(11*ms+3, 2, 1, 0x11, 501),
	}
	for _, tc := range []struct {
		name string
		pkts []testcap.Packet
		want int
	}{
		{"with the CM", append(append(append([]testcap.Packet{}, first...), cm...), second...), 0},
		{"without the CM", append(append([]testcap.Packet{}, first...), second...), len(second)},
	} {
		path := testcap.Write(t, "restart.pcap", false, tc.pkts)
		in, err := openFrames([]string{path}, func(e *capfile.DecodeError) { t.Errorf("%s: %v", tc.name, e) }, 1)
		if err != nil {
			t.Fatal(err)
		}
		rt := newRetransmits()
		got := 0
		for {
			f, _, err := in.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rt.seen(f) {
				got++
			}
		}
		in.Close()
		if got != tc.want {
			t.Errorf("%s: %d retransmissions, want %d", tc.name, got, tc.want)
		}
	}
}

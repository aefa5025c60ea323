package protostate

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// The rule for a new sequence, at its edges: far (beyond MaxResendPSNs)
// and after NewSequenceIdleNs idle is a new sequence; far without the idle
// time (a capture that lost many packets) a gap, or a duplicate behind;
// near after any idle time (a resend after a long timeout) a duplicate.
func TestNewSequenceRule(t *testing.T) {
	const send, ack = decode.Opcode(0x04), decode.Opcode(0x11)
	const s = int64(1_000_000_000)
	type step struct {
		op   decode.Opcode
		psn  uint32
		tsNs int64
		want PSNVerdict
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  PSNStats
	}{
		{"reused QP, as captured", []step{{send, 7_825_157, 0, PSNInOrder}, {send, 16_227_732, 180 * s, PSNInOrder}, {send, 16_227_733, 180*s + 1000, PSNInOrder}},
			PSNStats{NewSequences: 1}},
		{"far ahead, not idle", []step{{send, 100, 0, PSNInOrder}, {send, 100 + MaxResendPSNs + 2, NewSequenceIdleNs - 1, PSNGap}},
			PSNStats{Gaps: 1, Missing: MaxResendPSNs + 1, Lost: MaxResendPSNs + 1}},
		{"just within the resend distance, idle", []step{{send, 100, 0, PSNInOrder}, {send, 101 + MaxResendPSNs, 2 * s, PSNGap}},
			PSNStats{Gaps: 1, Missing: MaxResendPSNs, Lost: MaxResendPSNs}},
		{"far behind, not idle", []step{{send, 5_000_000, 0, PSNInOrder}, {send, 1_000, s / 2, PSNDuplicate}},
			PSNStats{Duplicates: 1}},
		{"resent after a long timeout", []step{{send, 500, 0, PSNInOrder}, {send, 501, 1000, PSNInOrder}, {send, 500, 10 * s, PSNDuplicate}},
			PSNStats{Duplicates: 1}},
		{"across the PSN wrap, idle", []step{{send, decode.PSNMask - 10, 0, PSNInOrder}, {send, 5, 60 * s, PSNGap}},
			PSNStats{Gaps: 1, Missing: 15, Lost: 15}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q QPSequences
			for i, st := range tc.steps {
				var idleNs int64
				if i > 0 {
					idleNs = st.tsNs - tc.steps[i-1].tsNs
				}
				if _, v := q.Add(st.op, st.psn, 0, 0, idleNs); v != st.want {
					t.Errorf("step %d, PSN %d at %d ns: verdict %d, want %d", i, st.psn, st.tsNs, v, st.want)
				}
			}
			if got := q.Requests.Stats(); got != tc.want {
				t.Errorf("stats %+v, want %+v", got, tc.want)
			}
		})
	}
	// The responses of a reused QP start anew too: the new connection's ACK.
	var q QPSequences
	q.Add(ack, 7_825_157, 0, 0, 0)
	if _, v := q.Add(ack, 16_227_732, 0, 0, 180*s); v != PSNInOrder || q.Responses.Stats() != (PSNStats{NewSequences: 1}) {
		t.Errorf("reused QP's ACK: verdict %d, stats %+v", v, q.Responses.Stats())
	}
	// Restart (a CM exchange for the QP) makes the next PSN a start at any distance and time.
	q = QPSequences{}
	q.Add(send, 100, 0, 0, 0)
	q.Restart()
	if _, v := q.Add(send, 90, 0, 0, 1000); v != PSNInOrder || q.Requests.Stats() != (PSNStats{NewSequences: 1}) {
		t.Errorf("after Restart: verdict %d, stats %+v", v, q.Requests.Stats())
	}
}

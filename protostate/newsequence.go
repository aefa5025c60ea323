package protostate

import "github.com/ibscope/ibscope/decode"

// A QP number outlives its connection: when a QP is destroyed, a later
// connection may get the same number and starts its PSNs wherever its
// requester chose (at random, as rdma_cm and perftest do). In a real
// capture QP 0x11 carried one SEND at PSN 7,825,157 and, minutes later, a
// new connection's SEND at PSN 16,227,732: 8,374,641 PSNs behind the head
// mod 2^24, judged a retransmission. So a packet begins a new sequence,
// not a resend or a loss, when both
//
//   - its PSN is more than MaxResendPSNs from the sequence's next PSN,
//     ahead or behind: farther than a requester goes back to resend
//     (go-back-N resends from the oldest unacknowledged PSN, and a
//     requester keeps far fewer outstanding: SoftRoCE at most 128), and
//   - its QP direction was idle for at least NewSequenceIdleNs before it
//     (the caller says how long: QPSequences.Add):
//     longer than the retransmission timeouts and RNR delays of a live
//     connection's resends, so that a capture that dropped many packets
//     of a busy flow still counts a gap.
//
// A connection set up for the QP (the CM's REQ, REP and RTU name its QPNs
// and starting PSNs) begins new sequences whatever the distance: whoever
// decodes it calls QPSequences.Restart.
const (
	MaxResendPSNs     = 1 << 16
	NewSequenceIdleNs = 1_000_000_000
)

// startsAnew reports whether psn, captured idleNs after its QP
// direction's previous packet, begins a new sequence rather than
// continuing this one.
func (s *psnSeq) startsAnew(psn uint32, idleNs int64) bool {
	if !s.started || idleNs < NewSequenceIdleNs {
		return false
	}
	d := decode.PSNDiff(psn&decode.PSNMask, s.next)
	return d > MaxResendPSNs || d < -MaxResendPSNs
}

// restart forgets the sequence, keeping its counts: the next packet starts
// it again.
func (s *psnSeq) restart() {
	if s.started {
		s.irregular().NewSequences++
	}
	s.started, s.run = false, 0
	if s.cold != nil {
		s.cold.seen = [psnWindowLen / 64]uint64{}
	}
}

func (t *RequestPSNs) restart() {
	t.psnSeq.restart()
	if t.cold != nil {
		t.cold.slackPSNs = 0
	}
}

func (t *ResponsePSNs) restart() {
	t.psnSeq.restart()
	t.open = false
}

// Restart begins new request and response sequences on the QP direction
// from its next packet on: the hook for a connection set up on the QP (a
// CM exchange naming it), which makes whatever PSN comes next a start,
// not a jump. The counts so far stay.
func (q *QPSequences) Restart() {
	q.Requests.restart()
	q.Responses.restart()
}

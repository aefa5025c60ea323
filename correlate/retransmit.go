package correlate

import (
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// retransmits spots retransmitted packets with the PSN tracker flows uses
// (protostate.QPSequences): per QP direction (decode.FlowKey), a request or a
// response whose PSN was seen before in its own sequence. A late packet
// that fills a gap is not a retransmission; CNPs, NAKs and UD packets keep
// no sequence. A new connection on a QP number begins new sequences, as
// in flows: after the direction was idle (protostate.NewSequenceIdleNs),
// or at once when a CM REQ or REP names the QP (restartFor).
type retransmits struct {
	seqs map[decode.FlowKey]*qpDirection
	// The previous packet's direction: a message's packets come in a row,
	// and hashing a FlowKey (two netip.Addrs) costs more than comparing it.
	lastKey decode.FlowKey
	last    *qpDirection
}

// qpDirection is one QP direction's sequences and its latest packet's
// time, which tells a reused QP number (protostate.QPSequences.Add).
type qpDirection struct {
	protostate.QPSequences
	lastNs int64
}

func newRetransmits() *retransmits {
	return &retransmits{seqs: make(map[decode.FlowKey]*qpDirection)}
}

// seen records f and reports whether it is a retransmission.
func (r *retransmits) seen(f *decode.Frame) bool {
	if f.Has&decode.HasBTH == 0 {
		return false
	}
	if f.Has&decode.HasMAD != 0 {
		r.restartFor(f)
	}
	k := f.FlowKey()
	q := r.last
	if q == nil || k != r.lastKey {
		if q = r.seqs[k]; q == nil {
			q = &qpDirection{lastNs: f.TsNs}
			r.seqs[k] = q
		}
		r.last, r.lastKey = q, k
	}
	idleNs := f.TsNs - q.lastNs
	q.lastNs = max(q.lastNs, f.TsNs)
	// AddFrame judges what has a sequence only: a CNP, a NAK (an ACK
	// opcode is told from its AETH, and one cut before it is left out) or
	// a UD packet gets PSNNone, having made its direction not idle above.
	_, v := q.AddFrame(f, idleNs)
	return v == protostate.PSNDuplicate
}

// restartFor starts afresh the sequences of the QP direction a CM REQ or
// REP sets up, as flows does (analyze's flowscm.go): the message names its
// sender's QP, so the packets to that QP from the message's receiver
// begin new sequences whatever PSN they carry, however soon the QP number
// is used again. A direction not seen yet needs nothing.
func (r *retransmits) restartFor(f *decode.Frame) {
	m, ok := f.MAD.CM()
	if !ok || (m.Message != decode.CMRequest && m.Message != decode.CMReply) {
		return
	}
	k := f.FlowKey()
	k = decode.FlowKey{Transport: k.Transport, SLID: k.DLID, DLID: k.SLID, Src: k.Dst, Dst: k.Src, DestQP: m.QPN}
	if q := r.seqs[k]; q != nil {
		q.Restart()
	}
}

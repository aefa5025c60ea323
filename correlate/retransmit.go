package correlate

import (
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// retransmits spots retransmitted packets with the PSN tracker flows uses
// (protostate.QPSequences): per QP direction (decode.FlowKey), a request or a
// response whose PSN was seen before in its own sequence. A late packet
// that fills a gap is not a retransmission; CNPs, NAKs and UD packets keep
// no sequence.
type retransmits struct {
	seqs map[decode.FlowKey]*protostate.QPSequences
}

func newRetransmits() *retransmits {
	return &retransmits{seqs: make(map[decode.FlowKey]*protostate.QPSequences)}
}

// seen records f and reports whether it is a retransmission.
func (r *retransmits) seen(f *decode.Frame) bool {
	if f.Has&decode.HasBTH == 0 || protostate.SpaceOf(f.BTH.OpCode, f.AETH.Syndrome) == protostate.SpaceNone {
		return false
	}
	k := f.FlowKey()
	q := r.seqs[k]
	if q == nil {
		q = new(protostate.QPSequences)
		r.seqs[k] = q
	}
	_, v := q.AddFrame(f)
	return v == protostate.PSNDuplicate
}

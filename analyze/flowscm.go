package analyze

import (
	"hash/maphash"

	"github.com/ibscope/ibscope/decode"
)

// restartFor starts afresh the PSN sequences of the flow a CM REQ or REP
// sets up (protostate.QPSequences.Restart): a REQ names its sender's QP
// and the PSN it will start its requests at, so the packets to that QP
// (the flow the other way, to the named QP) begin new sequences whatever
// PSN they carry; a REP does the same for its sender's QP. A flow not seen
// yet needs nothing: its first packet starts it.
func (a *FlowsAnalysis) restartFor(p *Packet) {
	m := p.CM
	if m.Message != decode.CMRequest && m.Message != decode.CMReply {
		return
	}
	k := reverseKey(p.Key)
	k.DestQP = m.QPN
	h := maphash.Comparable(a.seed, k)
	for f := a.index[h]; f != nil; f = f.sameHash {
		if f.key == k {
			f.psn.Restart()
			return
		}
	}
}

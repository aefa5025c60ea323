package correlate

import "github.com/ibscope/ibscope/decode"

// retransmits spots retransmitted packets: per flow (decode.FlowKey), a
// request or response whose PSN is not ahead of the highest one seen was
// sent before. ACKs and CNPs carry no sequence of their own and are skipped.
type retransmits struct {
	nextPSN map[decode.FlowKey]uint32 // per flow: the PSN after the highest seen
}

func newRetransmits() *retransmits {
	return &retransmits{nextPSN: make(map[decode.FlowKey]uint32)}
}

// psnMask keeps PSN arithmetic in its 24 bits.
const psnMask = 1<<24 - 1

// seen records f and reports whether it is a retransmission.
func (r *retransmits) seen(f *decode.Frame) bool {
	if f.Has&decode.HasBTH == 0 || f.BTH.OpCode.IsAck() || f.BTH.OpCode.IsCNP() {
		return false
	}
	k := f.FlowKey()
	psn := f.BTH.PSN & psnMask
	next, ok := r.nextPSN[k]
	// Serial-number comparison (RFC 1982 style) on 24 bits: psn is behind
	// next when next-psn, mod 2^24, lies in (0, 2^23).
	if ok {
		if behind := (next - psn) & psnMask; behind != 0 && behind < 1<<23 {
			return true
		}
	}
	r.nextPSN[k] = (psn + 1) & psnMask
	return false
}

package capture

import (
	"fmt"
	"strconv"

	"github.com/ibscope/ibscope/decode"
)

// Filter keeps packets by their IB headers. Each list that is not empty
// must match (a packet needs one of the QPs AND one of the LIDs ...); an
// empty Filter keeps everything.
type Filter struct {
	QPs     []uint32        // BTH destination QP numbers (24 bits)
	LIDs    []uint16        // LRH source or destination LIDs; RoCE packets have none, so never match
	Opcodes []decode.Opcode // BTH opcodes
}

// Empty reports whether the filter keeps every packet, so the caller can
// skip decoding.
func (f *Filter) Empty() bool {
	return f == nil || len(f.QPs) == 0 && len(f.LIDs) == 0 && len(f.Opcodes) == 0
}

// Match reports whether a decoded frame passes.
func (f *Filter) Match(fr *decode.Frame) bool {
	if f.Empty() {
		return true
	}
	hasBTH := fr.Has&decode.HasBTH != 0
	if len(f.QPs) > 0 && (!hasBTH || !contains(f.QPs, fr.BTH.DestQP)) {
		return false
	}
	if len(f.Opcodes) > 0 && (!hasBTH || !contains(f.Opcodes, fr.BTH.OpCode)) {
		return false
	}
	if len(f.LIDs) > 0 && (fr.Has&decode.HasLRH == 0 || !contains(f.LIDs, fr.LRH.SLID) && !contains(f.LIDs, fr.LRH.DLID)) {
		return false
	}
	return true
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ParseQP parses a QP number, decimal or 0x-prefixed hex, as ibv_devinfo
// and Wireshark print them.
func ParseQP(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil || v > 0xFFFFFF {
		return 0, fmt.Errorf("QP %q: want a 24-bit number, decimal or 0x hex", s)
	}
	return uint32(v), nil
}

// ParseLID parses a LID, decimal or 0x-prefixed hex.
func ParseLID(s string) (uint16, error) {
	v, err := strconv.ParseUint(s, 0, 16)
	if err != nil {
		return 0, fmt.Errorf("LID %q: want a 16-bit number, decimal or 0x hex", s)
	}
	return uint16(v), nil
}

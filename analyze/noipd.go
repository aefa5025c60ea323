package analyze

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
)

// ErrNoIPD is returned when no group had two packets: there is no IPD.
// The error Result returns is a *NoIPDError, which says what was found.
var ErrNoIPD = errors.New("no flow has two packets with a counted opcode: there is no inter-packet delay to report")

// NoIPDError is ErrNoIPD with what the analysis was given.
type NoIPDError struct {
	Counted  uint64      // packets with a counted opcode
	ByOpcode [256]uint64 // packets per opcode, counted or not, the MADs left out
	// MADs are the data packets to QP 0 and 1 the default opcodes leave out.
	MADs uint64
}

func (e *NoIPDError) Error() string {
	return fmt.Sprintf("%v (%d of the packets counted; found: %s)", ErrNoIPD, e.Counted, e.Found())
}

func (e *NoIPDError) Unwrap() error { return ErrNoIPD }

// Found describes the packets by kind, each with its first opcodes, e.g.
// "6 atomics (RC_COMPARE_SWAP, RC_FETCH_ADD) and 6 ACKs (RC_ATOMIC_ACKNOWLEDGE)".
func (e *NoIPDError) Found() string {
	var n [len(opcodeKinds)]uint64
	var names [len(opcodeKinds)][]string
	for op, c := range e.ByOpcode {
		if c > 0 {
			k := opcodeKind(decode.Opcode(op))
			n[k] += c
			names[k] = append(names[k], decode.Opcode(op).String())
		}
	}
	var parts []string
	if e.MADs > 0 {
		parts = append(parts, units.Count(e.MADs, "MAD")+" (UD SENDs to QP 0 or 1)")
	}
	for k, c := range n {
		if c == 0 {
			continue
		}
		kind := opcodeKinds[k][1]
		if c == 1 {
			kind = opcodeKinds[k][0]
		}
		ops := names[k]
		if len(ops) > foundOpcodes {
			ops = append(ops[:foundOpcodes:foundOpcodes], fmt.Sprintf("%d more", len(names[k])-foundOpcodes))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", c, kind, strings.Join(ops, ", ")))
	}
	switch len(parts) {
	case 0:
		return "no packets"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// foundOpcodes is how many opcodes Found names for each kind.
const foundOpcodes = 3

// AtomicsOnly reports whether every packet was an atomic request or an ACK.
func (e *NoIPDError) AtomicsOnly() bool {
	atomics := false
	for op, c := range e.ByOpcode {
		if c == 0 {
			continue
		}
		switch opcodeKind(decode.Opcode(op)) {
		case kindAtomic:
			atomics = true
		case kindAck:
		default:
			return false
		}
	}
	return atomics
}

// Kinds of opcode, for saying what a capture holds.
const (
	kindData = iota
	kindAtomic
	kindReadRequest
	kindAck
	kindCNP
	kindOther
)

// opcodeKinds names each kind, singular and plural.
var opcodeKinds = [...][2]string{{"data packet", "data packets"}, {"atomic", "atomics"}, {"RDMA READ request", "RDMA READ requests"},
	{"ACK", "ACKs"}, {"CNP", "CNPs"}, {"other packet", "other packets"}}

func opcodeKind(op decode.Opcode) int {
	switch {
	case op.IsData():
		return kindData
	case op.IsAck():
		return kindAck
	case op.IsCNP():
		return kindCNP
	case op.Valid() && (op&0x1f == 0x13 || op&0x1f == 0x14):
		return kindAtomic
	case op.Valid() && op&0x1f == 0x0c:
		return kindReadRequest
	}
	return kindOther
}

package decode

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseOpcode parses one opcode as a user gives it: its name as String
// prints it (RC_RDMA_WRITE_MIDDLE, VENDOR_0xc0, RESERVED_0x18; any case) or
// a number, decimal or 0x hex. Reserved opcodes are taken too: a capture can
// hold them.
func ParseOpcode(s string) (Opcode, error) {
	s = strings.TrimSpace(s)
	for op := range 256 {
		if strings.EqualFold(Opcode(op).String(), s) {
			return Opcode(op), nil
		}
	}
	if n, err := strconv.ParseUint(s, 0, 8); err == nil {
		return Opcode(n), nil
	}
	return 0, fmt.Errorf("opcode %q: want a name such as RC_SEND_ONLY or RC_RDMA_WRITE_MIDDLE, or a number 0-255", s)
}

// ParseOpcodes parses a comma-separated opcode list: what ParseOpcode takes,
// and the words "data" (the opcodes that carry payload), "ack" (the
// ACKNOWLEDGEs) and "all". It returns each opcode once, in numeric order; an
// empty list gives nil.
func ParseOpcodes(s string) ([]Opcode, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var set [256]bool
	for f := range strings.SplitSeq(s, ",") {
		var in func(Opcode) bool
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "data":
			in = Opcode.IsData
		case "ack":
			in = Opcode.IsAck
		case "all":
			in = func(Opcode) bool { return true }
		default:
			op, err := ParseOpcode(f)
			if err != nil {
				return nil, fmt.Errorf("%w, data, ack or all", err)
			}
			set[op] = true
			continue
		}
		for op := range 256 {
			set[op] = set[op] || in(Opcode(op))
		}
	}
	var out []Opcode
	for op, on := range set {
		if on {
			out = append(out, Opcode(op))
		}
	}
	return out, nil
}

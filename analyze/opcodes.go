package analyze

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/decode"
)

// ParseOpcodes parses an opcode list for --opcodes: names as decode prints
// them (RC_RDMA_WRITE_MIDDLE), numbers (7, 0x07), and the words "data"
// (opcodes that carry payload), "ack" (ACKs) and "all". An empty list means
// nil: the analysis default.
func ParseOpcodes(s string) ([]decode.Opcode, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var set [256]bool
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch strings.ToLower(f) {
		case "data":
			for op := range 256 {
				set[op] = set[op] || decode.Opcode(op).IsData()
			}
			continue
		case "ack":
			for op := range 256 {
				set[op] = set[op] || decode.Opcode(op).IsAck()
			}
			continue
		case "all":
			for op := range 256 {
				set[op] = true
			}
			continue
		}
		if op, ok := decode.OpcodeByName(strings.ToUpper(f)); ok {
			set[op] = true
			continue
		}
		n, err := strconv.ParseUint(f, 0, 8)
		if err != nil {
			return nil, fmt.Errorf("opcode %q: want a name such as RC_RDMA_WRITE_MIDDLE, a number 0-255, data, ack or all", f)
		}
		set[n] = true
	}
	var out []decode.Opcode
	for op, on := range set {
		if on {
			out = append(out, decode.Opcode(op))
		}
	}
	return out, nil
}

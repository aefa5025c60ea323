package capture

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/net/bpf"
)

// cbpfProgram runs a classic BPF program in user space, on the raw
// instructions, about 1 ns each: golang.org/x/net/bpf's VM dispatches on
// an interface per instruction and takes some 17 ns for each, too much for
// a verbs port that runs the program on every frame. The semantics are the
// kernel's (and that VM's): a load beyond the frame, or a division by
// zero, rejects the frame.
type cbpfProgram struct {
	ins []bpf.RawInstruction
}

// newCBPFProgram checks raw as the kernel checks a classic program
// (bpf_check_classic): known opcodes only, no ancillary loads, scratch
// slots 0-15, no constant division by zero, every jump inside the
// program, a return at the end. x/net/bpf's disassembler is laxer (it
// takes "ldx len" for "ld len"), so it is not the judge.
func newCBPFProgram(raw []bpf.RawInstruction) (*cbpfProgram, error) {
	if len(raw) == 0 || len(raw) > cbpfMaxInstructions {
		return nil, fmt.Errorf("%d instructions: want 1 to %d", len(raw), cbpfMaxInstructions)
	}
	for i, in := range raw {
		if in.Op > 0xff || !cbpfValidOps[in.Op] {
			return nil, fmt.Errorf("instruction %d: opcode %#x is not classic BPF's", i, in.Op)
		}
		left := uint64(len(raw) - i - 1) // instructions after this one
		switch in.Op & cbpfClassMask {
		case cbpfLD, cbpfLDX, cbpfST, cbpfSTX:
			mode := in.Op & cbpfModeMask
			if in.Op&cbpfClassMask == cbpfLD && mode == cbpfABS && in.K >= cbpfAncillary {
				return nil, fmt.Errorf("instruction %d: ancillary load %#x", i, in.K)
			}
			if (mode == cbpfMEM || in.Op == cbpfST || in.Op == cbpfSTX) && in.K > 15 {
				return nil, fmt.Errorf("instruction %d: scratch slot %d", i, in.K)
			}
		case cbpfALU:
			if op := in.Op & cbpfOpMask; (op == 0x30 || op == 0x90) && in.Op&cbpfSrcX == 0 && in.K == 0 {
				return nil, fmt.Errorf("instruction %d: division by zero", i)
			}
		case cbpfJMP:
			if in.Op&cbpfOpMask == 0x00 {
				if uint64(in.K) >= left {
					return nil, fmt.Errorf("instruction %d: jump past the end", i)
				}
			} else if uint64(in.Jt) >= left || uint64(in.Jf) >= left {
				return nil, fmt.Errorf("instruction %d: jump past the end", i)
			}
		}
	}
	if raw[len(raw)-1].Op&cbpfClassMask != cbpfRET {
		return nil, fmt.Errorf("the program does not end with a return")
	}
	return &cbpfProgram{ins: raw}, nil
}

// cbpfMaxInstructions is BPF_MAXINSNS.
const cbpfMaxInstructions = 4096

// cbpfValidOps are the opcodes the kernel takes in a classic program.
var cbpfValidOps = func() (ok [0x100]bool) {
	for _, op := range []uint16{
		cbpfLD | cbpfW | cbpfABS, cbpfLD | cbpfH | cbpfABS, cbpfLD | cbpfB | cbpfABS,
		cbpfLD | cbpfW | cbpfIND, cbpfLD | cbpfH | cbpfIND, cbpfLD | cbpfB | cbpfIND,
		cbpfLD | cbpfW | cbpfLEN, cbpfLD | cbpfW | cbpfIMM, cbpfLD | cbpfW | cbpfMEM,
		cbpfLDX | cbpfW | cbpfIMM, cbpfLDX | cbpfW | cbpfMEM, cbpfLDX | cbpfW | cbpfLEN, cbpfLDX | cbpfB | cbpfMSH,
		cbpfST, cbpfSTX, cbpfALU | 0x80, // NEG
		cbpfRET, cbpfRET | cbpfRetA, cbpfMISC, cbpfMISC | cbpfTXA,
		cbpfJMP, // JA
	} {
		ok[op] = true
	}
	for _, alu := range []uint16{0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0} {
		ok[cbpfALU|alu], ok[cbpfALU|alu|cbpfSrcX] = true, true
	}
	for _, jmp := range []uint16{0x10, 0x20, 0x30, 0x40} {
		ok[cbpfJMP|jmp], ok[cbpfJMP|jmp|cbpfSrcX] = true, true
	}
	return ok
}()

// Fields of a classic BPF opcode (linux/bpf_common.h).
const (
	cbpfClassMask = 0x07
	cbpfLD        = 0x00
	cbpfLDX       = 0x01
	cbpfST        = 0x02
	cbpfSTX       = 0x03
	cbpfALU       = 0x04
	cbpfJMP       = 0x05
	cbpfRET       = 0x06
	cbpfMISC      = 0x07

	cbpfSizeMask = 0x18
	cbpfW        = 0x00
	cbpfH        = 0x08
	cbpfB        = 0x10

	cbpfModeMask = 0xe0
	cbpfIMM      = 0x00
	cbpfABS      = 0x20
	cbpfIND      = 0x40
	cbpfMEM      = 0x60
	cbpfLEN      = 0x80
	cbpfMSH      = 0xa0

	cbpfOpMask = 0xf0
	cbpfSrcX   = 0x08 // operand X, not K
	cbpfRetA   = 0x10 // return A, not K
	cbpfTXA    = 0x80 // MISC: A = X (else TAX)

	cbpfAncillary = 0xfffff000 // SKF_AD_OFF: loads at and above it are not packet bytes
)

// run returns how many bytes of pkt the program keeps: 0 rejects it.
//
// It stays one loop over one switch, long as it is: split into a function
// per instruction class, every instruction of every packet would pay a
// call, and A, X and the scratch words would live in memory shared by the
// calls rather than in registers.
func (p *cbpfProgram) run(pkt []byte) uint32 {
	var a, x uint32
	var mem [16]uint32
	ins := p.ins
	for pc := 0; pc < len(ins); pc++ {
		in := &ins[pc]
		switch in.Op & cbpfClassMask {
		case cbpfLD:
			switch in.Op & cbpfModeMask {
			case cbpfABS:
				v, ok := load(pkt, uint64(in.K), in.Op&cbpfSizeMask)
				if !ok {
					return 0
				}
				a = v
			case cbpfIND:
				v, ok := load(pkt, uint64(in.K)+uint64(x), in.Op&cbpfSizeMask)
				if !ok {
					return 0
				}
				a = v
			case cbpfIMM:
				a = in.K
			case cbpfMEM:
				a = mem[in.K&15]
			case cbpfLEN:
				a = uint32(len(pkt))
			default:
				return 0
			}
		case cbpfLDX:
			switch in.Op & cbpfModeMask {
			case cbpfIMM:
				x = in.K
			case cbpfMEM:
				x = mem[in.K&15]
			case cbpfLEN:
				x = uint32(len(pkt))
			case cbpfMSH:
				if uint64(in.K) >= uint64(len(pkt)) {
					return 0
				}
				x = uint32(pkt[in.K]&0x0f) * 4
			default:
				return 0
			}
		case cbpfST:
			mem[in.K&15] = a
		case cbpfSTX:
			mem[in.K&15] = x
		case cbpfALU:
			v := in.K
			if in.Op&cbpfSrcX != 0 {
				v = x
			}
			switch in.Op & cbpfOpMask {
			case 0x00:
				a += v
			case 0x10:
				a -= v
			case 0x20:
				a *= v
			case 0x30:
				if v == 0 {
					return 0
				}
				a /= v
			case 0x40:
				a |= v
			case 0x50:
				a &= v
			case 0x60:
				a <<= v
			case 0x70:
				a >>= v
			case 0x80:
				a = -a
			case 0x90:
				if v == 0 {
					return 0
				}
				a %= v
			case 0xa0:
				a ^= v
			default:
				return 0
			}
		case cbpfJMP:
			op := in.Op & cbpfOpMask
			if op == 0x00 { // JA
				pc += int(in.K)
				continue
			}
			v := in.K
			if in.Op&cbpfSrcX != 0 {
				v = x
			}
			var cond bool
			switch op {
			case 0x10:
				cond = a == v
			case 0x20:
				cond = a > v
			case 0x30:
				cond = a >= v
			case 0x40:
				cond = a&v != 0
			default:
				return 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case cbpfRET:
			if in.Op&cbpfRetA != 0 {
				return a
			}
			return in.K
		case cbpfMISC:
			if in.Op&cbpfTXA != 0 {
				a = x
			} else {
				x = a
			}
		}
	}
	return 0
}

// load reads a big-endian word, half word or byte at off, if pkt holds it.
func load(pkt []byte, off uint64, size uint16) (uint32, bool) {
	switch size {
	case cbpfW:
		if off+4 > uint64(len(pkt)) {
			return 0, false
		}
		return binary.BigEndian.Uint32(pkt[off:]), true
	case cbpfH:
		if off+2 > uint64(len(pkt)) {
			return 0, false
		}
		return uint32(binary.BigEndian.Uint16(pkt[off:])), true
	case cbpfB:
		if off >= uint64(len(pkt)) {
			return 0, false
		}
		return uint32(pkt[off]), true
	}
	return 0, false
}

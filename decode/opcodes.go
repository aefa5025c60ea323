package decode

import (
	"strconv"

	"github.com/gopacket/gopacket"
)

// Opcode is the BTH OpCode: three bits of transport, five of operation.
type Opcode uint8

// Transport families, the top three bits of the opcode (IBA table 38).
const (
	FamilyRC     = 0x00
	FamilyUC     = 0x20
	FamilyRD     = 0x40
	FamilyUD     = 0x60
	FamilyCNP    = 0x80
	FamilyXRC    = 0xA0
	FamilyVendor = 0xC0 // 0xC0-0xFF: manufacturer specific
)

// OpcodeCNP is the RoCEv2 congestion notification packet opcode (Annex A17).
const OpcodeCNP Opcode = 0x81

// opInfo is what an opcode implies: its name and the headers after the BTH.
type opInfo struct {
	name  string
	exts  [6]ext // extNone-terminated
	valid bool
	// data is true for opcodes that carry a message payload (SEND, WRITE,
	// READ response); first/last mark message boundaries.
	data, first, last bool
}

// operation is one low-5-bit operation, shared by the RC, UC, RD, UD and XRC families.
type operation struct {
	name        string
	exts        []ext
	data        bool
	first, last bool
	families    []uint8
}

var rcucrdxrc = []uint8{FamilyRC, FamilyUC, FamilyRD, FamilyXRC}
var rcrdxrc = []uint8{FamilyRC, FamilyRD, FamilyXRC}

// operations is IBA table 38 (with 1.2.1's invalidate and 1.5's FLUSH and
// ATOMIC WRITE, RC only as rxe sends them), indexed by the low 5 bits.
var operations = map[uint8]operation{
	0x00: {"SEND_FIRST", nil, true, true, false, rcucrdxrc},
	0x01: {"SEND_MIDDLE", nil, true, false, false, rcucrdxrc},
	0x02: {"SEND_LAST", nil, true, false, true, rcucrdxrc},
	0x03: {"SEND_LAST_WITH_IMMEDIATE", []ext{extImmDt}, true, false, true, rcucrdxrc},
	0x04: {"SEND_ONLY", nil, true, true, true, append([]uint8{FamilyUD}, rcucrdxrc...)},
	0x05: {"SEND_ONLY_WITH_IMMEDIATE", []ext{extImmDt}, true, true, true, append([]uint8{FamilyUD}, rcucrdxrc...)},
	0x06: {"RDMA_WRITE_FIRST", []ext{extRETH}, true, true, false, rcucrdxrc},
	0x07: {"RDMA_WRITE_MIDDLE", nil, true, false, false, rcucrdxrc},
	0x08: {"RDMA_WRITE_LAST", nil, true, false, true, rcucrdxrc},
	0x09: {"RDMA_WRITE_LAST_WITH_IMMEDIATE", []ext{extImmDt}, true, false, true, rcucrdxrc},
	0x0A: {"RDMA_WRITE_ONLY", []ext{extRETH}, true, true, true, rcucrdxrc},
	0x0B: {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", []ext{extRETH, extImmDt}, true, true, true, rcucrdxrc},
	0x0C: {"RDMA_READ_REQUEST", []ext{extRETH}, false, false, false, rcrdxrc},
	0x0D: {"RDMA_READ_RESPONSE_FIRST", []ext{extAETH}, true, true, false, rcrdxrc},
	0x0E: {"RDMA_READ_RESPONSE_MIDDLE", nil, true, false, false, rcrdxrc},
	0x0F: {"RDMA_READ_RESPONSE_LAST", []ext{extAETH}, true, false, true, rcrdxrc},
	0x10: {"RDMA_READ_RESPONSE_ONLY", []ext{extAETH}, true, true, true, rcrdxrc},
	0x11: {"ACKNOWLEDGE", []ext{extAETH}, false, false, false, rcrdxrc},
	0x12: {"ATOMIC_ACKNOWLEDGE", []ext{extAETH, extAtomicAckETH}, false, false, false, rcrdxrc},
	0x13: {"COMPARE_SWAP", []ext{extAtomicETH}, false, false, false, rcrdxrc},
	0x14: {"FETCH_ADD", []ext{extAtomicETH}, false, false, false, rcrdxrc},
	0x15: {"RESYNC", nil, false, false, false, []uint8{FamilyRD}},
	0x16: {"SEND_LAST_WITH_INVALIDATE", []ext{extIETH}, true, false, true, []uint8{FamilyRC, FamilyXRC}},
	0x17: {"SEND_ONLY_WITH_INVALIDATE", []ext{extIETH}, true, true, true, []uint8{FamilyRC, FamilyXRC}},
	0x1C: {"FLUSH", []ext{extFETH, extRETH}, false, false, false, []uint8{FamilyRC}},
	0x1D: {"ATOMIC_WRITE", []ext{extRETH}, true, true, true, []uint8{FamilyRC}}, // 8 bytes of data
}

// The RD family is named DC: ibscope reads it as Mellanox DC (dc.go).
var familyNames = map[uint8]string{FamilyRC: "RC", FamilyUC: "UC", FamilyRD: "DC", FamilyUD: "UD", FamilyXRC: "XRC"}

// opTable is built once from operations: every one of the 256 opcodes.
var opTable = buildOpTable()

func buildOpTable() (t [256]opInfo) {
	for low, op := range operations {
		for _, fam := range op.families {
			info := opInfo{name: familyNames[fam] + "_" + op.name, valid: true, data: op.data, first: op.first, last: op.last}
			var chain []ext
			switch {
			case fam == FamilyRD:
				chain = dcChain(low, op.exts) // read as Mellanox DC (dc.go)
			case fam == FamilyUD:
				chain = append(chain, extDETH)
			case fam == FamilyXRC && !(low == 0x11 || low == 0x12 || (low >= 0x0D && low <= 0x10)):
				chain = append(chain, extXRCETH) // XRC requests carry the XRC SRQ
			}
			if fam != FamilyRD {
				chain = append(chain, op.exts...)
			}
			copy(info.exts[:], chain)
			t[fam|low] = info
		}
	}
	t[0x80] = opInfo{name: "CNP_IB", valid: true}
	t[OpcodeCNP] = opInfo{name: "CNP", valid: true, exts: [6]ext{extCNPPad}}
	for op := FamilyVendor; op <= 0xFF; op++ {
		t[op] = opInfo{name: "VENDOR_0x" + strconv.FormatUint(uint64(op), 16), valid: true, data: true}
	}
	return t
}

// String returns the opcode's name, e.g. "RC_RDMA_WRITE_MIDDLE"; reserved
// opcodes read "RESERVED_0x18".
func (o Opcode) String() string {
	if t := &opTable[o]; t.valid {
		return t.name
	}
	return "RESERVED_0x" + strconv.FormatUint(uint64(o), 16)
}

// Valid reports whether the opcode is defined (including the vendor range).
func (o Opcode) Valid() bool { return opTable[o].valid }

// Family returns the transport bits (FamilyRC, FamilyUC, ...).
func (o Opcode) Family() uint8 { return uint8(o) & 0xE0 }

// IsData reports whether the opcode carries message payload (SEND, RDMA WRITE,
// RDMA READ response, vendor).
func (o Opcode) IsData() bool { return opTable[o].data }

// IsFirst reports whether the opcode opens a message (FIRST or ONLY).
func (o Opcode) IsFirst() bool { return opTable[o].first }

// IsLast reports whether the opcode closes a message (LAST or ONLY).
func (o Opcode) IsLast() bool { return opTable[o].last }

// IsCNP reports whether the opcode is a congestion notification (IB 0x80 or RoCE 0x81).
func (o Opcode) IsCNP() bool { return o == 0x80 || o == OpcodeCNP }

// IsAck reports whether the opcode is ACKNOWLEDGE or ATOMIC_ACKNOWLEDGE of any family.
func (o Opcode) IsAck() bool {
	low := uint8(o) & 0x1F
	return opTable[o].valid && o.Family() < FamilyCNP && (low == 0x11 || low == 0x12)
}

// Headers appends to dst the layer types of the extended transport headers
// that follow the BTH for this opcode, in wire order (e.g. RETH then ImmDt for
// RDMA_WRITE_ONLY_WITH_IMMEDIATE; the CNP's reserved block for 0x81). DC's 0x55
// lists DCConnect, present only when the BTH's solicited event bit is clear.
func (o Opcode) Headers(dst []gopacket.LayerType) []gopacket.LayerType {
	for _, e := range opTable[o].exts {
		if e == extNone {
			break
		}
		dst = append(dst, extLayerTypes[e])
	}
	return dst
}

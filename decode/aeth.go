package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// AETHLen is the AETH's size in bytes.
const AETHLen = 4

// AETH is the ACK Extended Transport Header (4 bytes): syndrome and MSN.
type AETH struct {
	extBase
	Syndrome uint8
	MSN      uint32 // message sequence number, 24 bits
}

// AckKind is the type encoded in bits 6-5 of the AETH syndrome.
type AckKind uint8

// AETH syndrome kinds.
const (
	AckKindACK      AckKind = 0
	AckKindRNRNAK   AckKind = 1
	AckKindReserved AckKind = 2
	AckKindNAK      AckKind = 3
)

var ackKindNames = [...]string{"ACK", "RNR_NAK", "RESERVED", "NAK"}

func (k AckKind) String() string { return ackKindNames[k&3] }

// NAK codes (syndrome bits 4-0 when the kind is NAK).
const (
	NAKPSNSequenceError  = 0
	NAKInvalidRequest    = 1
	NAKRemoteAccessError = 2
	NAKRemoteOperational = 3
	NAKInvalidRDRequest  = 4
)

var nakNames = [...]string{"PSN_SEQUENCE_ERROR", "INVALID_REQUEST", "REMOTE_ACCESS_ERROR", "REMOTE_OPERATIONAL_ERROR", "INVALID_RD_REQUEST"}

// NAKName names a NAK code, "RESERVED" beyond the defined ones.
func NAKName(code uint8) string {
	if int(code) < len(nakNames) {
		return nakNames[code]
	}
	return "RESERVED"
}

// rnrTimerNs is IBA table 45: RNR NAK timer field to the minimum delay, in ns.
var rnrTimerNs = [32]int64{655360000, 10000, 20000, 30000, 40000, 60000, 80000, 120000,
	160000, 240000, 320000, 480000, 640000, 960000, 1280000, 1920000, 2560000, 3840000,
	5120000, 7680000, 10240000, 15360000, 20480000, 30720000, 40960000, 61440000, 81920000,
	122880000, 163840000, 245760000, 327680000, 491520000}

// Kind returns the syndrome's type: ACK, RNR NAK or NAK.
func (h *AETH) Kind() AckKind { return AckKind(h.Syndrome>>5) & 3 }

// Value returns syndrome bits 4-0: the credit count (ACK), the RNR timer
// (RNR NAK) or the NAK code (NAK).
func (h *AETH) Value() uint8 { return h.Syndrome & 0x1F }

// RNRDelayNs returns the RNR NAK timer as a delay in ns (IBA table 45).
func (h *AETH) RNRDelayNs() int64 { return rnrTimerNs[h.Value()] }

// extAETH is the AETH's kind.
const extAETH ext = 6

// LayerTypeAETH is the AETH's gopacket layer type.
var LayerTypeAETH = registerExt(extAETH, extHeader{name: "AETH", layer: 1508, len: AETHLen, has: HasAETH,
	new: func(b extBase) extLayer { return &AETH{extBase: b} }})

// LayerType returns LayerTypeAETH.
func (h *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (h *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *AETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extAETH) }

// DecodeFromBytes decodes an AETH.
func (h *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extAETH
	b, err := h.take(data, df)
	if err == nil {
		h.Syndrome = b[0]
		h.MSN = binary.BigEndian.Uint32(b) & 0xFFFFFF
	}
	return err
}

// SerializeTo prepends the AETH.
func (h *AETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extAETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.MSN&0xFFFFFF)
		b[0] = h.Syndrome
	}
	return err
}

// aethFields: "aeth": {syndrome, msn}; its summary words are the BTH's
// (appendSummary).
var aethFields = headerFields{
	order: 110,
	has:   HasAETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"aeth":{"syndrome":`...)
		dst = strconv.AppendUint(dst, uint64(f.AETH.Syndrome), 10)
		dst = appendInt(dst, "msn", int64(f.AETH.MSN))
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasAETH, Columns: []Column{
		{"aeth_syndrome", ColumnUint8, "AETH syndrome"},
		{"aeth_msn", ColumnUint32, "AETH message sequence number (24 bits)"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1] = uint64(f.AETH.Syndrome), uint64(f.AETH.MSN)
	}}},
}

func init() { registerFields(&aethFields) }

// appendSummary appends the AETH's words for a packet of opcode op. An ACK
// says what it is; an RDMA READ response carries an AETH too, whose
// syndrome is shown only when it is not the ACK it must be, so that the
// line does not read as an ACK.
func (h *AETH) appendSummary(dst []byte, op Opcode) []byte {
	if k := h.Kind(); op.IsAck() || k != AckKindACK {
		dst = append(append(dst, ' '), k.String()...)
		if k == AckKindNAK {
			dst = append(append(dst, ' '), NAKName(h.Value())...)
		}
	}
	return strconv.AppendUint(append(dst, " msn "...), uint64(h.MSN), 10)
}

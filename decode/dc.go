package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// No hardware implements the IBA's Reliable Datagram; the opcodes of its
// family (0x40-0x55) are sent by ConnectX's Dynamically Connected (DC)
// transport, with 8 more bytes after the BTH. ibscope reads that family as
// DC, the way Wireshark 4.0 does (it has no preference for it: every RD
// opcode is DC there, its Info column says "DC"):
//
//   - requests: DCHeader, RDETH, DETH, then the operation's headers (RETH,
//     ImmDt, AtomicETH), so the RETH sits 20 bytes after the BTH;
//   - ACKNOWLEDGE: DCHeader, AETH (no RDETH);
//   - READ responses: DCHeader, RDETH, AETH (MIDDLE: no AETH);
//     ATOMIC ACKNOWLEDGE: DCHeader, RDETH, AETH, AtomicAckETH;
//   - opcode 0x55 (RD's RESYNC): DCHeader, then, when the BTH's solicited
//     event bit is clear, a 16-byte DC connect header (DCConnect).
//
// The layout of the 8 and 16 bytes is not public and Wireshark shows no
// field of them; ibscope keeps their bytes.

// DCHeader is the 8 bytes a DC packet carries after the BTH.
type DCHeader struct {
	extBase
	Bytes uint64 // the 8 bytes, big-endian
}

// extDCHeader is the DCHeader's kind.
const extDCHeader ext = 11

// LayerTypeDCHeader is the DCHeader's gopacket layer type.
var LayerTypeDCHeader = registerExt(extDCHeader, extHeader{name: "DCHeader", layer: 1521, len: 8, has: HasDCHeader,
	new: func(b extBase) extLayer { return &DCHeader{extBase: b} }})

// LayerType returns LayerTypeDCHeader.
func (h *DCHeader) LayerType() gopacket.LayerType { return LayerTypeDCHeader }

// CanDecode returns LayerTypeDCHeader.
func (h *DCHeader) CanDecode() gopacket.LayerClass { return LayerTypeDCHeader }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *DCHeader) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extDCHeader) }

// DecodeFromBytes decodes the DC header.
func (h *DCHeader) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extDCHeader
	b, err := h.take(data, df)
	if err == nil {
		h.Bytes = binary.BigEndian.Uint64(b)
	}
	return err
}

// SerializeTo prepends the DC header.
func (h *DCHeader) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extDCHeader
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint64(b, h.Bytes)
	}
	return err
}

// DCConnect is the 16-byte header of a DC connect packet (opcode 0x55 with
// the solicited event bit clear).
type DCConnect struct {
	extBase
	Bytes [16]byte
}

// extDCConnect is the DCConnect's kind.
const extDCConnect ext = 12

// LayerTypeDCConnect is the DCConnect's gopacket layer type.
var LayerTypeDCConnect = registerExt(extDCConnect, extHeader{name: "DCConnect", layer: 1522, len: 16, has: HasDCConnect,
	new: func(b extBase) extLayer { return &DCConnect{extBase: b} }})

// LayerType returns LayerTypeDCConnect.
func (h *DCConnect) LayerType() gopacket.LayerType { return LayerTypeDCConnect }

// CanDecode returns LayerTypeDCConnect.
func (h *DCConnect) CanDecode() gopacket.LayerClass { return LayerTypeDCConnect }

// NextLayerType returns the payload.
func (h *DCConnect) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extDCConnect) }

// DecodeFromBytes decodes the DC connect header.
func (h *DCConnect) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extDCConnect
	b, err := h.take(data, df)
	if err == nil {
		copy(h.Bytes[:], b)
	}
	return err
}

// SerializeTo prepends the DC connect header.
func (h *DCConnect) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extDCConnect
	b, err := h.put(sb)
	if err == nil {
		copy(b, h.Bytes[:])
	}
	return err
}

// dcChain is the header chain of DC opcode low (the low 5 bits), before
// the operation's own headers for requests; see the comment above.
func dcChain(low uint8, opExts []ext) []ext {
	switch {
	case low == 0x11: // ACKNOWLEDGE
		return []ext{extDCHeader, extAETH}
	case low == 0x15: // connect (RD RESYNC)
		return []ext{extDCHeader, extDCConnect}
	case low == 0x12 || (low >= 0x0D && low <= 0x10): // responses
		return append([]ext{extDCHeader, extRDETH}, opExts...)
	}
	return append([]ext{extDCHeader, extRDETH, extDETH}, opExts...)
}

// dcConnectAbsent reports whether a chain's DCConnect is left out: it is
// there only when the solicited event bit is clear.
func dcConnectAbsent(e ext, se bool) bool { return e == extDCConnect && se }

// dcFields: "dc": {header, connect}: a DC packet's 8-byte header after the
// BTH, and whether a connect header follows.
var dcFields = headerFields{
	order: 60,
	has:   HasDCHeader,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"dc":{"header":`...)
		dst = strconv.AppendUint(dst, f.DCHeader.Bytes, 10)
		dst = appendBool(dst, "connect", f.Has&HasDCConnect != 0)
		return append(dst, '}')
	},
}

func init() { registerFields(&dcFields) }

package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// GRH is the InfiniBand Global Route Header (40 bytes), shaped like an IPv6
// header. RoCEv1 frames carry it right after the Ethernet header.
type GRH struct {
	layers.BaseLayer
	IPVer      uint8  // 4 bits, 6
	TClass     uint8  // traffic class
	FlowLabel  uint32 // 20 bits
	PayLen     uint16 // bytes after the GRH through the ICRC
	NxtHdr     uint8  // 0x1B for an IBA transport header
	HopLmt     uint8
	SGID, DGID [16]byte
}

// GRHLen is the GRH size in bytes.
const GRHLen = 40

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType returns the BTH when NxtHdr says IBA.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NxtHdr == GRHNextHeaderIBA {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// SrcGID and DstGID return the GIDs as addresses (IPv4-mapped GIDs stay IPv6).
func (g *GRH) SrcGID() netip.Addr { return netip.AddrFrom16(g.SGID) }

// DstGID returns the destination GID as an address.
func (g *GRH) DstGID() netip.Addr { return netip.AddrFrom16(g.DGID) }

// DecodeFromBytes decodes a GRH; its payload is PayLen bytes (through the ICRC).
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < GRHLen {
		df.SetTruncated()
		return fmt.Errorf("GRH: %d bytes, need %d", len(data), GRHLen)
	}
	w := binary.BigEndian.Uint32(data)
	g.IPVer = uint8(w >> 28)
	g.TClass = uint8(w >> 20)
	g.FlowLabel = w & 0xFFFFF
	g.PayLen = binary.BigEndian.Uint16(data[4:])
	g.NxtHdr = data[6]
	g.HopLmt = data[7]
	copy(g.SGID[:], data[8:24])
	copy(g.DGID[:], data[24:40])
	end := GRHLen + int(g.PayLen)
	if end > len(data) {
		df.SetTruncated()
		end = len(data)
	}
	g.Contents = data[:GRHLen]
	g.Payload = data[GRHLen:end]
	return nil
}

// SerializeTo prepends the GRH; with FixLengths PayLen covers the inner layers.
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		g.PayLen = uint16(len(b.Bytes()))
	}
	h, err := b.PrependBytes(GRHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h, uint32(g.IPVer)<<28|uint32(g.TClass)<<20|g.FlowLabel&0xFFFFF)
	binary.BigEndian.PutUint16(h[4:], g.PayLen)
	h[6] = g.NxtHdr
	h[7] = g.HopLmt
	copy(h[8:], g.SGID[:])
	copy(h[24:], g.DGID[:])
	return nil
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	p.SetNetworkLayer(g)
	return p.NextDecoder(g.NextLayerType())
}

// NetworkFlow implements gopacket.NetworkLayer with the GIDs as IPv6 endpoints.
func (g *GRH) NetworkFlow() gopacket.Flow {
	return gopacket.NewFlow(layers.EndpointIPv6, g.SGID[:], g.DGID[:])
}

// grhFields: the GRH's GIDs.
var grhFields = headerFields{
	order: 40,
	has:   HasGRH,
	json: func(dst []byte, f *Frame) []byte {
		dst = appendAddr(dst, "sgid", f.GRH.SrcGID())
		return appendAddr(dst, "dgid", f.GRH.DstGID())
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		dst = append(f.GRH.SrcGID().AppendTo(dst), " -> "...)
		return f.GRH.DstGID().AppendTo(dst)
	},
	columns: []ColumnGroup{{any: HasGRH, Columns: []Column{
		{"sgid", ColumnAddr, "GRH source GID"},
		{"dgid", ColumnAddr, "GRH destination GID"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Addr[0], v.Addr[1] = f.GRH.SrcGID(), f.GRH.DstGID()
	}}},
}

func init() { registerFields(&grhFields) }

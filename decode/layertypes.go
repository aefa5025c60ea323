package decode

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Layer type numbers: gopacket keeps numbers below 2000 in a fast array and
// uses only the low hundreds itself. The extended transport headers' are
// registered in their own files (registerExt): 1503-1512 and 1521-1523.
var (
	LayerTypeLRH         = gopacket.RegisterLayerType(1500, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH         = gopacket.RegisterLayerType(1501, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH         = gopacket.RegisterLayerType(1502, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeLinkFCP     = gopacket.RegisterLayerType(1513, gopacket.LayerTypeMetadata{Name: "LinkFCP", Decoder: gopacket.DecodeFunc(decodeLinkFCP)})
	LayerTypeERF         = gopacket.RegisterLayerType(1514, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: gopacket.DecodeFunc(decodeERF)})
	LayerTypePFC         = gopacket.RegisterLayerType(1515, gopacket.LayerTypeMetadata{Name: "PFC", Decoder: gopacket.DecodeFunc(decodeMACControl)})
	LayerTypePause       = gopacket.RegisterLayerType(1516, gopacket.LayerTypeMetadata{Name: "Pause", Decoder: gopacket.DecodeFunc(decodeMACControl)})
	LayerTypeIFA         = gopacket.RegisterLayerType(1517, gopacket.LayerTypeMetadata{Name: "IFA", Decoder: gopacket.DecodeFunc(decodeIFA)})
	LayerTypeIFAMetadata = gopacket.RegisterLayerType(1518, gopacket.LayerTypeMetadata{Name: "IFAMetadata", Decoder: gopacket.DecodeFunc(decodeIFAMetadata)})
	LayerTypeIFA1        = gopacket.RegisterLayerType(1519, gopacket.LayerTypeMetadata{Name: "IFA1", Decoder: gopacket.DecodeFunc(decodeIFA1)})
	LayerTypeMAD         = gopacket.RegisterLayerType(1520, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMAD)})
)

// Link types ibscope reads beyond gopacket's enum.
const (
	LinkTypeEthernet   = 1
	LinkTypeLinuxSLL   = 113
	LinkTypeERF        = 197
	LinkTypeInfiniBand = 247
	LinkTypeLinuxSLL2  = 276
)

// Well-known numbers that lead to IB transport headers.
const (
	UDPPortRoCEv2     = 4791
	EtherTypeRoCEv1   = 0x8915
	GRHNextHeaderIBA  = 0x1B // GRH NxtHdr for an IBA transport header
	ERFTypeEthernet   = 2
	ERFTypeInfiniBand = 21
	ERFTypeIBLink     = 25
)

func init() {
	layers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
	layers.EthernetTypeMetadata[EtherTypeRoCEv1] = layers.EnumMetadata{DecodeWith: gopacket.DecodeFunc(decodeGRH), Name: "RoCEv1", LayerType: LayerTypeGRH}
	layers.EthernetTypeMetadata[EtherTypeMACControl] = layers.EnumMetadata{DecodeWith: gopacket.DecodeFunc(decodeMACControl), Name: "MACControl"}
	layers.IPProtocolMetadata[IPProtocolIFA] = layers.EnumMetadata{DecodeWith: gopacket.DecodeFunc(decodeIFA), Name: "IFA", LayerType: LayerTypeIFA}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{DecodeWith: gopacket.DecodeFunc(decodeInfiniBand), Name: "InfiniBand"}
	layers.LinkTypeMetadata[LinkTypeERF] = layers.EnumMetadata{DecodeWith: gopacket.DecodeFunc(decodeERF), Name: "ERF"}
}

// decodeInfiniBand decodes a LINKTYPE_INFINIBAND record: a 6-byte link
// (flow-control) packet, or a packet that starts with its LRH.
func decodeInfiniBand(data []byte, p gopacket.PacketBuilder) error {
	if len(data) == LinkFCPLen {
		return decodeLinkFCP(data, p)
	}
	return decodeLRH(data, p)
}

// nextAfter returns the layer that follows header e (extNone: the BTH) for opcode op.
func nextAfter(op Opcode, e ext) gopacket.LayerType {
	chain := &opTable[op].exts
	i := 0
	if e != extNone {
		for i < len(chain) && chain[i] != e {
			i++
		}
		i++
	}
	if i < len(chain) && chain[i] != extNone {
		return extLayerTypes[chain[i]]
	}
	return gopacket.LayerTypePayload
}

// extDecoder decodes one extended transport header in a gopacket.Packet.
type extDecoder ext

// Decode implements gopacket.Decoder. The opcode comes from the BTH already in the packet.
func (e extDecoder) Decode(data []byte, p gopacket.PacketBuilder) error {
	var op Opcode
	if pk, ok := p.(gopacket.Packet); ok {
		if b, ok := pk.Layer(LayerTypeBTH).(*BTH); ok {
			op = b.OpCode
		}
	}
	if pk, ok := p.(gopacket.Packet); ok && ext(e) == extDCConnect {
		if b, ok := pk.Layer(LayerTypeBTH).(*BTH); ok && dcConnectAbsent(extDCConnect, b.SE) {
			return decodeIBPayload(data, p, op)
		}
	}
	l := newExtLayer(ext(e), op)
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	next := l.NextLayerType()
	if next == gopacket.LayerTypePayload {
		return decodeIBPayload(l.LayerPayload(), p, op)
	}
	return p.NextDecoder(next)
}

// decodeIBPayload adds the message payload (pad bytes removed) as the last
// layer: a MAD on QP0 and QP1 (mad.go), data otherwise.
func decodeIBPayload(data []byte, p gopacket.PacketBuilder, op Opcode) error {
	if len(data) == 0 {
		return nil
	}
	if pk, ok := p.(gopacket.Packet); ok && len(data) >= MADHeaderLen {
		// The layers are found by type: naming LayerTypeBTH here would make
		// its registration depend on itself.
		var b *BTH
		var d *DETH
		for _, l := range pk.Layers() {
			switch l := l.(type) {
			case *BTH:
				b = l
			case *DETH:
				d = l
			}
		}
		if b != nil && d != nil && isMADPacket(op, b.DestQP, d.SrcQP) {
			return decodeMAD(data, p)
		}
	}
	p.AddLayer(gopacket.Payload(data))
	p.SetApplicationLayer(gopacket.Payload(data))
	return nil
}

// decodeMAD decodes a MAD as the last layer of a packet.
func decodeMAD(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	p.SetApplicationLayer(gopacket.Payload(data))
	return nil
}

package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Inband Flow Analyzer probes (draft-kumar-ippm-ifa-08), which DOCA PCC can
// send and answer on RoCE: each switch on the path appends its metadata
// (queue, residence time, congestion) to the probe.
//
// IFA 2.0 (draft-08, the "IFA Header" and "IFA Metadata Header" sections):
// the 4-byte IFA header follows the IP header, whose protocol field names
// IFA, and keeps the original protocol in NextHdr; the 4-byte metadata header
// and the metadata stack follow the L4 header (payload stamping) or end the
// packet (tail stamping, the TS flag). The initiator does not update the L4
// length or checksum, so a RoCEv2 probe reads
//
//	IP (protocol IFA) | IFA header | UDP 4791 | metadata header | stack | BTH ... ICRC
//
// IFA 1.0 puts a 64-bit probe marker, chosen by the operator, and its header
// at the start of the L4 payload; it is recognised only when the marker is
// given (Decoder.IFA1ProbeMarker).

// IPProtocolIFA is the IP protocol that marks IFA 2.0: the draft asks IANA
// for a number; deployments use 253, from the experimental range of RFC 3692.
const IPProtocolIFA = 253

// IFA header sizes and flags.
const (
	IFAHeaderLen         = 4
	IFAMetadataHeaderLen = 4
	IFAHopLen            = 32 // one hop's metadata in the LNS layout (IFAHop)
	IFA1HeaderLen        = 28 // IFA 1.0: probe marker and header
	IFAVersion2          = 2
	IFANoGNS             = 0xF // GNS 0xF: each hop's metadata is laid out by its LNS

	IFAFlagC  = 0x01 // a checksum header follows the metadata header
	IFAFlagTA = 0x02 // turn-around: the terminating node sends the probe back
	IFAFlagI  = 0x04 // inband: live traffic, not a cloned probe
	IFAFlagTS = 0x08 // tail stamping: stack and metadata header end the packet
	IFAFlagMF = 0x10 // metadata fragmentation: a fragment header follows
)

// IFA is the IFA 2.0 header (4 bytes), between the IP header and the L4 header.
type IFA struct {
	layers.BaseLayer
	Version   uint8 // 4 bits, 2
	GNS       uint8 // global namespace, 4 bits; IFANoGNS: each hop's LNS decides
	NextHdr   uint8 // the IP protocol the IFA header displaced (17: UDP)
	Flags     uint8 // IFAFlagMF, IFAFlagTS, IFAFlagI, IFAFlagTA, IFAFlagC
	MaxLength uint8 // the most the metadata stack may grow to, in 4-byte words
}

// LayerType returns LayerTypeIFA.
func (h *IFA) LayerType() gopacket.LayerType { return LayerTypeIFA }

// CanDecode returns LayerTypeIFA.
func (h *IFA) CanDecode() gopacket.LayerClass { return LayerTypeIFA }

// NextLayerType returns the layer of the displaced protocol.
func (h *IFA) NextLayerType() gopacket.LayerType { return layers.IPProtocol(h.NextHdr).LayerType() }

// DecodeFromBytes decodes an IFA header.
func (h *IFA) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IFAHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("IFA header: %d bytes, need %d", len(data), IFAHeaderLen)
	}
	h.parse(data)
	h.Contents, h.Payload = data[:IFAHeaderLen], data[IFAHeaderLen:]
	return nil
}

func (h *IFA) parse(b []byte) {
	h.Version, h.GNS = b[0]>>4, b[0]&0x0F
	h.NextHdr, h.Flags, h.MaxLength = b[1], b[2], b[3]
}

// SerializeTo prepends the IFA header.
func (h *IFA) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(IFAHeaderLen)
	if err == nil {
		p[0], p[1], p[2], p[3] = h.Version<<4|h.GNS&0x0F, h.NextHdr, h.Flags, h.MaxLength
	}
	return err
}

// IFAMetadata is the IFA 2.0 metadata header and the stack of hop metadata
// it counts. The newest hop comes first.
type IFAMetadata struct {
	layers.BaseLayer
	RequestVector uint8 // which metadata each hop should insert
	ActionVector  uint8 // bit 7 L (loss), bit 6 C (color)
	HopLimit      uint8 // hops that may still insert metadata; each hop decrements it
	CurrentLength uint8 // the stack's length in 4-byte words
	Stack         []byte
}

// LayerType returns LayerTypeIFAMetadata.
func (m *IFAMetadata) LayerType() gopacket.LayerType { return LayerTypeIFAMetadata }

// CanDecode returns LayerTypeIFAMetadata.
func (m *IFAMetadata) CanDecode() gopacket.LayerClass { return LayerTypeIFAMetadata }

// NextLayerType returns LayerTypePayload: what follows is the L4 payload,
// which only the L4 header before the metadata can name.
func (m *IFAMetadata) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes the metadata header and the CurrentLength words of
// stack after it (payload stamping).
func (m *IFAMetadata) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IFAMetadataHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("IFA metadata header: %d bytes, need %d", len(data), IFAMetadataHeaderLen)
	}
	m.parse(data)
	n := IFAMetadataHeaderLen + m.StackBytes()
	if len(data) < n {
		df.SetTruncated()
		m.Stack = data[IFAMetadataHeaderLen:]
		return &headerError{3, fmt.Sprintf("IFA metadata stack of %d words (%d bytes) runs past the %d bytes there are", m.CurrentLength, m.StackBytes(), len(data)-IFAMetadataHeaderLen)}
	}
	m.Stack = data[IFAMetadataHeaderLen:n]
	m.Contents, m.Payload = data[:n], data[n:]
	return nil
}

func (m *IFAMetadata) parse(b []byte) {
	m.RequestVector, m.ActionVector, m.HopLimit, m.CurrentLength = b[0], b[1], b[2], b[3]
}

// StackBytes returns the stack's length in bytes, as the header gives it.
func (m *IFAMetadata) StackBytes() int { return int(m.CurrentLength) * 4 }

// Hops returns the number of whole hop entries (IFAHopLen bytes) in the stack.
func (m *IFAMetadata) Hops() int { return len(m.Stack) / IFAHopLen }

// Hop returns hop entry i (0: the newest), i < Hops().
func (m *IFAMetadata) Hop(i int) IFAHop {
	var h IFAHop
	h.parse(m.Stack[i*IFAHopLen : (i+1)*IFAHopLen])
	return h
}

// SerializeTo prepends the metadata header and Stack. With FixLengths
// CurrentLength is set from the stack (whole words).
func (m *IFAMetadata) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		m.CurrentLength = uint8(min(len(m.Stack)/4, 255))
	}
	p, err := b.PrependBytes(IFAMetadataHeaderLen + len(m.Stack))
	if err == nil {
		p[0], p[1], p[2], p[3] = m.RequestVector, m.ActionVector, m.HopLimit, m.CurrentLength
		copy(p[IFAMetadataHeaderLen:], m.Stack)
	}
	return err
}

// IFAHop is one hop's metadata in the LNS layout (32 bytes): who stamped
// the probe, when it arrived, how long it stayed and how congested the
// egress queue was.
type IFAHop struct {
	LNS             uint8  // local namespace, 4 bits: the layout of this entry
	DeviceID        uint32 // 20 bits
	IPTTL           uint8  // the IP TTL as received
	EgressPortSpeed uint8  // 4 bits: 0 10G, 1 25G, 2 40G, 3 50G, 4 100G, 5 200G, 6 400G
	Congestion      uint8  // 2 bits: the ECN the hop saw or set
	QueueID         uint8  // 6 bits
	RxTimeSec       uint32 // receive time, seconds, 20 bits
	EgressPort      uint16
	IngressPort     uint16
	RxTimeNs        uint32 // receive time, ns within the second
	ResidenceNs     uint32 // time from arrival to departure at this hop, ns
	Opaque          [12]byte
}

// IFAPortName names one egress port of one switch as the reports print
// it: "dev 0xDEVICE_ID/LNS port EGRESS_PORT".
func IFAPortName(deviceID uint32, lns uint8, egressPort uint16) string {
	return fmt.Sprintf("dev 0x%05x/%d port %d", deviceID, lns, egressPort)
}

func (h *IFAHop) parse(b []byte) {
	w0, w1 := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	h.LNS, h.DeviceID, h.IPTTL = uint8(w0>>28), w0>>8&0xFFFFF, uint8(w0)
	h.EgressPortSpeed, h.Congestion, h.QueueID, h.RxTimeSec = uint8(w1>>28), uint8(w1>>26&3), uint8(w1>>20&0x3F), w1&0xFFFFF
	h.EgressPort, h.IngressPort = binary.BigEndian.Uint16(b[8:]), binary.BigEndian.Uint16(b[10:])
	h.RxTimeNs, h.ResidenceNs = binary.BigEndian.Uint32(b[12:]), binary.BigEndian.Uint32(b[16:])
	copy(h.Opaque[:], b[20:IFAHopLen])
}

// AppendTo appends the entry's IFAHopLen bytes to b.
func (h *IFAHop) AppendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(h.LNS&0xF)<<28|(h.DeviceID&0xFFFFF)<<8|uint32(h.IPTTL))
	b = binary.BigEndian.AppendUint32(b, uint32(h.EgressPortSpeed&0xF)<<28|uint32(h.Congestion&3)<<26|uint32(h.QueueID&0x3F)<<20|h.RxTimeSec&0xFFFFF)
	b = binary.BigEndian.AppendUint16(b, h.EgressPort)
	b = binary.BigEndian.AppendUint16(b, h.IngressPort)
	b = binary.BigEndian.AppendUint32(b, h.RxTimeNs)
	b = binary.BigEndian.AppendUint32(b, h.ResidenceNs)
	return append(b, h.Opaque[:]...)
}

// IFA1 is an IFA 1.0 probe header (28 bytes) at the start of the L4
// payload: the probe marker, then version, type, flags, the request and
// action vectors, the hop limit and count, the metadata's maximum and current
// length, the sender's handle and a sequence number. What follows (the hops'
// metadata, the probed packet) is its payload, not decoded.
type IFA1 struct {
	layers.BaseLayer
	ProbeMarker   uint64 // the operator's two 32-bit markers
	Version       uint8
	MsgType       uint8
	Flags         uint16
	RequestVector uint16
	ActionVector  uint16
	HopLimit      uint8 // the most hops that may stamp the probe
	HopCount      uint8 // the hops that have stamped it
	MustBeZero    uint16
	MaxLength     uint16 // the most metadata the probe may carry
	CurrentLength uint16 // the metadata it carries
	SenderHandle  uint16
	SeqNumber     uint16
}

// LayerType returns LayerTypeIFA1.
func (h *IFA1) LayerType() gopacket.LayerType { return LayerTypeIFA1 }

// CanDecode returns LayerTypeIFA1.
func (h *IFA1) CanDecode() gopacket.LayerClass { return LayerTypeIFA1 }

// NextLayerType returns LayerTypePayload.
func (h *IFA1) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes an IFA 1.0 header. A hop count past the hop limit
// or a current length past the maximum is reported, with the byte it is at,
// after every field is decoded.
func (h *IFA1) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IFA1HeaderLen {
		df.SetTruncated()
		return fmt.Errorf("IFA 1.0 header: %d bytes, need %d", len(data), IFA1HeaderLen)
	}
	u16 := func(i int) uint16 { return binary.BigEndian.Uint16(data[i:]) }
	h.ProbeMarker = binary.BigEndian.Uint64(data)
	h.Version, h.MsgType, h.Flags = data[8], data[9], u16(10)
	h.RequestVector, h.ActionVector = u16(12), u16(14)
	h.HopLimit, h.HopCount, h.MustBeZero = data[16], data[17], u16(18)
	h.MaxLength, h.CurrentLength, h.SenderHandle, h.SeqNumber = u16(20), u16(22), u16(24), u16(26)
	h.Contents, h.Payload = data[:IFA1HeaderLen], data[IFA1HeaderLen:]
	switch {
	case h.HopCount > h.HopLimit:
		return &headerError{17, fmt.Sprintf("IFA 1.0 hop count %d is past the hop limit %d", h.HopCount, h.HopLimit)}
	case h.CurrentLength > h.MaxLength:
		return &headerError{22, fmt.Sprintf("IFA 1.0 metadata of length %d is longer than the header's maximum %d", h.CurrentLength, h.MaxLength)}
	}
	return nil
}

// SerializeTo prepends the IFA 1.0 header.
func (h *IFA1) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(IFA1HeaderLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(p, h.ProbeMarker)
	p[8], p[9] = h.Version, h.MsgType
	for i, v := range []uint16{h.Flags, h.RequestVector, h.ActionVector} {
		binary.BigEndian.PutUint16(p[10+2*i:], v)
	}
	p[16], p[17] = h.HopLimit, h.HopCount
	for i, v := range []uint16{h.MustBeZero, h.MaxLength, h.CurrentLength, h.SenderHandle, h.SeqNumber} {
		binary.BigEndian.PutUint16(p[18+2*i:], v)
	}
	return nil
}

// ifaCheck reports what an IFA 2.0 probe says that cannot be: a stack longer
// than the IFA header's maximum. at is the metadata header's offset.
func ifaCheck(h *IFA, m *IFAMetadata, at int) error {
	if m.CurrentLength > h.MaxLength {
		return frameErr(at+3, "IFA metadata stack of %d words is longer than the IFA header's maximum of %d", m.CurrentLength, h.MaxLength)
	}
	return nil
}

// decodeIFA decodes IP protocol IPProtocolIFA in a gopacket.Packet. Over
// UDP it decodes the UDP header, the metadata (payload stamping) and, for
// RoCEv2, the IB transport packet after the stack; otherwise it hands the rest
// to the displaced protocol's decoder.
func decodeIFA(data []byte, p gopacket.PacketBuilder) error {
	h := &IFA{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	switch {
	case h.Flags&(IFAFlagMF|IFAFlagC) != 0:
		return fmt.Errorf("IFA flags 0x%02x: the fragment and checksum headers (MF, C) are not decoded", h.Flags)
	case h.NextHdr != uint8(layers.IPProtocolUDP) || h.Flags&IFAFlagTS != 0 || len(h.Payload) < 8:
		// With tail stamping the L4 header and payload follow as they were
		// (the UDP length leaves out the metadata at the end).
		return p.NextDecoder(h.NextLayerType())
	}
	u := &layers.UDP{}
	if err := u.DecodeFromBytes(h.Payload, p); err != nil {
		return err
	}
	u.Contents, u.Payload = h.Payload[:8], h.Payload[8:] // the UDP length leaves the metadata out
	p.AddLayer(u)
	p.SetTransportLayer(u)
	m := &IFAMetadata{}
	err := m.DecodeFromBytes(u.Payload, p)
	if err != nil {
		return err
	}
	p.AddLayer(m)
	if err := ifaCheck(h, m, 0); err != nil {
		return err
	}
	if u.DstPort == UDPPortRoCEv2 {
		return p.NextDecoder(LayerTypeBTH)
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}

// decodeIFAMetadata decodes a metadata header and stack on their own.
func decodeIFAMetadata(data []byte, p gopacket.PacketBuilder) error {
	m := &IFAMetadata{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return p.NextDecoder(gopacket.LayerTypePayload)
}

// decodeIFA1 decodes an IFA 1.0 header on its own; gopacket cannot know the
// operator's probe marker, so nothing leads here from UDP.
func decodeIFA1(data []byte, p gopacket.PacketBuilder) error {
	h := &IFA1{}
	err := h.DecodeFromBytes(data, p)
	if _, bad := err.(*headerError); err == nil || bad {
		p.AddLayer(h)
	}
	if err != nil {
		return err
	}
	return p.NextDecoder(gopacket.LayerTypePayload)
}

// roceV2IFA computes the ICRC of the RoCEv2 packet an IFA 2.0 probe
// carries, as it was before IFA was inserted (inserted bytes: the IFA
// header, metadata header and stack): the IP header with its protocol (UDP)
// and length restored, the UDP header with the length of the datagram
// without metadata, then the BTH through the byte before the ICRC.
func (b *icrcBuf) roceV2IFA(ip, udp, bthToICRC []byte, inserted int) uint32 {
	s := b.start(LRHLen + len(ip) + 8 + len(bthToICRC))
	*(*[LRHLen]byte)(b[s:]) = pseudoLRH
	n := s + LRHLen
	if ip[0]>>4 == 4 {
		v4 := n
		n += copy(b[n:n+60], ip)
		binary.BigEndian.PutUint16(b[v4+2:], binary.BigEndian.Uint16(ip[2:])-uint16(inserted))
		b[v4+1], b[v4+8], b[v4+9] = 0xFF, 0xFF, uint8(layers.IPProtocolUDP) // TOS and TTL masked
		b[v4+10], b[v4+11] = 0xFF, 0xFF                                     // header checksum
	} else {
		h := [GRHLen]byte(ip)
		binary.BigEndian.PutUint16(h[4:], binary.BigEndian.Uint16(ip[4:])-uint16(inserted))
		h[6] = uint8(layers.IPProtocolUDP)
		n += b.putGRH(n, h[:])
	}
	*(*[8]byte)(b[n:]) = [8]byte(udp)
	binary.BigEndian.PutUint16(b[n+4:], uint16(8+len(bthToICRC)+ICRCLen))
	b[n+6], b[n+7] = 0xFF, 0xFF // UDP checksum
	n += 8
	n += b.putBTH(n, bthToICRC)
	return b.finish(s, n, bthToICRC[BTHLen:])
}

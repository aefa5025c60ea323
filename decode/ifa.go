package decode

import (
	"encoding/binary"
	"fmt"
	"strconv"

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

// appendIFA appends the IFA 2.0 header, metadata header and hops: "ifa":
// {version, gns, next_hdr, flags, max_len, request_vector, action_vector,
// hop_limit, cur_len, hops: [{lns, device_id, ttl, port_speed, congestion,
// queue, rx_sec, rx_ns, egress_port, ingress_port, residence_ns}]}; lengths
// in 4-byte words, the newest hop first.
func (f *Frame) appendIFA(dst []byte) []byte {
	h := &f.IFA
	dst = append(dst, `,"ifa":{"version":`...)
	dst = strconv.AppendUint(dst, uint64(h.Version), 10)
	dst = appendInt(dst, "gns", int64(h.GNS))
	dst = appendInt(dst, "next_hdr", int64(h.NextHdr))
	dst = appendInt(dst, "flags", int64(h.Flags))
	dst = appendInt(dst, "max_len", int64(h.MaxLength))
	if f.Has&HasIFAMetadata != 0 {
		m := &f.IFAMetadata
		dst = appendInt(dst, "request_vector", int64(m.RequestVector))
		dst = appendInt(dst, "action_vector", int64(m.ActionVector))
		dst = appendInt(dst, "hop_limit", int64(m.HopLimit))
		dst = appendInt(dst, "cur_len", int64(m.CurrentLength))
		dst = append(dst, `,"hops":[`...)
		for i := range m.Hops() {
			if i > 0 {
				dst = append(dst, ',')
			}
			hop := m.Hop(i)
			dst = append(dst, `{"lns":`...)
			dst = strconv.AppendUint(dst, uint64(hop.LNS), 10)
			dst = appendInt(dst, "device_id", int64(hop.DeviceID))
			dst = appendInt(dst, "ttl", int64(hop.IPTTL))
			dst = appendInt(dst, "port_speed", int64(hop.EgressPortSpeed))
			dst = appendInt(dst, "congestion", int64(hop.Congestion))
			dst = appendInt(dst, "queue", int64(hop.QueueID))
			dst = appendInt(dst, "rx_sec", int64(hop.RxTimeSec))
			dst = appendInt(dst, "rx_ns", int64(hop.RxTimeNs))
			dst = appendInt(dst, "egress_port", int64(hop.EgressPort))
			dst = appendInt(dst, "ingress_port", int64(hop.IngressPort))
			dst = appendInt(dst, "residence_ns", int64(hop.ResidenceNs))
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// ifaFields: the IFA 2.0 header and metadata header (appendIFA); in the
// table the metadata header's columns only where the frame has both, and
// no column for the hops.
var ifaFields = headerFields{
	order:      220,
	has:        HasIFA,
	json:       func(dst []byte, f *Frame) []byte { return f.appendIFA(dst) },
	role:       summaryProbe,
	summaryHas: HasIFA | HasIFAMetadata,
	summary: func(dst []byte, f *Frame) []byte {
		if f.Has&HasIFAMetadata == 0 {
			return append(dst, "  IFA"...)
		}
		m := &f.IFAMetadata
		return fmt.Appendf(dst, "  IFA %d hops (%d words of %d) hop limit %d", m.Hops(), m.CurrentLength, f.IFA.MaxLength, m.HopLimit)
	},
	columns: []ColumnGroup{
		{any: HasIFA, Columns: []Column{
			{"ifa_version", ColumnUint8, "IFA 2.0 header version (2); null for frames without IFA"},
			{"ifa_gns", ColumnUint8, "IFA global namespace (15: each hop's LNS decides)"},
			{"ifa_next_hdr", ColumnUint8, "IFA next header: the IP protocol the IFA header displaced (17 UDP)"},
			{"ifa_flags", ColumnUint8, "IFA flags: 0x10 MF, 0x08 TS, 0x04 I, 0x02 TA, 0x01 C"},
			{"ifa_max_len", ColumnUint8, "IFA maximum metadata length, 4-byte words"},
		}, values: func(f *Frame, v *ColumnValues) {
			a := &f.IFA
			v.Num[0], v.Num[1], v.Num[2], v.Num[3], v.Num[4] = uint64(a.Version), uint64(a.GNS), uint64(a.NextHdr), uint64(a.Flags), uint64(a.MaxLength)
		}},
		{all: HasIFA | HasIFAMetadata, Columns: []Column{
			{"ifa_request_vector", ColumnUint8, "IFA metadata header request vector"},
			{"ifa_action_vector", ColumnUint8, "IFA metadata header action vector (bit 7 loss, bit 6 color)"},
			{"ifa_hop_limit", ColumnUint8, "IFA hops that may still insert metadata"},
			{"ifa_cur_len", ColumnUint8, "IFA metadata stack length, 4-byte words"},
		}, values: func(f *Frame, v *ColumnValues) {
			m := &f.IFAMetadata
			v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(m.RequestVector), uint64(m.ActionVector), uint64(m.HopLimit), uint64(m.CurrentLength)
		}},
	},
}

func init() { registerFields(&ifaFields) }

// ifa1Fields: "ifa1": the IFA 1.0 header's fields.
var ifa1Fields = headerFields{
	order: 230,
	has:   HasIFA1,
	json: func(dst []byte, f *Frame) []byte {
		h := &f.IFA1
		dst = append(dst, `,"ifa1":{"probe_marker":`...)
		dst = strconv.AppendUint(dst, h.ProbeMarker, 10)
		for _, kv := range [...]struct {
			k string
			v uint16
		}{{"version", uint16(h.Version)}, {"msg_type", uint16(h.MsgType)}, {"flags", h.Flags},
			{"request_vector", h.RequestVector}, {"action_vector", h.ActionVector},
			{"hop_limit", uint16(h.HopLimit)}, {"hop_count", uint16(h.HopCount)}, {"max_len", h.MaxLength},
			{"cur_len", h.CurrentLength}, {"sender_handle", h.SenderHandle}, {"seq", h.SeqNumber}} {
			dst = appendInt(dst, kv.k, int64(kv.v))
		}
		return append(dst, '}')
	},
	role: summaryProbe,
	summary: func(dst []byte, f *Frame) []byte {
		h := &f.IFA1
		return fmt.Appendf(dst, "  IFA1 hops %d of %d seq %d", h.HopCount, h.HopLimit, h.SeqNumber)
	},
	columns: []ColumnGroup{{any: HasIFA1, Columns: []Column{
		{"ifa1_probe_marker", ColumnUint64, "IFA 1.0 probe marker (the operator's two 32-bit markers); null for frames without IFA 1.0"},
		{"ifa1_version", ColumnUint8, "IFA 1.0 version"},
		{"ifa1_msg_type", ColumnUint8, "IFA 1.0 message type"},
		{"ifa1_flags", ColumnUint16, "IFA 1.0 flags"},
		{"ifa1_request_vector", ColumnUint16, "IFA 1.0 request vector"},
		{"ifa1_action_vector", ColumnUint16, "IFA 1.0 action vector"},
		{"ifa1_hop_limit", ColumnUint8, "IFA 1.0 hop limit: the most hops that may stamp the probe"},
		{"ifa1_hop_count", ColumnUint8, "IFA 1.0 hop count: the hops that have stamped it"},
		{"ifa1_max_len", ColumnUint16, "IFA 1.0 maximum metadata length"},
		{"ifa1_cur_len", ColumnUint16, "IFA 1.0 current metadata length"},
		{"ifa1_sender_handle", ColumnUint16, "IFA 1.0 sender handle"},
		{"ifa1_seq", ColumnUint16, "IFA 1.0 sequence number"},
	}, values: func(f *Frame, v *ColumnValues) {
		h := &f.IFA1
		v.Num[0], v.Num[1], v.Num[2], v.Num[3] = h.ProbeMarker, uint64(h.Version), uint64(h.MsgType), uint64(h.Flags)
		v.Num[4], v.Num[5], v.Num[6], v.Num[7] = uint64(h.RequestVector), uint64(h.ActionVector), uint64(h.HopLimit), uint64(h.HopCount)
		v.Num[8], v.Num[9], v.Num[10], v.Num[11] = uint64(h.MaxLength), uint64(h.CurrentLength), uint64(h.SenderHandle), uint64(h.SeqNumber)
	}}},
}

func init() { registerFields(&ifa1Fields) }

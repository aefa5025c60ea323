package decode

import (
	"net/netip"
)

// Transport says how an IB transport packet travelled.
type Transport uint8

// Transports, named as in the JSON contract.
const (
	TransportNone   Transport = iota // not InfiniBand or RoCE
	TransportIB                      // native InfiniBand, LRH first
	TransportRoCEv1                  // Ethernet, ethertype 0x8915, GRH first
	TransportRoCEv2                  // UDP destination port 4791 over IPv4 or IPv6
	TransportLink                    // IB link-level flow-control packet
)

var transportNames = [...]string{"", "ib", "rocev1", "rocev2", "link"}

func (t Transport) String() string { return transportNames[t] }

// Direction is which way a packet went through the capture point, as
// epb_flags' bits 0-1 say it.
type Direction uint8

// Directions.
const (
	DirectionUnknown  Direction = 0
	DirectionInbound  Direction = 1
	DirectionOutbound Direction = 2
)

// Has is a set of headers present in a Frame.
type Has uint32

// Header presence bits. An extended transport header's is also named in
// its registration (registerExt), which the decoder's table of them is
// built from. Bits 30 and 31 are free; a header past them makes Has a
// uint64.
const (
	HasLRH Has = 1 << iota
	HasGRH
	HasIPv4
	HasIPv6
	HasUDP
	HasBTH
	HasRDETH
	HasDETH
	HasXRCETH
	HasRETH
	HasAtomicETH
	HasAETH
	HasAtomicAckETH
	HasImmDt
	HasIETH
	HasCNP
	HasLink
	HasICRC   // an ICRC was present (ICRCOK is meaningful when CRCs were checked)
	HasVCRC   // a VCRC was present
	CRCsCheck // the decoder checked the CRCs present
	HasPFC    // an 802.1Qbb PFC frame (Transport stays TransportNone)
	HasPause  // an 802.3x PAUSE frame (Transport stays TransportNone)
	HasIFA    // an IFA 2.0 header (a RoCEv2 probe, draft-kumar-ippm-ifa-08)
	HasIFAMetadata
	HasIFA1      // an IFA 1.0 header (its probe marker was given to the Decoder)
	HasDCHeader  // the 8 bytes after a DC packet's BTH (dc.go)
	HasDCConnect // a DC connect packet's 16-byte header
	HasMAD       // a management datagram (QP0/QP1): MAD holds its common header
	HasEthernet  // an Ethernet header: SrcMAC, DstMAC, and its VLAN tags (VLANs)
	HasFETH      // a FLUSH's FETH
)

// MaxVLANTags is how many VLAN tags of a stack a Frame keeps (QinQ has
// two); tags past them are skipped over.
const MaxVLANTags = 4

// VLANTag is one 802.1Q / 802.1ad tag.
type VLANTag struct {
	TPID uint16 // 0x8100 (C-tag) or 0x88A8 (S-tag)
	PCP  uint8  // priority code point, 0-7
	DEI  bool   // drop eligible
	ID   uint16 // VLAN identifier, 0-4095
}

// Frame is one decoded packet, reused from packet to packet by the fast path:
// decoding into it allocates nothing. Header fields are valid when the
// matching Has bit is set.
type Frame struct {
	Number    int       // 1-based frame number in its file
	Offset    int64     // byte offset of the frame's record in its file
	TsNs      int64     // capture time, ns since the Unix epoch (0 when NoTs)
	NoTs      bool      // the record carries no time (a pcapng Simple Packet Block)
	CapLen    int       // bytes captured
	WireLen   int       // bytes on the wire
	Iface     int8      // direction/interface recorded by the format (ERF interface, SLL packet type), -1 if none
	Dir       Direction // direction a pcapng packet block records (epb_flags); DirectionUnknown if none
	Transport Transport
	Has       Has

	LRH LRH
	GRH GRH

	// The Ethernet header's addresses (when Ethernet) and the first, outer
	// VLAN tag's priority code point (when VLANTagged): what PFC's
	// priorities and link directions are read from.
	Ethernet, VLANTagged bool
	SrcMAC, DstMAC       [6]byte
	VLANPCP              uint8
	// VLANs are the tags in the frame's order, outermost first, NumVLANs
	// of them (at most MaxVLANTags).
	VLANs    [MaxVLANTags]VLANTag
	NumVLANs uint8

	// RoCE outer headers.
	Src, Dst  netip.Addr // IP addresses (RoCEv2); RoCEv1 uses the GRH's GIDs
	ECN       uint8      // IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
	DSCP      uint8      // IP DSCP (RoCEv2), the traffic class's upper 6 bits
	UDPSrc    uint16     // UDP source port (RoCEv2 entropy)
	TTL       uint8      // IPv4 TTL or IPv6 hop limit (RoCEv2)
	FlowLabel uint32     // IPv6 flow label (RoCEv2 over IPv6)

	BTH          BTH
	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	FETH         FETH
	Link         LinkFCP
	PFC          PFC   // Ethernet MAC control: priority flow control
	Pause        Pause // Ethernet MAC control: link-wide PAUSE
	IFA          IFA   // IFA 2.0 header, between IP and UDP
	IFAMetadata  IFAMetadata
	IFA1         IFA1
	DCHeader     DCHeader
	DCConnect    DCConnect
	MAD          MAD // a UD SEND to or from QP0 or QP1; Payload is the MAD too

	// Payload is the message data: after the last header, before pad and ICRC.
	Payload []byte
	// IBLen is the transport packet's size in bytes as IB counts it: LRH
	// through VCRC for native IB; for RoCE, GRH or BTH through ICRC.
	IBLen  int
	ICRCOK bool // the stored ICRC matches (valid with HasICRC and CRCsCheck)
	VCRCOK bool // the stored VCRC (or link LPCRC) matches (valid with HasVCRC and CRCsCheck)
}

// Decoded reports whether the frame held something ibscope decodes: an IB
// or RoCE packet, or a PFC or PAUSE frame (the pauses lossless RoCE relies on).
func (f *Frame) Decoded() bool {
	return f.Transport != TransportNone || f.Has&(HasPFC|HasPause) != 0
}

// Truncated reports whether fewer bytes were captured than were on the wire.
func (f *Frame) Truncated() bool { return f.CapLen < f.WireLen }

// FlowKey identifies one flow: (SLID, DLID, DestQP) for native IB,
// (source, destination, DestQP) for RoCE. It is comparable, so it can be a map key.
type FlowKey struct {
	Transport  Transport
	SLID, DLID uint16
	Src, Dst   netip.Addr
	DestQP     uint32
}

// FlowKey returns the frame's flow key.
func (f *Frame) FlowKey() FlowKey {
	var k FlowKey
	f.PutFlowKey(&k)
	return k
}

// PutFlowKey sets *k to the frame's flow key, field by field. A key
// returned (FlowKey) is built in a temporary and copied with 16-byte moves
// that straddle the 8-byte stores just made, which the CPU cannot forward:
// the copy waited for them to reach the cache, a twentieth of ibanalyze
// flows' time.
func (f *Frame) PutFlowKey(k *FlowKey) {
	k.Transport, k.DestQP = f.Transport, f.BTH.DestQP
	switch f.Transport {
	case TransportIB:
		k.SLID, k.DLID = f.LRH.SLID, f.LRH.DLID
		k.Src, k.Dst = netip.Addr{}, netip.Addr{}
	case TransportRoCEv1:
		k.SLID, k.DLID = 0, 0
		if f.Has&HasGRH != 0 {
			k.Src, k.Dst = f.GRH.SrcGID(), f.GRH.DstGID()
		} else { // cut inside the GRH: not the GIDs the frame before left
			k.Src, k.Dst = netip.Addr{}, netip.Addr{}
		}
	case TransportRoCEv2:
		k.SLID, k.DLID = 0, 0
		k.Src, k.Dst = f.Src, f.Dst
	default:
		k.SLID, k.DLID = 0, 0
		k.Src, k.Dst = netip.Addr{}, netip.Addr{}
	}
}

// Reset clears the headers the previous frame left, without dropping
// buffers: what a reader does to a frame whose record it could not use.
func (f *Frame) Reset() {
	f.Transport = TransportNone
	f.Has = 0
	f.Iface = -1
	f.Payload = nil
	f.IBLen = 0
	f.ECN, f.DSCP = 0, 0
	f.Ethernet, f.VLANTagged = false, false
	f.NumVLANs = 0
	f.TTL, f.FlowLabel = 0, 0
	f.UDPSrc = 0
	f.ICRCOK, f.VCRCOK = false, false
}

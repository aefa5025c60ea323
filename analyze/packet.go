package analyze

import (
	"encoding/binary"

	"github.com/ibscope/ibscope/decode"
)

// Packet is what the analyses need of one decoded IB or RoCE transport
// packet: a fixed-size copy, so that a bounded window of them can be held
// and reordered without keeping the reader's buffers.
type Packet struct {
	TsNs   int64 // capture time, ns since the Unix epoch
	File   int   // index of the file in the stream's list
	Frame  int   // 1-based frame number in that file
	Offset int64 // byte offset of the frame's record in its file, -1 when unknown
	Key    decode.FlowKey
	Iface  int8 // direction/interface the format recorded, -1 if none
	// VL is the native IB packet's virtual lane (LRH), or a link
	// flow-control packet's (Key.Transport is decode.TransportLink).
	VL uint8

	OpCode     decode.Opcode
	AckReq     bool
	FECN, BECN bool  // IB congestion marks in the BTH
	ECN        uint8 // IP ECN bits (RoCE): 3 = CE
	HasAETH    bool
	Syndrome   uint8 // AETH syndrome (with HasAETH)
	ICRCBad    bool  // the ICRC was checked and is wrong
	VCRCBad    bool  // the VCRC was checked and is wrong
	// Late is set on a packet that arrived after the stream had already
	// passed its timestamp (out of order by more than the reorder window).
	Late bool
	// FCTBS and FCCL are a link flow-control packet's counts, in 64-byte
	// blocks mod 4096. (The small fields sit together: 160 bytes a packet.)
	FCTBS, FCCL uint16
	PSN         uint32 // 24 bits
	MSN         uint32 // AETH message sequence number (with HasAETH)
	DMALenB     uint32 // RETH DMA length in bytes, 0 without a RETH
	// WireBytes is the packet's size on its link in bytes: LRH through VCRC
	// for native IB; for RoCE the Ethernet frame plus the 4-byte FCS (when
	// not captured), 8-byte preamble and 12-byte inter-frame gap.
	WireBytes int
	// FrameBytes is the frame's length as the capture records it (the
	// original length, before any snap-length cut).
	FrameBytes int
	// IBBytes is the transport packet as IB counts it (decode.Frame.IBLen).
	IBBytes int

	// EthernetFields is what the pfc and hops analyses read of the frame's
	// link: filled only with StreamOptions.Ethernet (or MACControl), else
	// all zero (nil in a Packet made by Fill). It lives beside the Stream's
	// window, not in it, so that the analyses that do not read it do not
	// pay for its copy (216 bytes a packet with it inline, 160 without);
	// it is valid until the next packet is taken.
	*EthernetFields
	// CM is the packet's communication management message (CM.Message is
	// 0 on other packets, and on every packet without StreamOptions.CM);
	// like EthernetFields it lives beside the window and is valid until the
	// next packet is taken.
	CM *decode.CMMessage
}

// EthernetFields is what a Packet carries of its Ethernet frame.
type EthernetFields struct {
	// Ethernet frames (Ethernet): the addresses and the priority the frame
	// travels at, the outer VLAN tag's PCP (VLANTagged) and the IP DSCP
	// (RoCEv2; RoCEv1: the GRH traffic class's upper 6 bits).
	Ethernet, VLANTagged bool
	VLANPCP, DSCP        uint8
	SrcMAC, DstMAC       [6]byte
	// MACControl is set on a PFC or PAUSE frame, handed out only with
	// StreamOptions.MACControl (Key.Transport is decode.TransportNone):
	// PauseEnable is the priorities it names (PAUSE: all eight) and
	// PauseQuanta their times in quanta of 512 bit times (0 resumes).
	MACControl  MACControl
	PauseEnable uint8
	PauseQuanta [decode.PFCPriorities]uint16
	// IFAHops is an IFA 2.0 probe's hop metadata, newest hop first (at most
	// 31: a stack is at most 255 words).
	IFAHops []IFAHop
}

// MACControl says which MAC control frame a Packet is.
type MACControl uint8

// The MAC control frames the analyses read.
const (
	NoMACControl    MACControl = iota
	MACControlPFC              // 802.1Qbb priority flow control
	MACControlPause            // 802.3x PAUSE: the whole link
)

// IFAHop is what the analyses read of one hop's IFA 2.0 metadata
// (decode.IFAHop, the LNS layout).
type IFAHop struct {
	DeviceID    uint32 // 20 bits: the switch that stamped the probe
	ResidenceNs uint32 // time from arrival to departure at the hop, ns
	// QueueOccupancy is the first 32-bit word of the hop's opaque data,
	// where devices that report their egress queue's occupancy put it, in
	// the device's units (cells or bytes); 0 when it reports none.
	QueueOccupancy uint32
	EgressPort     uint16
	LNS            uint8 // 4 bits
	QueueID        uint8 // 6 bits
	Congestion     uint8 // 2 bits: the ECN the hop saw or set
}

// WireBytes is what frame f takes on its link (Packet.WireBytes): the
// transport packet for native IB, the Ethernet frame with its FCS, preamble
// and gap for RoCE.
func WireBytes(f *decode.Frame) int {
	if f.Transport == decode.TransportIB {
		return f.IBLen
	}
	return f.WireLen + decode.EthernetFCSLen + decode.EthernetGapBytes
}

// fillKey copies into p what StreamOptions.KeyOnly names of f and zeroes
// the rest: f may be decoded only as far as those (keyHeads), its other
// fields left as an earlier frame left them.
func (p *Packet) fillKey(f *decode.Frame, file int) {
	p.TsNs = f.TsNs
	p.File = file
	p.Frame = f.Number
	p.Offset = f.Offset
	f.PutFlowKey(&p.Key)
	p.Iface = f.Iface
	if f.Has&decode.HasBTH != 0 {
		p.OpCode, p.PSN = f.BTH.OpCode, f.BTH.PSN
	} else {
		p.Key.DestQP, p.OpCode, p.PSN = 0, 0, 0
	}
	p.FrameBytes = f.WireLen
	p.WireBytes = WireBytes(f)
	p.VL, p.AckReq, p.FECN, p.BECN, p.ECN = 0, false, false, false, 0
	p.HasAETH, p.Syndrome, p.ICRCBad, p.VCRCBad, p.Late = false, 0, false, false, false
	p.FCTBS, p.FCCL, p.MSN, p.DMALenB, p.IBBytes = 0, 0, 0, 0, 0
}

// fill copies the analysed fields of f into p.
func (p *Packet) fill(f *decode.Frame, file int) {
	p.TsNs = f.TsNs
	p.File = file
	p.Frame = f.Number
	p.Offset = f.Offset
	// A header the frame lacks is read as zeros, not as what an earlier
	// frame left in the decode.Frame: which frame that was depends on how
	// the frames were decoded (on one goroutine, or read ahead on several).
	f.PutFlowKey(&p.Key)
	p.Iface = f.Iface
	p.VL, p.FCTBS, p.FCCL = 0, 0, 0
	switch {
	case f.Has&decode.HasLink != 0:
		p.VL, p.FCTBS, p.FCCL = f.Link.VL, f.Link.FCTBS, f.Link.FCCL
	case f.Has&decode.HasLRH != 0:
		p.VL = f.LRH.VL
	}
	if f.Has&decode.HasBTH != 0 {
		p.OpCode, p.PSN, p.AckReq = f.BTH.OpCode, f.BTH.PSN, f.BTH.AckReq
		p.FECN, p.BECN = f.BTH.FECN, f.BTH.BECN
	} else {
		p.Key.DestQP, p.OpCode, p.PSN, p.AckReq, p.FECN, p.BECN = 0, 0, 0, false, false, false
	}
	p.ECN = f.ECN
	p.HasAETH = f.Has&decode.HasAETH != 0
	p.Syndrome, p.MSN = 0, 0
	if p.HasAETH {
		p.Syndrome, p.MSN = f.AETH.Syndrome, f.AETH.MSN
	}
	p.DMALenB = 0
	if f.Has&decode.HasRETH != 0 {
		p.DMALenB = f.RETH.DMALen
	}
	p.IBBytes = f.IBLen
	p.FrameBytes = f.WireLen
	p.WireBytes = WireBytes(f)
	checked := f.Has&decode.CRCsCheck != 0
	p.ICRCBad = checked && f.Has&decode.HasICRC != 0 && !f.ICRCOK
	p.VCRCBad = checked && f.Has&decode.HasVCRC != 0 && !f.VCRCOK
	p.Late = false
}

// fill copies what the pfc and hops analyses read of f: addresses,
// priorities, pause requests and IFA hops.
func (p *EthernetFields) fill(f *decode.Frame) {
	p.Ethernet, p.SrcMAC, p.DstMAC = f.Ethernet, f.SrcMAC, f.DstMAC
	p.VLANTagged, p.VLANPCP = f.VLANTagged, f.VLANPCP
	p.DSCP = f.DSCP
	if f.Transport == decode.TransportRoCEv1 {
		p.DSCP = f.GRH.TClass >> 2
	}
	var isPause bool
	p.PauseEnable, p.PauseQuanta, isPause = f.PauseRequest()
	switch {
	case !isPause:
		p.MACControl = NoMACControl
	case f.Has&decode.HasPFC != 0:
		p.MACControl = MACControlPFC
	default:
		p.MACControl = MACControlPause
	}
	p.IFAHops = p.IFAHops[:0]
	if f.Has&decode.HasIFAMetadata != 0 {
		md := &f.IFAMetadata
		for i := range md.Hops() {
			h := md.Hop(i)
			p.IFAHops = append(p.IFAHops, IFAHop{DeviceID: h.DeviceID, ResidenceNs: h.ResidenceNs,
				QueueOccupancy: binary.BigEndian.Uint32(h.Opaque[:4]), EgressPort: h.EgressPort,
				LNS: h.LNS, QueueID: h.QueueID, Congestion: h.Congestion})
		}
	}
}

package analyze

import "github.com/ibscope/ibscope/decode"

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
	// blocks mod 4096. (The small fields sit together: 152 bytes a packet.)
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
}

// ethernetOverheadBytes is what an Ethernet frame costs on the wire beyond
// its captured bytes: preamble and start delimiter (8) and inter-frame gap (12).
const ethernetOverheadBytes = 20

// fcsBytes is the Ethernet frame check sequence, usually not captured.
const fcsBytes = 4

// fill copies the analysed fields of f into p.
func (p *Packet) fill(f *decode.Frame, file int) {
	p.TsNs = f.TsNs
	p.File = file
	p.Frame = f.Number
	p.Offset = f.Offset
	p.Key = f.FlowKey()
	p.Iface = f.Iface
	p.VL, p.FCTBS, p.FCCL = f.LRH.VL, 0, 0
	if f.Has&decode.HasLink != 0 {
		p.VL, p.FCTBS, p.FCCL = f.Link.VL, f.Link.FCTBS, f.Link.FCCL
	}
	p.OpCode = f.BTH.OpCode
	p.PSN = f.BTH.PSN
	p.AckReq = f.BTH.AckReq
	p.FECN, p.BECN = f.BTH.FECN, f.BTH.BECN
	p.ECN = f.ECN
	p.HasAETH = f.Has&decode.HasAETH != 0
	p.Syndrome, p.MSN = f.AETH.Syndrome, f.AETH.MSN
	p.DMALenB = 0
	if f.Has&decode.HasRETH != 0 {
		p.DMALenB = f.RETH.DMALen
	}
	p.IBBytes = f.IBLen
	p.FrameBytes = f.WireLen
	if f.Transport == decode.TransportIB {
		p.WireBytes = f.IBLen
	} else {
		p.WireBytes = f.WireLen + fcsBytes + ethernetOverheadBytes
	}
	checked := f.Has&decode.CRCsCheck != 0
	p.ICRCBad = checked && f.Has&decode.HasICRC != 0 && !f.ICRCOK
	p.VCRCBad = checked && f.Has&decode.HasVCRC != 0 && !f.VCRCOK
	p.Late = false
}

package sim

import "github.com/ibscope/ibscope/decode"

// flowState is one RC queue pair's send side and its truth.
type flowState struct {
	idx        int
	cfg        Flow
	src, dst   *node
	vl         uint8
	destQP     uint32 // the responder's QP, in the data packets' BTH
	srcQP      uint32 // the requester's QP, in the ACKs' BTH
	mtuBytes   int
	write      bool
	eth        bool  // RoCEv2 frames rather than LRH packets
	bytesLeft  int64 // message data not yet packetised
	msgLeft    int64 // bytes left in the current message, 0 between messages
	msgBytes   int64
	msgPackets int // packets already sent of the current message
	readyPs    int64
	psn        uint32
	msn        uint32 // messages completed at the responder

	// Truth.
	packets             int64
	firstPs, lastPs     int64 // first injection, last delivery
	queueSumPs, queueMx int64
	delivered           int64
	truth               []PacketTruth
}

// pending reports whether the flow has a packet to send at nowPs.
func (f *flowState) pending(nowPs int64) bool {
	return (f.bytesLeft > 0 || f.msgLeft > 0) && f.readyPs <= nowPs
}

// nextShape returns the next packet's opcode, extended-header and payload
// sizes without consuming it.
func (f *flowState) nextShape() (op decode.Opcode, extBytes, payload int) {
	left := f.msgLeft
	first := left == 0
	if first {
		left = min(f.bytesLeft, f.cfg.MessageBytes)
	}
	payload = int(min(left, int64(f.mtuBytes)))
	last := int64(payload) == left
	switch {
	case f.write && first && last:
		return 0x0A, rethBytes, payload // RDMA_WRITE_ONLY
	case f.write && first:
		return 0x06, rethBytes, payload // RDMA_WRITE_FIRST
	case f.write && last:
		return 0x08, 0, payload // RDMA_WRITE_LAST
	case f.write:
		return 0x07, 0, payload // RDMA_WRITE_MIDDLE
	case first && last:
		return 0x04, 0, payload // SEND_ONLY
	case first:
		return 0x00, 0, payload // SEND_FIRST
	case last:
		return 0x02, 0, payload // SEND_LAST
	}
	return 0x01, 0, payload // SEND_MIDDLE
}

// nextBlocks is the credit cost of the next packet.
func (f *flowState) nextBlocks() int {
	_, ext, payload := f.nextShape()
	return blocksOf(f.wireBytes(ext, payload))
}

// take builds the next packet and advances the flow; it returns whether
// the message ended with it.
func (f *flowState) take(nowPs int64) (*packet, bool) {
	op, ext, payload := f.nextShape()
	if f.msgLeft == 0 {
		f.msgBytes = min(f.bytesLeft, f.cfg.MessageBytes)
		f.msgLeft = f.msgBytes
		f.bytesLeft -= f.msgBytes
		f.msgPackets = 0
	}
	f.msgLeft -= int64(payload)
	f.msgPackets++
	last := f.msgLeft == 0
	ackReq := last || f.cfg.AckEvery > 0 && f.msgPackets%f.cfg.AckEvery == 0
	w := f.wireBytes(ext, payload)
	p := &packet{vl: f.vl, sl: f.vl, slid: f.src.lid, dlid: f.dst.lid, op: op, qp: f.destQP, psn: f.psn,
		ackReq: ackReq, payloadBytes: payload, wireBytes: w, blocks: blocksOf(w), flow: f.idx, injectPs: nowPs}
	if ext == rethBytes {
		p.dmaLenBytes = uint32(f.msgBytes)
	}
	if n := f.cfg.IFAEvery; n > 0 && (f.packets+1)%int64(n) == 0 {
		p.probe = &probe{flow: f.idx, psn: p.psn}
		p.wireBytes += ifaProbeBytes
	}
	f.psn = (f.psn + 1) & 0xFFFFFF
	if f.packets == 0 {
		f.firstPs = nowPs
	}
	f.packets++
	return p, last
}

// wireBytes is a data packet's size: LRH through VCRC, or the RoCEv2 frame
// through its FCS.
func (f *flowState) wireBytes(extBytes, payloadBytes int) int {
	if f.eth {
		return roceWireBytes(extBytes, payloadBytes)
	}
	return dataWireBytes(extBytes, payloadBytes)
}

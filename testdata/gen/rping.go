package main

import "github.com/ibscope/ibscope/decode"

// flowTruth is what `ibanalyze flows` must find for one flow of a capture
// with known truth: the PSN anomalies of its two sequences as the script
// that wrote it made them.
type flowTruth struct {
	Flow        string   `json:"flow"` // as the flows table names it
	Packets     int      `json:"packets"`
	Acks        int      `json:"acks"` // ACKNOWLEDGE and ATOMIC ACKNOWLEDGE packets that say ACK
	PSN         psnTruth `json:"psn"`
	ResponsePSN psnTruth `json:"response_psn"`
}

type psnTruth struct {
	Gaps       int `json:"gaps"`
	Missing    int `json:"missing"`
	OutOfOrder int `json:"out_of_order"`
	Duplicates int `json:"duplicates"`
	Lost       int `json:"lost"`
	// NewSequences: the rping exchange uses each QP for one connection.
	NewSequences int `json:"new_sequences"`
}

// rpingPMTUBytes is the path MTU of the rping capture.
const rpingPMTUBytes = 1024

// rpingNode is one side of an RC connection.
type rpingNode struct {
	host    byte
	qp      uint32 // its own QP: the peer sends to it
	psn     uint32 // its next request PSN
	msn     uint32 // its responder's message sequence number
	packets int    // packets it sent that the capture holds
	acks    int
	peer    *rpingNode
}

// roceRping is the rdma_cm / rping pattern on one RC connection: node A
// (192.168.7.1, QP 0x11) and node B (192.168.7.2, QP 0x22) each send SENDs
// and RDMA WRITEs and read from the other while returning READ responses to
// the other's reads, so each QP direction carries its own requests and its
// responses to the peer's, in two PSN sequences (B's crosses the 2^24 wrap).
// Five rounds, each with one event of known outcome:
//
//  1. go-back-N: A's WRITE is lost before the capture point; the next one
//     shows the gap, B NAKs, A resends both (one late, one duplicate).
//  2. a READ response's middle packet (A to B) is lost; B reads the rest
//     again: its READ request is a duplicate, A's first response packet
//     fills the gap late, its last is a duplicate.
//  3. B's ACK to A's SEND is lost after the capture point: A resends the
//     SEND (a duplicate request), B ACKs it again (a duplicate response).
//  4. the capture drops one of B's SENDs: a gap, never filled (lost).
//  5. no event; A also does an atomic compare-and-swap.
func roceRping() *capture {
	c := newCapture("rocev2_rping.pcap", decode.LinkTypeEthernet)
	a := &rpingNode{host: 1, qp: 0x11, psn: 1000}
	b := &rpingNode{host: 2, qp: 0x22, psn: 0xFFFFF8}
	a.peer, b.peer = b, a
	sc := &rpingScript{c: c, seq: 1000}
	for round := 1; round <= 5; round++ {
		sc.round(round, a, b)
	}
	c.expect.Flows = []flowTruth{
		{Flow: "rocev2 192.168.7.1>192.168.7.2 qp 0x000022", Packets: a.packets, Acks: a.acks,
			PSN:         psnTruth{Gaps: 1, Missing: 1, OutOfOrder: 1, Duplicates: 2},
			ResponsePSN: psnTruth{Gaps: 1, Missing: 1, OutOfOrder: 1, Duplicates: 1}},
		{Flow: "rocev2 192.168.7.2>192.168.7.1 qp 0x000011", Packets: b.packets, Acks: b.acks,
			PSN:         psnTruth{Gaps: 1, Missing: 1, Duplicates: 1, Lost: 1},
			ResponsePSN: psnTruth{Duplicates: 1}},
	}
	return c
}

// round writes round r of the exchange between a and b (roceRping's list).
func (sc *rpingScript) round(r int, a, b *rpingNode) {
	// A tells B where its buffer is; B ACKs.
	s := sc.send(a, 64, true, true)
	sc.ack(b, s, 1)
	if r == 3 {
		sc.resend(a, 0x04, s, 64, ackReq) // B's ACK was lost on its way: A times out
		sc.ack(b, s, 0)
	}
	// B reads A's buffer; A's READ response is interleaved with its WRITE.
	const bReadB = 2500
	rd := sc.readReq(b, bReadB)
	resp := sc.respond(a, rd, bReadB)
	resp[0](true)
	sc.write(a, 512, true)
	resp[1](r != 2) // round 2: the middle packet is lost
	resp[2](true)
	// A reads B's buffer; B's response is interleaved with B's SEND.
	const aReadB = 2048
	ar := sc.readReq(a, aReadB)
	aresp := sc.respond(b, ar, aReadB)
	aresp[0](true)
	bs := sc.send(b, 32, r != 4, true)
	aresp[1](true)
	if r == 4 {
		sc.send(b, 32, false, false) // dropped by the capture
		bs = sc.send(b, 32, true, true)
		sc.ack(a, bs, 3)
	} else {
		sc.ack(a, bs, 1)
	}
	switch r {
	case 1: // go-back-N
		sc.send(a, 16, false, true)
		w1 := sc.write(a, 256, false)
		w2 := sc.write(a, 256, true)
		sc.nak(b, w1)
		sc.resend(a, 0x0A, w1, 256, func(t *tspec) { t.dmaLenB = 256 })
		sc.resend(a, 0x0A, w2, 256, func(t *tspec) { t.dmaLenB, t.ackReq = 256, true })
		sc.ack(b, w2, 3)
	case 2: // B reads again from the missing PSN
		rest := bReadB - rpingPMTUBytes
		sc.emit(b, 0x0C, rd+1, 0, func(t *tspec) { t.dmaLenB = uint32(rest) }, true)
		a.msn-- // the same message again
		for _, p := range sc.respond(a, rd+1, rest) {
			p(true)
		}
	case 5:
		p := takePSNs(a, 1)
		sc.emit(a, 0x13, p, 0, nil, true) // COMPARE_SWAP
		b.msn++
		sc.emit(b, 0x12, p, 0, func(t *tspec) { t.syndrome, t.msn = 0x1F, b.msn }, true) // ATOMIC_ACKNOWLEDGE
	}
}

// rpingScript writes the rping exchange's packets into c, numbering them
// from seq (their fields vary with it).
type rpingScript struct {
	c   *capture
	seq int
}

// emit writes a packet from n; captured false leaves it out (lost before
// the capture point, or dropped by it).
func (sc *rpingScript) emit(n *rpingNode, op decode.Opcode, psn uint32, payload int, f func(t *tspec), captured bool) {
	t := tspec{op: op, seq: sc.seq, pkey: 0xFFFF, qp: n.peer.qp, psn: psn & decode.PSNMask, payloadBytes: payload, exact: true}
	if f != nil {
		f(&t)
	}
	sc.seq++
	if !captured {
		return
	}
	s := rspec{ecn: 2, dscp: 26, ttl: 64, flow: 0, sport: 0xC000 + uint16(n.qp), src: n.host, dst: n.peer.host, t: t}
	frame := roce(s)
	sc.c.add(frame, len(frame))
	n.packets++
	if op.IsAck() && t.syndrome>>5 == 0 {
		n.acks++
	}
}

func ackReq(t *tspec) { t.ackReq = true }

// takePSNs takes psns request PSNs of n and returns the first.
func takePSNs(n *rpingNode, psns uint32) uint32 {
	p := n.psn
	n.psn = (n.psn + psns) & decode.PSNMask
	return p
}

// send is a SEND_ONLY from n, asking for an ACK when ask.
func (sc *rpingScript) send(n *rpingNode, payload int, ask, captured bool) uint32 {
	p := takePSNs(n, 1)
	var f func(*tspec)
	if ask {
		f = ackReq
	}
	sc.emit(n, 0x04, p, payload, f, captured) // SEND_ONLY
	return p
}

// resend sends packet p of opcode op from n again.
func (sc *rpingScript) resend(n *rpingNode, op decode.Opcode, p uint32, payload int, f func(*tspec)) {
	sc.emit(n, op, p, payload, f, true)
}

// write is an RDMA_WRITE_ONLY from n.
func (sc *rpingScript) write(n *rpingNode, payload int, captured bool) uint32 {
	p := takePSNs(n, 1)
	sc.emit(n, 0x0A, p, payload, func(t *tspec) { t.dmaLenB = uint32(payload) }, captured) // RDMA_WRITE_ONLY
	return p
}

// readPSNs is how many PSNs a read of lenB takes.
func readPSNs(lenB int) uint32 { return uint32((lenB + rpingPMTUBytes - 1) / rpingPMTUBytes) }

// readReq is an RDMA_READ_REQUEST of lenB from n.
func (sc *rpingScript) readReq(n *rpingNode, lenB int) uint32 {
	p := takePSNs(n, readPSNs(lenB))
	sc.emit(n, 0x0C, p, 0, func(t *tspec) { t.dmaLenB = uint32(lenB) }, true) // RDMA_READ_REQUEST
	return p
}

// respond is the responder r's RDMA READ response to a read of lenB at
// psn, one call per packet: it returns the packets in order.
func (sc *rpingScript) respond(r *rpingNode, psn uint32, lenB int) []func(captured bool) {
	n := int(readPSNs(lenB))
	r.msn++
	var out []func(bool)
	for i := range n {
		op := decode.Opcode(0x0E) // MIDDLE
		switch {
		case n == 1:
			op = 0x10 // ONLY
		case i == 0:
			op = 0x0D // FIRST
		case i == n-1:
			op = 0x0F // LAST
		}
		payload := min(rpingPMTUBytes, lenB-i*rpingPMTUBytes)
		out = append(out, func(captured bool) {
			sc.emit(r, op, psn+uint32(i), payload, func(t *tspec) { t.syndrome, t.msn = 0x1F, r.msn }, captured)
		})
	}
	return out
}

// ack is r's ACK of psn, counting newMsgs more messages.
func (sc *rpingScript) ack(r *rpingNode, psn uint32, newMsgs uint32) {
	r.msn += newMsgs
	sc.emit(r, 0x11, psn, 0, func(t *tspec) { t.syndrome, t.msn = 0x1F, r.msn }, true)
}

// nak is r's NAK (PSN sequence error) at psn.
func (sc *rpingScript) nak(r *rpingNode, psn uint32) {
	sc.emit(r, 0x11, psn, 0, func(t *tspec) { t.syndrome, t.msn = 0x60, r.msn }, true) // PSN sequence error
}

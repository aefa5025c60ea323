package testcap

import "github.com/ibscope/ibscope/decode"

// GoBackN is an RC exchange of RDMA WRITEs between a go-back-N requester
// and its responder as a capture behind the lossy hop sees it (the
// responder's side, or the sender's netdev where netem drops before the
// tap): a lost packet leaves no frame; the packets already on their way
// behind it arrive out of sequence, and the responder answers the first of
// them with one PSN sequence error NAK carrying the lost PSN and drops the
// rest unacknowledged; the requester then sends again from the NAK'd PSN,
// so FIRST, MIDDLE, LAST and ONLY packets reappear with PSNs already seen.
// Each message's LAST (or ONLY) packet asks for an ACK, which the
// responder sends when it accepts it.
type GoBackN struct {
	Messages      int    // RDMA WRITE messages
	PacketsPerMsg int    // packets a message takes (1: RDMA_WRITE_ONLY)
	Payload       int    // payload bytes a packet
	PSN0          uint32 // the first message's PSN
	Src, Dst      byte   // requester and responder hosts
	QP, AckQP     uint32 // the responder's QP (the requests' DestQP), the requester's (the ACKs')
	InFlight      int    // packets the requester sends behind a lost one before the NAK reaches it
	GapNs         int64  // time between frames
	// LostFirstTime says whether the i-th request packet (from 0) is lost
	// the first time it is sent; its resend always arrives.
	LostFirstTime func(i int) bool
}

// GoBackNTruth is what a GoBackN exchange holds, counted as it was made.
type GoBackNTruth struct {
	Lost       int // packets lost (one NAK each)
	Resent     int // request frames whose PSN had been captured before
	ResentMsgs int // of those, FIRST and ONLY packets
}

// Packets returns the exchange's frames in capture order (requests from
// Src to Dst, ACKs and NAKs back) with what they hold.
func (g GoBackN) Packets(t0 int64) ([]Packet, GoBackNTruth) {
	var out []Packet
	var truth GoBackNTruth
	total := g.Messages * g.PacketsPerMsg
	ts := t0
	emit := func(p Packet) {
		ts += g.GapNs
		p.TsNs = ts
		out = append(out, p)
	}
	captured := make([]bool, total)
	request := func(i int) Packet {
		k, n := i%g.PacketsPerMsg, g.PacketsPerMsg
		op := decode.Opcode(0x07) // RC_RDMA_WRITE_MIDDLE
		switch {
		case n == 1:
			op = 0x0A // RC_RDMA_WRITE_ONLY
		case k == 0:
			op = 0x06 // RC_RDMA_WRITE_FIRST
		case k == n-1:
			op = 0x08 // RC_RDMA_WRITE_LAST
		}
		p := Packet{Src: g.Src, Dst: g.Dst, QP: g.QP, PSN: (g.PSN0 + uint32(i)) & decode.PSNMask, Op: op,
			Payload: g.Payload, AckReq: k == n-1}
		if k == 0 {
			p.DMALen = uint32(n * g.Payload)
		}
		if captured[i] {
			truth.Resent++
			if k == 0 {
				truth.ResentMsgs++
			}
		}
		captured[i] = true
		return p
	}
	reply := func(i int, syndrome uint8) Packet {
		return Packet{Src: g.Dst, Dst: g.Src, QP: g.AckQP, PSN: (g.PSN0 + uint32(i)) & decode.PSNMask, Op: 0x11, Syndrome: syndrome,
			MSN: uint32(i/g.PacketsPerMsg) + 1}
	}
	lostOnce := make([]bool, total)
	for i := 0; i < total; {
		if !lostOnce[i] && g.LostFirstTime != nil && g.LostFirstTime(i) {
			lostOnce[i] = true
			truth.Lost++
			for j := i + 1; j < min(total, i+1+g.InFlight); j++ {
				emit(request(j))
				if j == i+1 {
					emit(reply(i, 0x60)) // NAK: PSN sequence error, expecting PSN i
				}
			}
			continue // go back to i
		}
		emit(request(i))
		if i%g.PacketsPerMsg == g.PacketsPerMsg-1 {
			emit(reply(i, 0x1F)) // ACK, credits invalid
		}
		i++
	}
	return out, truth
}

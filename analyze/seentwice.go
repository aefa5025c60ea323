package analyze

import (
	"hash/maphash"

	"github.com/ibscope/ibscope/decode"
)

// A Linux capture on every interface (`ibcap -i any`, `tcpdump -i any`)
// records a frame that crosses between two interfaces of the same host
// twice: leaving one (packet type OUTGOING) and arriving at the other (a
// veth pair, as SoftRoCE's test benches use; the loopback). Both records
// are one packet on one wire, so the analyses count it once: counted twice,
// every packet of such a capture would be a PSN duplicate and every flow
// twice its size. The Linux cooked header says which way each record went
// (SLL and SLL2 packet type, Frame.Iface); a received record whose packet
// equals one sent shortly before (or a sent one equal to one received), in
// the same file, is the same frame seen a second time: dropped, and counted
// in StreamStats.SeenTwice (Input.SeenTwice).
//
// The two records of a frame lie next to each other in time: the kernel
// taps a frame leaving at the transmit of the device (after any qdisc, so
// after netem's delay) and hands it to the peer at once. The stream keeps
// the last seenTwiceRecent records of Linux cooked captures and pairs a
// record with an unpaired one of the other direction among them, stamped
// at most seenTwiceWindowNs apart. Each record pairs once, so a
// retransmission (the same packet sent again) is paired with its own
// second sighting, not with the first transmission's.
const (
	seenTwiceRecent   = 256
	seenTwiceWindowNs = 10_000_000
)

// linuxOutgoing is the Linux cooked packet type of a frame the host sent.
const linuxOutgoing = 4

// sighting is one record of a Linux cooked capture.
type sighting struct {
	fp     uint64 // fingerprint of the packet (packetPrint)
	tsNs   int64
	file   int
	sent   bool
	paired bool
}

// seenTwice pairs the two records of frames a Linux capture saw on two
// interfaces.
type seenTwice struct {
	seed   maphash.Seed
	recent [seenTwiceRecent]sighting
	n      int // records in recent (up to seenTwiceRecent)
	next   int // where the next goes
}

// packetFields is what a fingerprint covers besides the payload: the
// transport packet as it crossed, not the link header (its interface index
// differs between the two records).
type packetFields struct {
	key             decode.FlowKey
	op              decode.Opcode
	destQP, psn     uint32
	icrc            uint32
	pkey            uint16
	udpSrc          uint16
	flags           uint8 // AckReq, FECN, BECN, SE, ECN
	syndrome        uint8
	msn             uint32
	va              uint64
	rkey, dmaLen    uint32
	wireLen, capLen int
}

// packetPrint fingerprints f's transport packet.
func (s *seenTwice) packetPrint(f *decode.Frame) uint64 {
	b := &f.BTH
	flags := f.ECN | b2u8(b.AckReq)<<2 | b2u8(b.FECN)<<3 | b2u8(b.BECN)<<4 | b2u8(b.SE)<<5
	pf := packetFields{key: f.FlowKey(), op: b.OpCode, destQP: b.DestQP, psn: b.PSN, pkey: b.PKey, udpSrc: f.UDPSrc, flags: flags,
		wireLen: f.WireLen, capLen: f.CapLen}
	// A Frame keeps the fields of headers it did not hold from the frame
	// before: only those its Has bits name are read.
	if b.HasICRC {
		pf.icrc = b.ICRC
	}
	if f.Has&decode.HasAETH != 0 {
		pf.syndrome, pf.msn = f.AETH.Syndrome, f.AETH.MSN
	}
	if f.Has&decode.HasRETH != 0 {
		pf.va, pf.rkey, pf.dmaLen = f.RETH.VA, f.RETH.RKey, f.RETH.DMALen
	}
	h := maphash.Comparable(s.seed, pf)
	return h ^ maphash.Bytes(s.seed, f.Payload)*0x9E3779B97F4A7C15
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// again reports whether f, from file, is the second record of a frame
// already counted; linuxCooked says the file's link type records the
// direction (Linux SLL or SLL2).
func (s *seenTwice) again(f *decode.Frame, file int, linuxCooked bool) bool {
	if !linuxCooked || f.Has&decode.HasBTH == 0 || f.NoTs {
		return false
	}
	me := sighting{fp: s.packetPrint(f), tsNs: f.TsNs, file: file, sent: f.Iface == linuxOutgoing}
	for k := 1; k <= s.n; k++ {
		o := &s.recent[(s.next-k+seenTwiceRecent)%seenTwiceRecent]
		if d := me.tsNs - o.tsNs; d > seenTwiceWindowNs || d < -seenTwiceWindowNs {
			continue
		}
		if !o.paired && o.fp == me.fp && o.file == me.file && o.sent != me.sent {
			o.paired = true
			return true
		}
	}
	s.recent[s.next] = me
	s.next = (s.next + 1) % seenTwiceRecent
	s.n = min(s.n+1, seenTwiceRecent)
	return false
}

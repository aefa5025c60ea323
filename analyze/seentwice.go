package analyze

import (
	"encoding/binary"
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
// the last seenTwiceRecent records of Linux cooked captures, indexed by
// their packet's fingerprint, and pairs a record with an unpaired one of
// the other direction among them, stamped at most seenTwiceWindowNs apart.
// Each record pairs once, so a retransmission (the same packet sent again)
// is paired with its own second sighting, not with the first
// transmission's.
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
	byFP   map[uint64]int // fingerprint -> its latest record's slot in recent
	n      int            // records in recent (up to seenTwiceRecent)
	next   int            // where the next goes
	buf    [96]byte       // packetPrint's scratch
}

// packetPrint fingerprints f's transport packet as it crossed: flow key,
// BTH, AETH, RETH, lengths, UDP source port, ECN and payload; not the link
// header, whose interface differs between the two records. A Frame keeps
// the fields of headers it did not hold from the frame before: only those
// its Has bits name are read.
func (s *seenTwice) packetPrint(f *decode.Frame) uint64 { return packetPrint(s.seed, &s.buf, f) }

// packetPrint is seenTwice.packetPrint with seed, buf its scratch: the
// workers that read a capture ahead take the prints too (packetBatch).
func packetPrint(seed maphash.Seed, buf *[96]byte, f *decode.Frame) uint64 {
	k := f.FlowKey()
	b := buf[:0]
	src, dst := k.Src.As16(), k.Dst.As16()
	b = append(b, byte(k.Transport))
	b = append(b, src[:]...)
	b = append(b, dst[:]...)
	b = binary.BigEndian.AppendUint16(b, k.SLID)
	b = binary.BigEndian.AppendUint16(b, k.DLID)
	h := &f.BTH
	b = append(b, byte(h.OpCode), f.ECN, b2u8(h.AckReq)|b2u8(h.FECN)<<1|b2u8(h.BECN)<<2|b2u8(h.SE)<<3)
	b = binary.BigEndian.AppendUint32(b, h.DestQP)
	b = binary.BigEndian.AppendUint32(b, h.PSN)
	b = binary.BigEndian.AppendUint16(b, h.PKey)
	b = binary.BigEndian.AppendUint16(b, f.UDPSrc)
	if h.HasICRC {
		b = binary.BigEndian.AppendUint32(b, h.ICRC)
	}
	if f.Has&decode.HasAETH != 0 {
		b = append(b, f.AETH.Syndrome)
		b = binary.BigEndian.AppendUint32(b, f.AETH.MSN)
	}
	if f.Has&decode.HasRETH != 0 {
		b = binary.BigEndian.AppendUint64(b, f.RETH.VA)
		b = binary.BigEndian.AppendUint32(b, f.RETH.RKey)
		b = binary.BigEndian.AppendUint32(b, f.RETH.DMALen)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(f.WireLen))
	b = binary.BigEndian.AppendUint32(b, uint32(f.CapLen))
	return maphash.Bytes(seed, b) ^ maphash.Bytes(seed, f.Payload)*0x9E3779B97F4A7C15
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
	if !printed(f, linuxCooked) {
		return false
	}
	return s.againPrinted(s.packetPrint(f), f, file)
}

// printed reports whether frame f of a file (linuxCooked: of a Linux SLL
// or SLL2 link type) may be a second record: whether again looks at it.
func printed(f *decode.Frame, linuxCooked bool) bool {
	return linuxCooked && f.Has&decode.HasBTH != 0 && !f.NoTs
}

// againPrinted is again for a frame that printed says to look at, fp its
// packetPrint (taken on the worker that decoded it); of f it reads only
// TsNs and Iface.
func (s *seenTwice) againPrinted(fp uint64, f *decode.Frame, file int) bool {
	if s.byFP == nil {
		s.byFP = make(map[uint64]int, seenTwiceRecent)
	}
	me := sighting{fp: fp, tsNs: f.TsNs, file: file, sent: f.Iface == linuxOutgoing}
	if i, ok := s.byFP[me.fp]; ok {
		o := &s.recent[i]
		d := me.tsNs - o.tsNs
		if !o.paired && o.file == me.file && o.sent != me.sent && d <= seenTwiceWindowNs && d >= -seenTwiceWindowNs {
			o.paired = true
			delete(s.byFP, me.fp)
			return true
		}
	}
	if s.n == seenTwiceRecent { // the oldest leaves
		if old := s.recent[s.next].fp; s.byFP[old] == s.next {
			delete(s.byFP, old)
		}
	}
	s.recent[s.next] = me
	s.byFP[me.fp] = s.next
	s.next = (s.next + 1) % seenTwiceRecent
	s.n = min(s.n+1, seenTwiceRecent)
	return false
}

package main

import (
	"encoding/binary"

	"github.com/ibscope/ibscope/decode"
)

// Management datagrams: every MAD class and attribute ibscope decodes
// (decode/mad.go), in native IB (SMP, SA, PerfMgt, CM) and on RoCEv2 (CM
// over QP1, rdma_cm's IP private data), and DC packets on RoCEv2 with the
// values of issue 21's real DC RDMA WRITE ONLY.

// madQKey is QP1's well-known Q_Key.
const madQKey = 0x80010000

// madBody returns a 256-byte MAD: the common header given, every other
// byte filled from seed so that each field reads something of its own,
// then set applied.
func madBody(class, method uint8, attr uint16, mod uint32, tid uint64, seed int, set func(b []byte)) []byte {
	b := make([]byte, decode.MADLen)
	x := uint32(seed)*2654435761 + 12345
	for i := decode.MADHeaderLen; i < len(b); i++ {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	version := uint8(1)
	if class == decode.MgmtClassSubnAdm || class == decode.MgmtClassCM {
		version = 2
	}
	b[0], b[1], b[2], b[3] = 1, class, version, method
	binary.BigEndian.PutUint64(b[8:], tid)
	binary.BigEndian.PutUint16(b[16:], attr)
	binary.BigEndian.PutUint32(b[20:], mod)
	if set != nil {
		set(b)
	}
	return b
}

func put16(b []byte, off int, v uint16) { binary.BigEndian.PutUint16(b[off:], v) }
func put24(b []byte, off int, v uint32) {
	b[off], b[off+1], b[off+2] = byte(v>>16), byte(v>>8), byte(v)
}
func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
func put64(b []byte, off int, v uint64) { binary.BigEndian.PutUint64(b[off:], v) }

// madSpec is the UD SEND ONLY that carries a MAD from QP src to QP dst.
func madSpec(mad []byte, srcQP, dstQP uint32, seq int) tspec {
	t := tfor(0x64, seq)
	t.qp, t.srcQP, t.mad, t.payload, t.payloadBytes = dstQP, srcQP, true, mad, 0
	return t
}

// saRMPP makes an SA MAD one RMPP DATA segment, first and last.
func saRMPP(b []byte) {
	b[24], b[25], b[26], b[27] = 1, 1, 0x07, 0
	put32(b, 28, 1)
	put32(b, 32, 200)
}

// cmReq fills a REQ: local communication ID, service ID, QPN, starting
// PSN; with ipCM, rdma_cm's IPv4 private data from host src to host dst.
func cmReq(b []byte, commID uint32, sid uint64, qpn, psn uint32, src, dst byte, sport uint16) {
	m := b[decode.MADHeaderLen:]
	put32(m, 0, commID)
	put64(m, 8, sid)
	put24(m, 32, qpn)
	put24(m, 44, psn)
	m[43] &^= 0x06 // transport service type RC (0)
	if decode.IsIPCMServiceID(sid) {
		p := m[140:]
		clear(p[:36])
		p[0], p[1] = 0x00, 0x40
		put16(p, 2, sport)
		copy(p[4:20], ipv4Mapped(src))
		copy(p[20:36], ipv4Mapped(dst))
		g := v4GID(src)
		copy(m[56:72], g[:])
		g = v4GID(dst)
		copy(m[72:88], g[:])
	}
}

// nodeDescription writes a NUL-padded node description into b.
func nodeDescription(b []byte, s string) {
	clear(b)
	copy(b, s)
}

// ipv4Mapped is rdma_cm's 16-byte form of 192.168.7.n in its private data
// (12 zero bytes, then the address).
func ipv4Mapped(n byte) []byte { return []byte{12: 192, 13: 168, 14: 7, 15: n} }

// cmIDs fills a message's local and remote communication IDs.
func cmIDs(b []byte, local, remote uint32) {
	put32(b, decode.MADHeaderLen, local)
	put32(b, decode.MADHeaderLen+4, remote)
}

// cmMsg is a CM MAD of message attr (a Send).
func cmMsg(attr uint16, tid uint64, seed int, set func(b []byte)) []byte {
	return madBody(decode.MgmtClassCM, 0x03, attr, 0, tid, seed, set)
}

// ibMAD is native IB in ERF records: SMPs LID routed and directed route,
// SA records, PerfMgt counters and a CM exchange with a non-IP service ID.
func ibMAD() *capture {
	c := newCapture("ib_mad_erf.pcap", decode.LinkTypeERF)
	c.viaWriter = true
	seq := 0
	add := func(mad []byte, srcQP, dstQP uint32, slid, dlid uint16, grh bool) {
		b := native(ispec{vl: 0, sl: 0, dlid: dlid, slid: slid, grh: grh, hopLmt: 255, t: madSpec(mad, srcQP, dstQP, seq)})
		if dstQP == 0 {
			b[0] = 0xF0 | b[0]&0x0F // SMPs travel on VL15
			decode.SealNative(b)
		}
		r := c.add(b, len(b))
		r.erfType, r.erfIface = decode.ERFTypeInfiniBand, uint8(seq%2)
		seq++
	}
	for _, attr := range []uint16{0x0011, 0x0012, 0x0014, 0x0015, 0x0016, 0x0010} {
		add(madBody(decode.MgmtClassSubnLID, 0x81, attr, uint32(attr)<<4, 0x1000+uint64(attr), seq, func(b []byte) {
			if attr == 0x0010 {
				nodeDescription(b[64:128], "ibsw01 HCA-1")
			}
		}), 0, 0, 1, 5, false)
	}
	for i, attr := range []uint16{0x0011, 0x0015} { // directed route: a Get out, its response back
		add(madBody(decode.MgmtClassSubnDirect, 0x01|uint8(i)<<7, attr, 1, 0x2000+uint64(i), seq, func(b []byte) {
			put16(b, 4, uint16(i)<<15)
			b[6], b[7] = byte(1+i), 3
			put16(b, 32, 0xFFFF)
			put16(b, 34, 0xFFFF)
		}), 0, 0, 0xFFFF, 0xFFFF, false)
	}
	for i, attr := range []uint16{0x0035, 0x0011, 0x0012, 0x0038, 0x0031, 0x0003} {
		method := uint8(0x81)
		if attr == 0x0038 {
			method = 0x02 // an MCMemberRecord join is a Set
		}
		add(madBody(decode.MgmtClassSubnAdm, method, attr, 0, 0x3000+uint64(i), seq, func(b []byte) {
			saRMPP(b)
			if attr == 0x0011 { // a NodeRecord's NodeDescription
				nodeDescription(b[56+44:56+108], "node-17 mlx5_0")
			}
		}), 1, 1, 1, 7, false)
	}
	for i, attr := range []uint16{0x0012, 0x001D} {
		add(madBody(decode.MgmtClassPerf, 0x81, attr, 0, 0x4000+uint64(i), seq, nil), 1, 1, 9, 1, false)
	}
	sid := uint64(0x0002C90300001234)
	add(cmMsg(decode.CMRequest, 0x5000, seq, func(b []byte) { cmReq(b, 0xA001, sid, 0x000048, 0x123456, 0, 0, 0) }), 1, 1, 3, 4, true)
	add(cmMsg(decode.CMMessageRcptAck, 0x5000, seq, func(b []byte) { cmIDs(b, 0xB001, 0xA001); b[32] = 0 }), 1, 1, 4, 3, true)
	add(cmMsg(decode.CMReply, 0x5000, seq, func(b []byte) {
		cmIDs(b, 0xB001, 0xA001)
		put24(b, 36, 0x000049)
		put24(b, 44, 0x654321)
	}), 1, 1, 4, 3, true)
	add(cmMsg(decode.CMReadyToUse, 0x5000, seq, func(b []byte) { cmIDs(b, 0xA001, 0xB001) }), 1, 1, 3, 4, true)
	add(cmMsg(decode.CMReject, 0x5001, seq, func(b []byte) { cmIDs(b, 0xB002, 0xA002); put16(b, 34, 8) }), 1, 1, 4, 3, false)
	return c
}

// roceCM is an rdma_cm session on RoCEv2 (192.168.7.1 connects to .2,
// port 7174 as rping listens), with every CM message, then DC traffic:
//
//   - connection 1 is set up (REQ, MRA, REP, RTU), carries a few RC SENDs
//     each way from the starting PSNs it named, moves its path (LAP, APR)
//     and is torn down (DREQ, DREP);
//   - connection 2 is rejected (REJ, consumer reject);
//   - connection 3 is asked for and never answered;
//   - one SIDR exchange;
//   - DC: issue 21's RDMA WRITE ONLY (VA 0x7fb235d09a00, R_Key 342057,
//     8 bytes) with its ACK, a SEND ONLY, a READ and its response.
func roceCM() *capture {
	c := newCapture("rocev2_cm.pcap", decode.LinkTypeEthernet)
	c.viaWriter = true
	seq := 0
	add := func(t tspec, src, dst byte) {
		b := roce(rspec{ttl: 64, sport: 0xC000 + uint16(seq), src: src, dst: dst, t: t})
		c.add(b, len(b))
		seq++
	}
	mad := func(m []byte, src, dst byte) { add(madSpec(m, 1, 1, seq), src, dst) }
	const port = 7174
	sid := uint64(0x0000000001060000) | port
	mad(cmMsg(decode.CMRequest, 0x100, seq, func(b []byte) { cmReq(b, 0x1001, sid, 0x11, 1000, 1, 2, 50000) }), 1, 2)
	mad(cmMsg(decode.CMMessageRcptAck, 0x100, seq, func(b []byte) { cmIDs(b, 0x2001, 0x1001); b[32] = 0x00 }), 2, 1)
	mad(cmMsg(decode.CMReply, 0x100, seq, func(b []byte) {
		cmIDs(b, 0x2001, 0x1001)
		put24(b, 36, 0x22)
		put24(b, 44, 0xFFFFF8)
	}), 2, 1)
	mad(cmMsg(decode.CMReadyToUse, 0x100, seq, func(b []byte) { cmIDs(b, 0x1001, 0x2001) }), 1, 2)
	for i := range 3 { // SENDs each way: the active end's from the REP's PSN, the passive end's from the REQ's
		t := tfor(0x04, seq) // no ACK asked: the capture holds none
		t.qp, t.psn, t.ackReq = 0x22, (0xFFFFF8+uint32(i))&0xFFFFFF, false
		add(t, 1, 2)
		t = tfor(0x04, seq)
		t.qp, t.psn, t.ackReq = 0x11, 1000+uint32(i), false
		add(t, 2, 1)
	}
	mad(cmMsg(decode.CMLoadAltPath, 0x101, seq, func(b []byte) { cmIDs(b, 0x1001, 0x2001) }), 1, 2)
	mad(cmMsg(decode.CMAltPathResponse, 0x101, seq, func(b []byte) { cmIDs(b, 0x2001, 0x1001); b[33] = 0 }), 2, 1)
	mad(cmMsg(decode.CMDisconnectRequest, 0x102, seq, func(b []byte) { cmIDs(b, 0x1001, 0x2001); put24(b, 32, 0x22) }), 1, 2)
	mad(cmMsg(decode.CMDisconnectReply, 0x102, seq, func(b []byte) { cmIDs(b, 0x2001, 0x1001) }), 2, 1)
	mad(cmMsg(decode.CMRequest, 0x103, seq, func(b []byte) { cmReq(b, 0x1002, sid, 0x12, 5000, 1, 2, 50001) }), 1, 2)
	mad(cmMsg(decode.CMReject, 0x103, seq, func(b []byte) { cmIDs(b, 0x2002, 0x1002); b[32] = 0; put16(b, 34, 28) }), 2, 1)
	mad(cmMsg(decode.CMRequest, 0x104, seq, func(b []byte) { cmReq(b, 0x1003, sid, 0x13, 7000, 1, 2, 50002) }), 1, 2)
	// Over IPv6: rdma_cm's private data with IPv6 addresses; rejected.
	v6req := cmMsg(decode.CMRequest, 0x106, seq, func(b []byte) {
		cmReq(b, 0x1005, sid, 0x14, 9000, 1, 2, 50003)
		p := b[decode.MADHeaderLen+140:]
		p[1] = 0x60
		copy(p[4:20], v6(1))
		copy(p[20:36], v6(2))
	})
	b6 := roce(rspec{v6: true, ttl: 64, sport: 0xC000 + uint16(seq), src: 1, dst: 2, t: madSpec(v6req, 1, 1, seq)})
	c.add(b6, len(b6))
	seq++
	rej6 := cmMsg(decode.CMReject, 0x106, seq, func(b []byte) { cmIDs(b, 0x2005, 0x1005); b[32] = 0; put16(b, 34, 1) })
	b6 = roce(rspec{v6: true, ttl: 64, sport: 0xC000 + uint16(seq), src: 2, dst: 1, t: madSpec(rej6, 1, 1, seq)})
	c.add(b6, len(b6))
	seq++
	mad(cmMsg(decode.CMSIDRRequest, 0x105, seq, func(b []byte) { put32(b, 24, 0x1004); put64(b, 32, sid) }), 1, 2)
	mad(cmMsg(decode.CMSIDRReply, 0x105, seq, func(b []byte) {
		put32(b, 24, 0x1004)
		b[28] = 0
		put24(b, 32, 0x33)
		put64(b, 36, sid)
	}), 2, 1)
	dc := func(op decode.Opcode, qp, psn uint32, payload []byte) tspec {
		t := tfor(op, seq)
		t.qp, t.psn, t.payload, t.payloadBytes = qp, psn, payload, 0
		return t
	}
	w := dc(0x4A, 0x5A, 77, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	w.exact, w.va, w.rkey, w.dmaLenB = true, 0x7fb235d09a00, 342057, 8
	add(w, 1, 2)
	add(dc(0x51, 0x6B, 77, nil), 2, 1)
	add(dc(0x44, 0x5A, 78, []byte("dc send only")), 1, 2)
	add(dc(0x4C, 0x5A, 79, nil), 1, 2)
	add(dc(0x50, 0x6B, 79, []byte("read response")), 2, 1)
	return c
}

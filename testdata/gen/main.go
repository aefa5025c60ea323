// Command gen writes the small captures in testdata/pcaps that the decode
// and capfile tests and the Wireshark interop test read, and expect.json, what each holds
// (frame counts, frames with a deliberately broken CRC, snap-length cuts,
// and for traffic written with known truth what `ibanalyze flows` must find).
// Every packet is built with the decode package's own serializers and sealed
// with its CRC functions. The output is deterministic:
//
//	go run ./testdata/gen -o testdata/pcaps
//
// With -bench-rocev2 N or -bench-ib N it writes instead one large capture of
// N frames for benchmarks (see bench.go):
//
//	go run ./testdata/gen -bench-rocev2 2000000 -o /tmp/rocev2.pcap
//
// With -bench-qps N it writes N one-packet QPs for the flows and IPD
// memory benchmark (manyqps.go, bench/manyqps.sh).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ibscope/ibscope/decode"
)

func main() {
	out := flag.String("o", "testdata/pcaps", "output directory; with -bench-*, the output file")
	benchRoCEv2 := flag.Int("bench-rocev2", 0, "write one RoCEv2 capture of `N` frames for benchmarks")
	benchIB := flag.Int("bench-ib", 0, "write one native IB (ERF) capture of `N` frames for benchmarks")
	benchQPs := flag.Int("bench-qps", 0, "write one RoCEv2 capture of `N` one-packet QPs for the flows memory benchmark (bench/manyqps.sh)")
	flag.Parse()
	var err error
	switch {
	case *benchRoCEv2 > 0:
		err = writeBench(*out, *benchRoCEv2, false)
	case *benchIB > 0:
		err = writeBench(*out, *benchIB, true)
	case *benchQPs > 0:
		err = writeManyQPs(*out, *benchQPs)
	default:
		err = writeAll(*out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func writeAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cs := []*capture{ibERF(), ib247(), roceV4(), roceV6(), roceV1(), roceERFEth(), roceSLL(), roceSLL2(),
		mixedNG(), roceMicro(), roceSnap(), roceRping(), ibMAD(), roceCM()}
	for _, c := range cs {
		if err := c.write(dir); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return writeExpect(dir, cs)
}

// payloadCycle gives payload sizes whose pad counts run 0, 3, 2, 1.
var payloadCycle = [...]int{16, 1, 6, 35, 64, 257, 2, 3}

// allOps returns the valid opcodes of the given families, in order, but
// IBA 1.5's FLUSH and ATOMIC WRITE (0x1C, 0x1D): the bundled captures are
// held to tshark 4.0, which does not know them (decode's tests build them).
func allOps(families ...uint8) []decode.Opcode {
	var ops []decode.Opcode
	for i := 0; i < 256; i++ {
		op := decode.Opcode(i)
		if op.Family() < decode.FamilyCNP && op&0x1F >= 0x1C {
			continue
		}
		for _, f := range families {
			if op.Valid() && op.Family() == f {
				ops = append(ops, op)
			}
		}
	}
	return ops
}

// aethVariants are AETH syndromes: ACKs with credit counts, RNR NAKs with
// timers, each NAK code.
var aethVariants = []uint8{0x1F, 0x03, 0x20 | 14, 0x20 | 1, 0x60, 0x61, 0x62, 0x63, 0x64}

// tfor returns a transport packet for op numbered seq, with varied fields.
func tfor(op decode.Opcode, seq int) tspec {
	t := tspec{op: op, seq: seq, pkey: 0xFFFF, qp: 0x000100 + uint32(seq)*0x111, psn: 0xFFFFF0 + uint32(seq)*3,
		se: seq%3 == 0, m: seq%4 == 1, ackReq: seq%2 == 0, syndrome: uint8(seq % 32)}
	if seq%5 == 2 {
		t.pkey = 0x8001 + uint16(seq)
	}
	if op.IsData() {
		t.payloadBytes = payloadCycle[seq%len(payloadCycle)]
	}
	return t
}

// ibERF is native IB in ERF records (what ibcap writes): every opcode of
// every family, GRH and not, every AETH kind, FECN/BECN, vendor opcodes,
// link packets, three broken CRCs and two records cut short.
func ibERF() *capture {
	c := newCapture("ib_native_erf.pcap", decode.LinkTypeERF)
	c.viaWriter = true
	add := func(pkt []byte, iface uint8) *rec {
		r := c.add(pkt, len(pkt))
		r.erfType, r.erfIface = decode.ERFTypeInfiniBand, iface
		if len(pkt) == decode.LinkFCPLen {
			r.erfType = decode.ERFTypeIBLink
		}
		return r
	}
	seq := 0
	nat := func(t tspec, grh bool) []byte {
		return native(ispec{vl: uint8(seq % 8), sl: uint8(seq % 16), lver: 0, dlid: 0x10 + uint16(seq%5), slid: 0x20 + uint16(seq%3),
			grh: grh, tclass: uint8(seq * 7), flowLabel: uint32(seq * 4099), hopLmt: uint8(64 + seq), t: t})
	}
	ops := append(allOps(decode.FamilyRC, decode.FamilyUC, decode.FamilyRD, decode.FamilyUD, decode.FamilyXRC, decode.FamilyCNP), 0xC0, 0xE5, 0xFF)
	for _, op := range ops {
		add(nat(tfor(op, seq), seq%2 == 1), uint8(seq%2))
		seq++
	}
	for _, syn := range aethVariants {
		t := tfor(0x11, seq) // RC ACKNOWLEDGE
		t.syndrome = syn
		add(nat(t, seq%2 == 0), 1)
		seq++
	}
	for i, fb := range [][2]bool{{true, false}, {false, true}, {true, true}} {
		t := tfor(0x0A, seq) // RC RDMA WRITE ONLY
		t.fecn, t.becn = fb[0], fb[1]
		add(nat(t, i == 1), 0)
		seq++
	}
	for i := range 6 {
		add(linkPacket(uint8(i%2), uint16(i*700+5), uint8(i%4), uint16(i*500+64)), uint8(i%2))
	}
	// Deliberate damage, known by frame number.
	b := nat(tfor(0x04, seq), false) // RC SEND ONLY, bad ICRC (and a VCRC that covers it)
	breakICRC(b, len(b)-2)
	revcrc(b)
	add(b, 0)
	c.expect.BadICRC = append(c.expect.BadICRC, c.frame())
	seq++
	b = nat(tfor(0x06, seq), true) // RC RDMA WRITE FIRST, bad VCRC
	breakVCRC(b)
	add(b, 1)
	c.expect.BadVCRC = append(c.expect.BadVCRC, c.frame())
	seq++
	b = linkPacket(0, 123, 0, 456) // bad LPCRC
	b[5] ^= 0x10
	add(b, 0)
	c.expect.BadVCRC = append(c.expect.BadVCRC, c.frame())
	// Records cut short (a capture with a snap length): the headers decode, the CRCs cannot be judged.
	for _, op := range []decode.Opcode{0x0A, 0x64} {
		t := tfor(op, seq)
		t.payloadBytes = 200
		b := nat(t, op == 0x64)
		r := add(b[:80], 0)
		r.wireLen = len(b)
		c.expect.Cut = append(c.expect.Cut, c.frame())
		seq++
	}
	return c
}

// ib247 is native IB as LINKTYPE_INFINIBAND (247): a cross-section of
// families, GRH and not, link packets, one broken ICRC.
func ib247() *capture {
	c := newCapture("ib_native_247.pcap", decode.LinkTypeInfiniBand)
	c.viaWriter = true
	seq := 100
	for i, op := range []decode.Opcode{0x00, 0x01, 0x02, 0x03, 0x0B, 0x0C, 0x10, 0x11, 0x12, 0x13, 0x14, 0x17,
		0x24, 0x29, 0x43, 0x4C, 0x51, 0x55, 0x64, 0x65, 0x80, 0xA0, 0xA6, 0xB1, 0xB4, 0xC3} {
		b := native(ispec{vl: uint8(i % 15), sl: uint8(i % 16), dlid: 0xC000 + uint16(i), slid: 1 + uint16(i),
			grh: i%3 == 0, tclass: uint8(i), flowLabel: 0xFFFFF - uint32(i), hopLmt: 255, t: tfor(op, seq)})
		c.add(b, len(b))
		seq++
	}
	for i := range 4 {
		b := linkPacket(uint8(i%2), 4095-uint16(i), uint8(15-i), uint16(i*3))
		c.add(b, len(b))
	}
	b := native(ispec{vl: 1, sl: 2, dlid: 3, slid: 4, t: tfor(0x0A, seq)})
	breakICRC(b, len(b)-2)
	revcrc(b)
	c.add(b, len(b))
	c.expect.BadICRC = []int{c.frame()}
	return c
}

// roceOps are the opcodes RoCE carries: RC, UC, UD, XRC, the CNP, a vendor one.
func roceOps() []decode.Opcode {
	return append(allOps(decode.FamilyRC, decode.FamilyUC, decode.FamilyUD, decode.FamilyXRC), decode.OpcodeCNP, 0xC7)
}

// roceSpec gives the RoCE fields for frame seq: ECN cycling through all four
// marks, a VLAN tag on some, a UDP checksum on some, CNPs with BECN.
func roceSpec(op decode.Opcode, seq int) rspec {
	t := tfor(op, seq)
	if op == decode.OpcodeCNP {
		t.becn, t.fecn, t.psn, t.pkey, t.se, t.ackReq = true, false, 0, 0xFFFF, false, false
	}
	return rspec{ecn: uint8(seq % 4), dscp: uint8(26 + seq%2), ttl: 64, flow: uint32(seq * 4099 % 0xFFFFF),
		sport: 0xC000 + uint16(seq*37), udpCsum: seq%7 == 3, vlan: seq%9 == 4, src: 1 + byte(seq%2), dst: 2 - byte(seq%2), t: t}
}

func roceV4() *capture {
	c := newCapture("rocev2_ipv4.pcap", decode.LinkTypeEthernet)
	c.viaWriter = true
	seq := 0
	for _, op := range roceOps() {
		b := roce(roceSpec(op, seq))
		c.add(b, len(b))
		seq++
	}
	for _, syn := range aethVariants {
		s := roceSpec(0x11, seq)
		s.t.syndrome = syn
		b := roce(s)
		c.add(b, len(b))
		seq++
	}
	for range 3 { // a burst of CNPs
		b := roce(roceSpec(decode.OpcodeCNP, seq))
		c.add(b, len(b))
		seq++
	}
	// A RoCEv2 frame from a UDP source port below 4791, as some NICs send:
	// Wireshark takes the lower port for another protocol.
	s := roceSpec(0x11, seq)
	s.sport = 69
	b := roce(s)
	c.add(b, len(b))
	c.expect.UDPLowSrc = []int{c.frame()}
	seq++
	// Not RoCE: plain UDP to another port.
	b = serialize(udpNotRoCE()...)
	c.add(b, len(b))
	c.expect.IBFrames--
	c.expect.NotIB = []int{c.frame()}
	b = roce(roceSpec(0x0A, seq))
	breakICRC(b, icrcEnd(b))
	c.add(b, len(b))
	c.expect.BadICRC = []int{c.frame()}
	return c
}

func roceV6() *capture {
	c := newCapture("rocev2_ipv6.pcap", decode.LinkTypeEthernet)
	seq := 200
	for _, op := range []decode.Opcode{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C,
		0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x2A, 0x64, 0x65, 0xA6, decode.OpcodeCNP, decode.OpcodeCNP} {
		s := roceSpec(op, seq)
		s.v6 = true
		b := roce(s)
		c.add(b, len(b))
		seq++
	}
	for _, syn := range aethVariants[2:] {
		s := roceSpec(0x11, seq)
		s.v6, s.t.syndrome = true, syn
		b := roce(s)
		c.add(b, len(b))
		seq++
	}
	s := roceSpec(0x04, seq)
	s.v6 = true
	b := roce(s)
	breakICRC(b, icrcEnd(b))
	c.add(b, len(b))
	c.expect.BadICRC = []int{c.frame()}
	return c
}

func roceV1() *capture {
	c := newCapture("rocev1.pcap", decode.LinkTypeEthernet)
	seq := 300
	for _, op := range []decode.Opcode{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C,
		0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x24, 0x64, 0x65, 0xA0, 0x81} {
		s := roceSpec(op, seq)
		s.v1 = true
		b := roce(s)
		c.add(b, len(b))
		seq++
	}
	s := roceSpec(0x11, seq)
	s.v1, s.t.syndrome = true, 0x62
	b := roce(s)
	c.add(b, len(b))
	seq++
	s = roceSpec(0x0A, seq)
	s.v1 = true
	b = roce(s)
	breakICRC(b, icrcEnd(b))
	c.add(b, len(b))
	c.expect.BadICRC = []int{c.frame()}
	return c
}

// roceERFEth is RoCEv2 in ERF Ethernet records (type 2), which keep the FCS.
func roceERFEth() *capture {
	c := newCapture("rocev2_erf_eth.pcap", decode.LinkTypeERF)
	c.viaWriter = true
	seq := 400
	for i, op := range []decode.Opcode{0x00, 0x02, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x10, 0x11, 0x12, 0x13, 0x64, 0x81} {
		s := roceSpec(op, seq)
		s.v6 = i%3 == 2
		b := withFCS(roce(s))
		r := c.add(b, len(b))
		r.erfType, r.erfIface = decode.ERFTypeEthernet, uint8(i%2)
		seq++
	}
	b := roce(roceSpec(0x0A, seq))
	breakICRC(b, icrcEnd(b))
	b = withFCS(b)
	r := c.add(b, len(b))
	r.erfType = decode.ERFTypeEthernet
	c.expect.BadICRC = []int{c.frame()}
	return c
}

func roceSLL() *capture {
	c := newCapture("rocev2_sll.pcap", decode.LinkTypeLinuxSLL)
	seq := 500
	for i, op := range []decode.Opcode{0x00, 0x02, 0x04, 0x0A, 0x0C, 0x10, 0x11, 0x12, 0x64, 0x81} {
		s := roceSpec(op, seq)
		s.vlan = false
		s.v6, s.v1 = i%3 == 1, i%3 == 2
		b := sll(roce(s), uint16(i%2*4)) // PACKET_HOST or PACKET_OUTGOING
		c.add(b, len(b))
		seq++
	}
	return c
}

func roceSLL2() *capture {
	c := newCapture("rocev2_sll2.pcap", decode.LinkTypeLinuxSLL2)
	seq := 600
	for i, op := range []decode.Opcode{0x01, 0x03, 0x05, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x65, 0x81} {
		s := roceSpec(op, seq)
		s.vlan = false
		s.v6, s.v1 = i%3 == 1, i%3 == 2
		b := sll2(roce(s), uint8(i%2*4), 3)
		c.add(b, len(b))
		seq++
	}
	return c
}

// mixedNG is a pcapng file with two interfaces: RoCEv2 on Ethernet and
// native IB in ERF records, interleaved.
func mixedNG() *capture {
	c := newCapture("mixed.pcapng", decode.LinkTypeEthernet)
	c.ngLinks = []int{decode.LinkTypeEthernet, decode.LinkTypeERF}
	seq := 700
	for i, op := range []decode.Opcode{0x00, 0x01, 0x02, 0x04, 0x06, 0x07, 0x08, 0x0A, 0x0C, 0x0D, 0x10, 0x11, 0x12, 0x13, 0x81, 0x64} {
		if i%2 == 0 {
			b := roce(roceSpec(op, seq))
			c.add(b, len(b))
		} else {
			pkt := native(ispec{vl: 2, sl: 5, dlid: 7, slid: 9, grh: i%4 == 1, hopLmt: 9, t: tfor(op, seq)})
			r := c.add(nil, 0)
			r.data = erfRecord(r.tsNs, decode.ERFTypeInfiniBand, pkt, 1)
			r.wireLen, r.ngIface = len(r.data), 1
		}
		seq++
	}
	return c
}

// roceMicro is RoCEv2 in a microsecond pcap (what tcpdump writes by default).
func roceMicro() *capture {
	c := newCapture("rocev2_usec.pcap", decode.LinkTypeEthernet)
	c.micro = true
	seq := 800
	for _, op := range []decode.Opcode{0x00, 0x01, 0x02, 0x06, 0x07, 0x08, 0x11, 0x11, 0x81, 0x0C, 0x10} {
		b := roce(roceSpec(op, seq))
		c.add(b, len(b))
		seq++
	}
	return c
}

// roceSnap is RoCEv2 captured with a 96-byte snap length: big frames are cut.
func roceSnap() *capture {
	c := newCapture("rocev2_snaplen.pcap", decode.LinkTypeEthernet)
	c.snapLen = 96
	seq := 900
	for i, op := range []decode.Opcode{0x06, 0x07, 0x0A, 0x11, 0x0B, 0x81, 0x10, 0x04} {
		s := roceSpec(op, seq)
		s.v6 = i%2 == 1
		if op.IsData() {
			s.t.payloadBytes = 512
		}
		b := roce(s)
		if len(b) > c.snapLen {
			c.add(b[:c.snapLen], len(b))
			c.expect.Cut = append(c.expect.Cut, c.frame())
		} else {
			c.add(b, len(b))
		}
		seq++
	}
	return c
}

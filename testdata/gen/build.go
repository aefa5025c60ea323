package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// tspec is one transport packet: the BTH, the extended headers its opcode
// implies (filled from seq so that every packet's fields differ) and payload.
type tspec struct {
	op                        decode.Opcode
	se, m, fecn, becn, ackReq bool
	tver                      uint8
	pkey                      uint16
	qp, psn                   uint32
	syndrome                  uint8 // AETH syndrome, when the opcode has an AETH
	payloadBytes              int
	seq                       int
	// exact takes the RETH DMA length and the AETH MSN from dmaLenB and
	// msn instead of deriving them from seq (for traffic with known truth).
	exact   bool
	dmaLenB uint32
	msn     uint32
	// payload, when not nil, is the payload (a MAD, mad.go); mad sets the
	// DETH to QP1's Q_Key and the source QP srcQP.
	payload []byte
	mad     bool
	srcQP   uint32
	// va and rkey, with exact, are the RETH's.
	va   uint64
	rkey uint32
}

func (s tspec) layers() []gopacket.SerializableLayer {
	bth := &decode.BTH{OpCode: s.op, SE: s.se, M: s.m, TVer: s.tver, PKey: s.pkey, FECN: s.fecn,
		BECN: s.becn, DestQP: s.qp & 0xFFFFFF, AckReq: s.ackReq, PSN: s.psn & 0xFFFFFF}
	ls := []gopacket.SerializableLayer{bth}
	for _, lt := range s.op.Headers(nil) {
		if lt == decode.LayerTypeDCConnect && s.se {
			continue // a DC connect header only with the solicited event bit clear
		}
		ls = append(ls, s.ext(lt))
	}
	if s.payload != nil {
		ls = append(ls, gopacket.Payload(s.payload))
	} else if s.payloadBytes > 0 {
		p := make([]byte, s.payloadBytes)
		for i := range p {
			p[i] = byte(s.seq*31 + i)
		}
		ls = append(ls, gopacket.Payload(p))
	}
	return ls
}

func (s tspec) ext(lt gopacket.LayerType) gopacket.SerializableLayer {
	n := uint64(s.seq)
	switch lt {
	case decode.LayerTypeRDETH:
		return &decode.RDETH{EECnxt: uint32(0x100 + n)}
	case decode.LayerTypeDETH:
		if s.mad {
			return &decode.DETH{QKey: madQKey, SrcQP: s.srcQP}
		}
		return &decode.DETH{QKey: uint32(0x80010000 + n), SrcQP: uint32(0x200 + n)}
	case decode.LayerTypeXRCETH:
		return &decode.XRCETH{XRCSRQ: uint32(0x300 + n)}
	case decode.LayerTypeRETH:
		if s.exact && s.va != 0 {
			return &decode.RETH{VA: s.va, RKey: s.rkey, DMALen: s.dmaLenB}
		}
		if s.exact {
			return &decode.RETH{VA: 0x7f00_1234_0000, RKey: 0x4321, DMALen: s.dmaLenB}
		}
		return &decode.RETH{VA: 0x7f00_1234_0000 + n<<12, RKey: uint32(0x4000 + n), DMALen: uint32(s.payloadBytes + int(n)*4096)}
	case decode.LayerTypeAtomicETH:
		return &decode.AtomicETH{VA: 0x7f00_5678_0000 + n<<3, RKey: uint32(0x5000 + n), SwapAdd: 0x1111_0000_0000 + n, Compare: 0x2222_0000_0000 + n}
	case decode.LayerTypeAETH:
		if s.exact {
			return &decode.AETH{Syndrome: s.syndrome, MSN: s.msn}
		}
		return &decode.AETH{Syndrome: s.syndrome, MSN: uint32(0x10 + n)}
	case decode.LayerTypeAtomicAckETH:
		return &decode.AtomicAckETH{OrigRemData: 0x3333_0000_0000 + n}
	case decode.LayerTypeImmDt:
		return &decode.ImmDt{Imm: uint32(0xA1B2_0000 + n)}
	case decode.LayerTypeIETH:
		return &decode.IETH{RKey: uint32(0x6000 + n)}
	case decode.LayerTypeCNPPad:
		return &decode.CNPReserved{}
	case decode.LayerTypeDCHeader:
		return &decode.DCHeader{Bytes: 0xDC00_0000_0000_0000 + n}
	case decode.LayerTypeDCConnect:
		return &decode.DCConnect{Bytes: [16]byte{0xDC, 0xCC, byte(n)}}
	}
	panic(fmt.Sprintf("gen: no builder for %v", lt))
}

func serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// gid returns a link-local GID for node n (the form IB ports use).
func gid(n byte) [16]byte {
	return [16]byte{0xfe, 0x80, 6: 0, 8: 0x00, 9: 0x02, 10: 0xc9, 11: 0x03, 12: 0, 13: 0, 14: 0x1f, 15: n}
}

// ispec is a native IB packet: LRH, optional GRH, transport.
type ispec struct {
	vl, sl, lver uint8
	dlid, slid   uint16
	grh          bool
	tclass       uint8
	flowLabel    uint32
	hopLmt       uint8
	t            tspec
}

// native builds and seals a native IB packet (LRH through VCRC).
func native(s ispec) []byte {
	lrh := &decode.LRH{VL: s.vl, LVer: s.lver, SL: s.sl, LNH: decode.LNHLocal, DLID: s.dlid, SLID: s.slid}
	ls := []gopacket.SerializableLayer{lrh}
	if s.grh {
		lrh.LNH = decode.LNHGlobal
		ls = append(ls, &decode.GRH{IPVer: 6, TClass: s.tclass, FlowLabel: s.flowLabel, NxtHdr: decode.GRHNextHeaderIBA,
			HopLmt: s.hopLmt, SGID: gid(byte(s.slid)), DGID: gid(byte(s.dlid))})
	}
	b := serialize(append(ls, s.t.layers()...)...)
	decode.SealNative(b)
	return b
}

// linkPacket builds a flow-control packet with its LPCRC.
func linkPacket(op uint8, fctbs uint16, vl uint8, fccl uint16) []byte {
	return serialize(&decode.LinkFCP{Op: op, FCTBS: fctbs, VL: vl, FCCL: fccl})
}

// rspec is a RoCE Ethernet frame.
type rspec struct {
	v1      bool // RoCEv1 (ethertype 0x8915, GRH) instead of RoCEv2
	v6      bool // RoCEv2 over IPv6
	vlan    bool
	ecn     uint8
	dscp    uint8
	ttl     uint8
	flow    uint32 // IPv6 / GRH flow label
	sport   uint16 // UDP source port (entropy)
	udpCsum bool   // keep a UDP checksum (most RoCEv2 senders send 0)
	src     byte   // host number of the sender
	dst     byte
	t       tspec
}

var macs = [...]net.HardwareAddr{{0x02, 0, 0, 0, 0, 1}, {0x02, 0, 0, 0, 0, 2}, {0x02, 0, 0, 0, 0, 3}}

// roce builds and seals a RoCE frame (no FCS).
func roce(s rspec) []byte {
	eth := &layers.Ethernet{SrcMAC: macs[s.src%3], DstMAC: macs[s.dst%3]}
	ls := []gopacket.SerializableLayer{eth}
	next := &eth.EthernetType
	if s.vlan {
		q := &layers.Dot1Q{Priority: 3, VLANIdentifier: 100 + uint16(s.src)}
		eth.EthernetType = layers.EthernetTypeDot1Q
		ls = append(ls, q)
		next = &q.Type
	}
	switch {
	case s.v1:
		*next = layers.EthernetType(decode.EtherTypeRoCEv1)
		ls = append(ls, &decode.GRH{IPVer: 6, TClass: s.dscp<<2 | s.ecn, FlowLabel: s.flow, NxtHdr: decode.GRHNextHeaderIBA,
			HopLmt: s.ttl, SGID: v4GID(s.src), DGID: v4GID(s.dst)})
	case s.v6:
		*next = layers.EthernetTypeIPv6
		ip := &layers.IPv6{Version: 6, TrafficClass: s.dscp<<2 | s.ecn, FlowLabel: s.flow, NextHeader: layers.IPProtocolUDP,
			HopLimit: s.ttl, SrcIP: net.IP(v6(s.src)), DstIP: net.IP(v6(s.dst))}
		udp := &layers.UDP{SrcPort: layers.UDPPort(s.sport), DstPort: decode.UDPPortRoCEv2}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			panic(err)
		}
		ls = append(ls, ip, udp)
	default:
		*next = layers.EthernetTypeIPv4
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: s.dscp<<2 | s.ecn, TTL: s.ttl, Flags: layers.IPv4DontFragment,
			Id: uint16(s.t.seq), Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(192, 168, 7, s.src), DstIP: net.IPv4(192, 168, 7, s.dst)}
		udp := &layers.UDP{SrcPort: layers.UDPPort(s.sport), DstPort: decode.UDPPortRoCEv2}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			panic(err)
		}
		ls = append(ls, ip, udp)
	}
	b := serialize(append(ls, s.t.layers()...)...)
	if !s.v1 && !s.udpCsum {
		off := 14 + 20
		if s.vlan {
			off += 4
		}
		if s.v6 {
			off += 20
		}
		b[off+6], b[off+7] = 0, 0
	}
	if err := decode.SealRoCE(b); err != nil {
		panic(err)
	}
	return b
}

func v6(n byte) []byte {
	return []byte{0xfd, 0x00, 0x1b, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, n}
}

// v4GID is the IPv4-mapped GID RoCE uses for 192.168.7.n.
func v4GID(n byte) [16]byte {
	return [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 7, 15: n}
}

// withFCS appends the Ethernet FCS, as an ERF Ethernet record keeps it.
func withFCS(frame []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(nil), frame...), crc32.ChecksumIEEE(frame))
}

// sll turns an Ethernet frame into a Linux cooked (v1) frame.
func sll(frame []byte, pktType uint16) []byte {
	h := make([]byte, 16, 16+len(frame))
	binary.BigEndian.PutUint16(h, pktType)
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6)
	copy(h[6:], frame[6:12])
	copy(h[14:], frame[12:14])
	return append(h, frame[14:]...)
}

// sll2 turns an Ethernet frame into a Linux cooked v2 frame.
func sll2(frame []byte, pktType uint8, ifIndex uint32) []byte {
	h := make([]byte, 20, 20+len(frame))
	copy(h, frame[12:14]) // protocol
	binary.BigEndian.PutUint32(h[4:], ifIndex)
	binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
	h[10] = pktType
	h[11] = 6
	copy(h[12:], frame[6:12])
	return append(h, frame[14:]...)
}

// erfRecord wraps a packet in an ERF record, as ibcap writes it.
func erfRecord(tsNs int64, typ uint8, pkt []byte, iface uint8) []byte {
	rec, err := capfile.AppendERFRecord(nil, tsNs, typ, pkt, len(pkt), iface)
	if err != nil {
		panic(err)
	}
	return rec
}

// udpNotRoCE is a UDP datagram to another port, which decoders must pass over.
func udpNotRoCE() []gopacket.SerializableLayer {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(192, 168, 7, 1), DstIP: net.IPv4(192, 168, 7, 2)}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 53}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	return []gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: macs[1], DstMAC: macs[2], EthernetType: layers.EthernetTypeIPv4},
		ip, udp, gopacket.Payload("not RoCE")}
}

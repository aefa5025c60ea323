package sim

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// On Ethernet links (link_layer: ethernet) a data packet is a RoCEv2 frame:
// Ethernet, an 802.1Q priority tag (VID 0, PCP = the flow's SL), IPv4, UDP
// to port 4791, the BTH and what follows it, the ICRC and the FCS. The
// switches route (L3): a frame goes from the MAC of the port that sends it
// to the MAC of the port at the other end of the link, and each switch
// takes one off the IP TTL. MAC and IP addresses follow from the LIDs.
const (
	ethHeaderBytes = decode.EthernetHeaderLen + decode.VLANTagLen // MAC header with the priority tag
	ipv4Bytes      = decode.IPv4HeaderLen
	udpBytes       = decode.UDPHeaderLen
	fcsBytes       = decode.EthernetFCSLen
	// ethGapBytes is what a frame costs on the wire beyond its bytes:
	// preamble and start delimiter (8) and the inter-frame gap (12).
	ethGapBytes = decode.EthernetGapBytes
	// pfcFrameBytes is a PFC frame with its FCS: the 64-byte minimum.
	pfcFrameBytes = 64
	// roceTOS is the IPv4 traffic class: DSCP 26, ECN-capable (ECT(0)),
	// what RoCE NICs commonly send.
	roceTOS = 26<<2 | 2
	roceTTL = 64
)

// ethernetRate is an Ethernet link of gbps as a one-lane protostate.LinkRate:
// its data rate, and a byte's time as the symbol time.
func ethernetRate(gbps int) protostate.LinkRate {
	return protostate.LinkRate{Name: fmt.Sprintf("%dGbE", gbps), LaneGbps: float64(gbps), DataGbpsPerLane: float64(gbps), SymbolTimeNs: 8 / float64(gbps)}
}

// roceWireBytes is a RoCEv2 data frame's size from the first byte of the
// MAC header through the FCS.
func roceWireBytes(extBytes, payloadBytes int) int {
	pad := (4 - payloadBytes%4) % 4
	return ethHeaderBytes + ipv4Bytes + udpBytes + bthBytes + extBytes + payloadBytes + pad + icrcBytes + fcsBytes
}

// roceOpts fixes lengths; the IPv4 checksum is computed by hand (gopacket
// would compute the UDP one too, which RoCE leaves 0).
var roceOpts = gopacket.SerializeOptions{FixLengths: true}

// RoCEFrameWireBytes is what an MTU-sized RoCEv2 data frame (no RETH)
// takes on the wire: the frame through its FCS, preamble and inter-frame
// gap.
func RoCEFrameWireBytes(mtuBytes int) int { return roceWireBytes(0, mtuBytes) + ethGapBytes }

// portMAC is a port's MAC address: 02:00:00:00:HH:LL for a host of LID
// HHLL, 02:00:01:HH:LL:PP for port PP of a switch of LID HHLL. An array,
// so that a frame's addresses cost no allocation.
func portMAC(p *port) [6]byte {
	lid := p.node.lid
	if p.node.isSwitch {
		return [6]byte{0x02, 0, 1, byte(lid >> 8), byte(lid), byte(p.num)}
	}
	return [6]byte{0x02, 0, 0, 0, byte(lid >> 8), byte(lid)}
}

// ipOf is a host's IPv4 address, from its LID.
func ipOf(lid uint16) [4]byte { return [4]byte{10, 0, byte(lid >> 8), byte(lid)} }

// ethLayers are a tap's Ethernet frame layers and addresses, filled in
// again for each frame rather than allocated per frame.
type ethLayers struct {
	eth            layers.Ethernet
	tag            layers.Dot1Q
	ip             layers.IPv4
	udp            layers.UDP
	bth            decode.BTH
	aeth           decode.AETH
	reth           decode.RETH
	pfc            decode.PFC
	payload        gopacket.Payload
	srcMAC, dstMAC [6]byte
	srcIP, dstIP   [4]byte
}

// pfcDestMAC is the MAC control frames' reserved multicast address.
var pfcDestMAC = net.HardwareAddr{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// serializeRoCE builds a data packet as a RoCEv2 frame (without its FCS)
// into t.sb, with its ICRC, and an IFA probe's headers and metadata stack.
func (t *tapWriter) serializeRoCE(pkt *packet) error {
	l := &t.ethLayers
	l.srcMAC, l.dstMAC = portMAC(pkt.link), portMAC(pkt.link.peer)
	l.srcIP, l.dstIP = ipOf(pkt.slid), ipOf(pkt.dlid)
	l.eth = layers.Ethernet{SrcMAC: l.srcMAC[:], DstMAC: l.dstMAC[:], EthernetType: layers.EthernetTypeDot1Q}
	l.tag = layers.Dot1Q{Priority: pkt.sl, Type: layers.EthernetTypeIPv4}
	l.ip = layers.IPv4{Version: 4, IHL: 5, TOS: roceTOS, TTL: roceTTL - pkt.routed, Flags: layers.IPv4DontFragment,
		Protocol: layers.IPProtocolUDP, SrcIP: l.srcIP[:], DstIP: l.dstIP[:]}
	// The UDP checksum stays 0, as RoCE senders leave it.
	l.udp = layers.UDP{SrcPort: layers.UDPPort(0xC000 | pkt.qp&0x3FFF), DstPort: decode.UDPPortRoCEv2}
	l.bth = decode.BTH{OpCode: pkt.op, PKey: 0xFFFF, DestQP: pkt.qp, PSN: pkt.psn, AckReq: pkt.ackReq}
	l.payload = t.zero[:pkt.payloadBytes]
	var err error
	switch {
	case pkt.op.IsAck():
		l.aeth = decode.AETH{MSN: pkt.msn}
		err = gopacket.SerializeLayers(t.sb, roceOpts, &l.eth, &l.tag, &l.ip, &l.udp, &l.bth, &l.aeth)
	case pkt.dmaLenBytes > 0:
		l.reth = decode.RETH{VA: 0x7f0000000000, RKey: 0x1234, DMALen: pkt.dmaLenBytes}
		err = gopacket.SerializeLayers(t.sb, roceOpts, &l.eth, &l.tag, &l.ip, &l.udp, &l.bth, &l.reth, &l.payload)
	default:
		err = gopacket.SerializeLayers(t.sb, roceOpts, &l.eth, &l.tag, &l.ip, &l.udp, &l.bth, &l.payload)
	}
	if err != nil {
		return err
	}
	frame := t.sb.Bytes()
	ip4 := frame[ethHeaderBytes : ethHeaderBytes+ipv4Bytes]
	binary.BigEndian.PutUint16(ip4[10:], ipv4Checksum(ip4))
	if err := decode.SealRoCE(frame); err != nil {
		return err
	}
	if pkt.probe != nil {
		return t.insertIFA(pkt.probe)
	}
	return nil
}

// insertIFA turns the sealed RoCEv2 frame in t.sb into an IFA 2.0 probe
// (draft-kumar-ippm-ifa-08): the IFA header after the IP header, whose
// protocol becomes IFA's; the metadata header and the hops' metadata,
// newest first, after the UDP header. The initiator leaves the UDP length
// and the ICRC as they were, so both still cover the packet without IFA.
func (t *tapWriter) insertIFA(pr *probe) error {
	const ipAt = ethHeaderBytes
	const udpAt = ipAt + ipv4Bytes
	stack := t.ifaStack[:0]
	for i := len(pr.hops) - 1; i >= 0; i-- {
		h := pr.hops[i].metadata()
		stack = h.AppendTo(stack)
	}
	t.ifaStack = stack
	md := make([]byte, 0, decode.IFAMetadataHeaderLen+len(stack))
	md = append(md, 0xFF, 0, uint8(ifaHopLimit-len(pr.hops)), uint8(len(stack)/4))
	md = append(md, stack...)
	ifa := []byte{decode.IFAVersion2<<4 | decode.IFANoGNS, uint8(layers.IPProtocolUDP), 0, ifaMaxWords}
	inserted := len(ifa) + len(md)
	if _, err := t.sb.AppendBytes(inserted); err != nil {
		return err
	}
	frame := t.sb.Bytes()
	n := len(frame) - inserted
	// Shift the UDP payload, then the UDP header, to make room.
	copy(frame[udpAt+udpBytes+inserted:], frame[udpAt+udpBytes:n])
	copy(frame[udpAt+len(ifa):], frame[udpAt:udpAt+udpBytes])
	copy(frame[udpAt:], ifa)
	copy(frame[udpAt+len(ifa)+udpBytes:], md)
	ip := frame[ipAt : ipAt+ipv4Bytes]
	binary.BigEndian.PutUint16(ip[2:], binary.BigEndian.Uint16(ip[2:])+uint16(inserted))
	ip[9] = decode.IPProtocolIFA
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ipv4Checksum(ip))
	return nil
}

// ipv4Checksum is the header checksum of an IPv4 header whose checksum
// field is zero.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}

// serializePFC builds a PFC frame (without its FCS) into t.sb: the MAC
// control header, the PFC, and zeros to the 64-byte minimum.
func (t *tapWriter) serializePFC(pkt *packet) error {
	l := &t.ethLayers
	l.srcMAC = portMAC(pkt.link)
	l.pfc = decode.PFC{ClassEnable: uint16(pkt.pfcEnable), Quanta: pkt.pfcQuanta}
	l.payload = t.zero[:pfcFrameBytes-fcsBytes-decode.EthernetHeaderLen-decode.PFCLen]
	l.eth = layers.Ethernet{SrcMAC: l.srcMAC[:], DstMAC: pfcDestMAC, EthernetType: decode.EtherTypeMACControl}
	if err := gopacket.SerializeLayers(t.sb, serializeOpts, &l.eth, &l.pfc, &l.payload); err != nil {
		return fmt.Errorf("PFC frame: %w", err)
	}
	return nil
}

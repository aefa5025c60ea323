package capture

import (
	"encoding/binary"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ibscope/ibscope/decode"
)

// Test traffic: RoCEv2 over IPv4 and IPv6, RoCEv1, VLAN-tagged RoCEv2, and
// frames that are not RoCE, all between addresses that exist only in the
// test namespaces.
var (
	macA = net.HardwareAddr{0x02, 0x1b, 0x00, 0x00, 0x00, 0x01}
	macB = net.HardwareAddr{0x02, 0x1b, 0x00, 0x00, 0x00, 0x02}
	ip4A = net.IP{10, 199, 0, 1}
	ip4B = net.IP{10, 199, 0, 2}
	ip6A = net.ParseIP("fd00:1b::1")
	ip6B = net.ParseIP("fd00:1b::2")
)

const (
	opSendOnly       = decode.Opcode(0x04) // RC_SEND_ONLY
	opRDMAWriteFirst = decode.Opcode(0x06) // RC_RDMA_WRITE_FIRST
	opAck            = decode.Opcode(0x11) // RC_ACKNOWLEDGE
)

// bthPayload builds BTH + extended headers + payload + ICRC placeholder
// for a few opcodes.
func bthBytes(op decode.Opcode, qp, psn uint32, payloadBytes int) []byte {
	buf := gopacket.NewSerializeBuffer()
	body := make([]byte, payloadBytes)
	for i := range body {
		body[i] = byte(psn + uint32(i))
	}
	switch op {
	case opRDMAWriteFirst:
		reth := make([]byte, 16)
		binary.BigEndian.PutUint64(reth, 0x7f0000001000)
		binary.BigEndian.PutUint32(reth[8:], 0x1234)
		binary.BigEndian.PutUint32(reth[12:], uint32(payloadBytes)*4)
		body = append(reth, body...)
	case opAck:
		body = []byte{0x00, 0, 0, byte(psn)} // AETH: ACK, MSN
	}
	bth := &decode.BTH{OpCode: op, PKey: 0xFFFF, DestQP: qp, PSN: psn, AckReq: true}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, bth, gopacket.Payload(body)); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// rocev2Frame builds one RoCEv2 frame with a correct ICRC.
func rocev2Frame(op decode.Opcode, qp, psn uint32, payloadBytes int, v6, vlan bool) []byte {
	ib := bthBytes(op, qp, psn, payloadBytes)
	eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}
	udp := &layers.UDP{SrcPort: layers.UDPPort(49152 + psn%4096), DstPort: decode.UDPPortRoCEv2}
	var net gopacket.SerializableLayer
	if v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: ip6A, DstIP: ip6B}
		udp.SetNetworkLayerForChecksum(ip)
		net = ip
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP, SrcIP: ip4A, DstIP: ip4B}
		udp.SetNetworkLayerForChecksum(ip)
		net = ip
	}
	ls := []gopacket.SerializableLayer{eth}
	if vlan {
		ls = append(ls, &layers.Dot1Q{Priority: 3, VLANIdentifier: 100, Type: eth.EthernetType})
		eth.EthernetType = layers.EthernetTypeDot1Q
	}
	ls = append(ls, net, udp, gopacket.Payload(ib))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	b := append([]byte(nil), buf.Bytes()...)
	ipOff := 14
	if vlan {
		ipOff += 4
	}
	ipLen := 20
	if v6 {
		ipLen = 40
	}
	u := ipOff + ipLen
	b[u+6], b[u+7] = 0, 0 // RoCEv2 senders leave the UDP checksum 0
	binary.LittleEndian.PutUint32(b[len(b)-4:], decode.ICRCRoCEv2(b[ipOff:u], b[u:len(b)-4]))
	return b
}

// rocev1Frame builds a RoCEv1 frame: Ethernet, GRH, BTH.
func rocev1Frame(qp, psn uint32, payloadBytes int) []byte {
	ib := bthBytes(opSendOnly, qp, psn, payloadBytes)
	grh := &decode.GRH{IPVer: 6, PayLen: uint16(len(ib)), NxtHdr: decode.GRHNextHeaderIBA, HopLmt: 1}
	copy(grh.SGID[:], ip6A.To16())
	copy(grh.DGID[:], ip6B.To16())
	eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: decode.EtherTypeRoCEv1}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, grh, gopacket.Payload(ib)); err != nil {
		panic(err)
	}
	b := append([]byte(nil), buf.Bytes()...)
	binary.LittleEndian.PutUint32(b[len(b)-4:], decode.ICRCRoCEv1(b[14:len(b)-4]))
	return b
}

// otherFrame builds frames that are not RoCE: UDP to another port, a UDP
// packet from port 4791 (source, not destination), ARP, and an IPv4
// fragment whose offset is not 0.
func otherFrame(kind int) []byte {
	eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: ip4A, DstIP: ip4B}
	udp := &layers.UDP{SrcPort: 5353, DstPort: 5353}
	udp.SetNetworkLayerForChecksum(ip)
	payload := gopacket.Payload(make([]byte, 64))
	ls := []gopacket.SerializableLayer{eth, ip, udp, payload}
	switch kind % 4 {
	case 1:
		udp.SrcPort, udp.DstPort = decode.UDPPortRoCEv2, 9999
	case 2:
		eth.EthernetType = layers.EthernetTypeARP
		ls = []gopacket.SerializableLayer{eth, &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
			HwAddressSize: 6, ProtAddressSize: 4, Operation: layers.ARPRequest, SourceHwAddress: macA, SourceProtAddress: ip4A,
			DstHwAddress: make([]byte, 6), DstProtAddress: ip4B}}
	case 3:
		// A later fragment: its payload starts with bytes that look like
		// a UDP header to port 4791, which the filter must not believe.
		ip.FragOffset = 100
		ls = []gopacket.SerializableLayer{eth, ip, gopacket.Payload([]byte{0x12, 0xb7, 0x12, 0xb7, 0, 8, 0, 0})}
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// mixedTraffic returns n RoCE frames of every kind, each followed now and
// then by a frame that is not RoCE: the RoCE ones in order, and all frames
// in sending order.
func mixedTraffic(n int, vlan bool) (roce, all [][]byte) {
	for i := range n {
		psn := uint32(i / 5) // each of the five flows counts its own PSNs
		var f []byte
		switch i % 5 {
		case 0:
			f = rocev2Frame(opSendOnly, 0x11, psn, 64+i%900, false, false)
		case 1:
			f = rocev2Frame(opRDMAWriteFirst, 0x12, psn, 1024, false, vlan)
		case 2:
			f = rocev2Frame(opAck, 0x13, psn, 0, true, false)
		case 3:
			f = rocev1Frame(0x14, psn, 200)
		case 4:
			f = rocev2Frame(opSendOnly, 0x15, psn, 32, true, vlan)
		}
		roce = append(roce, f)
		all = append(all, f)
		if i%7 == 3 {
			all = append(all, otherFrame(i))
		}
	}
	return roce, all
}

// writeTestPcap writes frames to a nanosecond pcap, 1 µs apart.
func writeTestPcap(t testing.TB, path string, frames [][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_700_000_000, 0)
	for i, fr := range frames {
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(fr), Length: len(fr)}
		if err := w.WritePacket(ci, fr); err != nil {
			t.Fatal(err)
		}
	}
}

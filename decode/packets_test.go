package decode

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ibPacket builds a sealed native IB packet (LRH, BTH, the opcode's headers,
// payloadBytes of data) with the serializers.
func ibPacket(t testing.TB, op Opcode, payloadBytes int) []byte {
	t.Helper()
	ls := []gopacket.SerializableLayer{&LRH{LNH: LNHLocal, DLID: 1, SLID: 2}, &BTH{OpCode: op, PKey: 0xFFFF, DestQP: 7, PSN: 9}}
	for _, lt := range op.Headers(nil) {
		ls = append(ls, newExtLayer(extOf(lt), op).(gopacket.SerializableLayer))
	}
	if payloadBytes > 0 {
		ls = append(ls, gopacket.Payload(bytes.Repeat([]byte{0xAB}, payloadBytes)))
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		t.Fatal(err)
	}
	p := append([]byte(nil), buf.Bytes()...)
	SealNative(p)
	return p
}

// rocePacket builds a sealed RoCEv2 IPv4 frame.
func rocePacket(t testing.TB, op Opcode, payloadBytes int) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 50000, DstPort: UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	ls := []gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4},
		ip, udp, &BTH{OpCode: op, PKey: 0xFFFF, DestQP: 7, PSN: 9}}
	for _, lt := range op.Headers(nil) {
		ls = append(ls, newExtLayer(extOf(lt), op).(gopacket.SerializableLayer))
	}
	if payloadBytes > 0 {
		ls = append(ls, gopacket.Payload(bytes.Repeat([]byte{0xCD}, payloadBytes)))
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	p := append([]byte(nil), buf.Bytes()...)
	if err := SealRoCE(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func extOf(lt gopacket.LayerType) ext {
	for e, t := range extLayerTypes {
		if extNew[e] != nil && t == lt {
			return ext(e)
		}
	}
	return extNone
}

package decode_test

import (
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/decode"
)

// Build a RoCEv2 RDMA WRITE with the serializers, seal its ICRC, and decode
// it on the fast path.
func ExampleSealRoCE() {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true},
		&layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4},
		ip, &layers.UDP{SrcPort: 49152, DstPort: decode.UDPPortRoCEv2},
		&decode.BTH{OpCode: 0x0A, PKey: 0xFFFF, DestQP: 0x12, PSN: 100, AckReq: true}, // RC RDMA WRITE ONLY
		&decode.RETH{VA: 0x7f0000001000, RKey: 0x42, DMALen: 5},
		gopacket.Payload("hello"))
	if err != nil {
		panic(err)
	}
	frame := buf.Bytes()
	if err := decode.SealRoCE(frame); err != nil {
		panic(err)
	}
	d := decode.Decoder{LinkType: decode.LinkTypeEthernet, CheckCRC: true}
	var f decode.Frame
	f.CapLen, f.WireLen = len(frame), len(frame)
	if err := d.Decode(frame, &f); err != nil {
		panic(err)
	}
	fmt.Println(f.Transport, f.BTH.OpCode, f.RETH.DMALen, string(f.Payload), "pad", f.BTH.PadCnt, "ICRC ok", f.ICRCOK)
	// Output: rocev2 RC_RDMA_WRITE_ONLY 5 hello pad 3 ICRC ok true
}

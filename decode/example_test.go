package decode_test

import (
	"bytes"
	"fmt"
	"io"
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

// Write native IB packets and a flow-control packet as ERF records (the form
// Wireshark 4.0 opens), then read them back.
func ExamplePcapWriter() {
	var file bytes.Buffer
	w, err := decode.NewPcapWriter(&file, decode.LinkTypeERF)
	if err != nil {
		panic(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	check(gopacket.SerializeLayers(buf, opts, &decode.LRH{LNH: decode.LNHLocal, DLID: 2, SLID: 1},
		&decode.BTH{OpCode: 0x04, PKey: 0xFFFF, DestQP: 7}, gopacket.Payload("ping"))) // RC SEND ONLY
	pkt := append([]byte(nil), buf.Bytes()...)
	decode.SealNative(pkt)                                                                   // ICRC and VCRC
	check(gopacket.SerializeLayers(buf, opts, &decode.LinkFCP{FCTBS: 10, VL: 0, FCCL: 200})) // LPCRC computed
	fcp := append([]byte(nil), buf.Bytes()...)
	check(w.WritePacket(1_000_000_000, pkt, 0))
	check(w.WritePacket(1_000_000_500, fcp, 1))
	check(w.Flush())

	r, err := decode.NewReader(&file, "example.pcap")
	if err != nil {
		panic(err)
	}
	var f decode.Frame
	for r.Next(&f) != io.EOF {
		fmt.Println(f.Number, f.TsNs, f.Iface, f.Transport, f.IBLen, "CRCs ok", f.ICRCOK || f.Transport == decode.TransportLink, f.VCRCOK)
	}
	// Output:
	// 1 1000000000 0 ib 30 CRCs ok true true
	// 2 1000000500 1 link 6 CRCs ok true true
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

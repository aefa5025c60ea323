package capfile_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Write native IB packets and a flow-control packet as ERF records (the form
// Wireshark 4.0 opens), then read them back.
func ExamplePcapWriter() {
	var file bytes.Buffer
	w, err := capfile.NewPcapWriter(&file, decode.LinkTypeERF)
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
	check(w.WritePacket(&capfile.Packet{TsNs: 1_000_000_000, Data: pkt}))
	check(w.WritePacket(&capfile.Packet{TsNs: 1_000_000_500, Data: fcp, Iface: 1}))
	check(w.Flush())

	r, err := capfile.NewReader(&file, "example.pcap")
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

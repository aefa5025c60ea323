package main

import (
	"fmt"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Benchmark captures: RC RDMA WRITE messages of 512 bytes sent as FIRST,
// MIDDLE, MIDDLE, LAST packets of 128 bytes (a 128-byte path MTU keeps the
// files small), each message followed by an ACK; the RoCEv2 file adds a CNP
// every 64 messages, the native IB file (ERF records) a flow-control packet
// every 16 messages. 2,000,000 frames make 360 MB of RoCEv2 (164-byte frames
// on average) or 336 MB of ERF (130-byte packets on average).
const benchPayloadBytes = 128

func writeBench(path string, frames int, native bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	lt := decode.LinkTypeEthernet
	if native {
		lt = decode.LinkTypeERF
	}
	w, err := capfile.NewPcapWriter(f, lt)
	if err != nil {
		return err
	}
	b := benchBuilder{native: native}
	tsNs := baseNs
	for n := 0; n < frames; n++ {
		tsNs += 113 + int64(n%7)*11 // about 8 M packets/s, not evenly spaced
		if err := w.WritePacket(&capfile.Packet{TsNs: tsNs, Data: b.next(), Iface: uint8(n % 2)}); err != nil {
			return fmt.Errorf("%s: frame %d: %w", path, n+1, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// benchBuilder yields the packets of the benchmark mix in turn.
type benchBuilder struct {
	native  bool
	n       int    // packets built
	psn     uint32 // next request PSN
	msgs    int    // messages sent
	payload [benchPayloadBytes]byte
	buf     gopacket.SerializeBuffer
}

// benchCycle is one message: four WRITE packets and the ACK.
var benchCycle = [...]decode.Opcode{0x06, 0x07, 0x07, 0x08, 0x11}

func (b *benchBuilder) next() []byte {
	if b.buf == nil {
		b.buf = gopacket.NewSerializeBuffer()
		for i := range b.payload {
			b.payload[i] = byte(i)
		}
	}
	i := b.n % (len(benchCycle) + 1)
	b.n++
	extra := (b.native && b.msgs%16 == 15) || (!b.native && b.msgs%64 == 63)
	if i == len(benchCycle) {
		b.msgs++
		if !extra {
			i = 0 // no extra packet this message: start the next one
			b.n++
		} else if b.native {
			return linkPacket(0, uint16(b.psn*3), 0, uint16(b.psn*3+256))
		} else {
			return b.roce(&decode.BTH{OpCode: decode.OpcodeCNP, BECN: true, PKey: 0xFFFF, DestQP: 0x11}, &decode.CNPReserved{})
		}
	}
	op := benchCycle[i]
	bth := &decode.BTH{OpCode: op, PKey: 0xFFFF, DestQP: 0x11, PSN: b.psn & 0xFFFFFF}
	var ls []gopacket.SerializableLayer
	switch op {
	case 0x06:
		ls = []gopacket.SerializableLayer{&decode.RETH{VA: 0x7f0000000000 + uint64(b.msgs)<<9, RKey: 0x1234, DMALen: 4 * benchPayloadBytes}, gopacket.Payload(b.payload[:])}
	case 0x11:
		bth.DestQP = 0x22
		bth.PSN = (b.psn - 1) & 0xFFFFFF
		ls = []gopacket.SerializableLayer{&decode.AETH{Syndrome: 0x1F, MSN: uint32(b.msgs)}}
	default:
		ls = []gopacket.SerializableLayer{gopacket.Payload(b.payload[:])}
	}
	if op != 0x11 {
		b.psn++
		bth.AckReq = op == 0x08
	}
	if b.native {
		lrh := &decode.LRH{VL: 0, SL: 0, LNH: decode.LNHLocal, DLID: 2, SLID: 1}
		if op == 0x11 {
			lrh.DLID, lrh.SLID = 1, 2
		}
		p := b.serialize(append([]gopacket.SerializableLayer{lrh, bth}, ls...)...)
		decode.SealNative(p)
		return p
	}
	return b.roce(bth, ls...)
}

func (b *benchBuilder) roce(bth *decode.BTH, ls ...gopacket.SerializableLayer) []byte {
	eth := &layers.Ethernet{SrcMAC: macs[1], DstMAC: macs[2], EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: 26<<2 | 2, TTL: 64, Flags: layers.IPv4DontFragment,
		Protocol: layers.IPProtocolUDP, SrcIP: []byte{192, 168, 7, 1}, DstIP: []byte{192, 168, 7, 2}}
	if bth.OpCode == 0x11 || bth.OpCode == decode.OpcodeCNP {
		eth.SrcMAC, eth.DstMAC = macs[2], macs[1]
		ip.SrcIP, ip.DstIP = ip.DstIP, ip.SrcIP
	}
	udp := &layers.UDP{SrcPort: 0xC000 + layers.UDPPort(bth.DestQP), DstPort: decode.UDPPortRoCEv2}
	p := b.serialize(append([]gopacket.SerializableLayer{eth, ip, udp, bth}, ls...)...)
	// The serializers computed no UDP checksum (no pseudo-header given): RoCEv2 sends 0.
	if err := decode.SealRoCE(p); err != nil {
		panic(err)
	}
	return p
}

func (b *benchBuilder) serialize(ls ...gopacket.SerializableLayer) []byte {
	if err := gopacket.SerializeLayers(b.buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		panic(err)
	}
	return b.buf.Bytes()
}

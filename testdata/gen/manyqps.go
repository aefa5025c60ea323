package main

import (
	"fmt"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// maxManyQPs is the most one-packet QPs writeManyQPs writes: one QP number
// each, of the 2^24 a BTH can name, QP 0 and 1 (the management QPs) left out.
const maxManyQPs = 1<<24 - 2

// writeManyQPs writes the capture of the flows memory benchmark
// (bench/manyqps.sh): qps RoCEv2 frames 1 us apart, each a SEND ONLY of 64
// bytes to a QP of its own (QP i+2), from 256 hosts to one, every other
// asking for an ACK that never comes: qps flows of one packet, half of
// them waiting for an ACK, as TestFlowsMemoryPerFlow's (which gives each
// its own host pair). The first QP sends one more packet last, so that
// ipd has an inter-packet delay to report. 10 million make 1.4 GB.
func writeManyQPs(path string, qps int) error {
	if qps > maxManyQPs {
		return fmt.Errorf("%d QPs: at most %d", qps, maxManyQPs)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := capfile.NewPcapWriter(f, decode.LinkTypeEthernet)
	if err != nil {
		return err
	}
	buf := gopacket.NewSerializeBuffer()
	payload := make([]byte, 64)
	for n := range qps + 1 {
		i := n % qps // the last frame is the first QP's second
		eth := &layers.Ethernet{SrcMAC: macs[1], DstMAC: macs[2], EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: 26<<2 | 2, TTL: 64, Flags: layers.IPv4DontFragment,
			Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 1, 0, byte(i)}, DstIP: []byte{10, 2, 0, 1}}
		udp := &layers.UDP{SrcPort: 0xC000 + layers.UDPPort(i&0x3FFF), DstPort: decode.UDPPortRoCEv2}
		bth := &decode.BTH{OpCode: 0x04, PKey: 0xFFFF, DestQP: uint32(i + 2), PSN: uint32(n*7919) & decode.PSNMask, AckReq: i%2 == 0}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, udp, bth, gopacket.Payload(payload)); err != nil {
			return fmt.Errorf("frame %d: %w", n+1, err)
		}
		p := buf.Bytes()
		if err := decode.SealRoCE(p); err != nil {
			return fmt.Errorf("frame %d: %w", n+1, err)
		}
		if err := w.WritePacket(&capfile.Packet{TsNs: baseNs + int64(n)*1000, Data: p}); err != nil {
			return fmt.Errorf("%s: frame %d: %w", path, n+1, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

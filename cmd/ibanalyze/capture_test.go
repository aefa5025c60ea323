package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ibscope/ibscope/decode"
)

// tpkt is one RoCEv2 packet of a test capture with a known timestamp.
type tpkt struct {
	tsNs     int64
	src, dst byte // 192.168.7.n
	qp, psn  uint32
	op       decode.Opcode
	ackReq   bool
	syndrome uint8 // AETH syndrome for opcodes with an AETH
	ecn      uint8
	payload  int
}

// baseNs is the test captures' epoch: 2024-01-01T00:00:00Z.
const baseNs = int64(1_704_067_200_000_000_000)

// roceFrame builds a sealed RoCEv2 frame over IPv4.
func roceFrame(t *testing.T, p tpkt) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.src}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.dst}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: p.ecn, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(192, 168, 7, p.src), DstIP: net.IPv4(192, 168, 7, p.dst)}
	udp := &layers.UDP{SrcPort: 49152, DstPort: decode.UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	ls := []gopacket.SerializableLayer{eth, ip, udp, &decode.BTH{OpCode: p.op, DestQP: p.qp, PSN: p.psn, AckReq: p.ackReq, PKey: 0xffff}}
	for _, lt := range p.op.Headers(nil) {
		switch lt {
		case decode.LayerTypeRETH:
			ls = append(ls, &decode.RETH{DMALen: uint32(p.payload)})
		case decode.LayerTypeAETH:
			ls = append(ls, &decode.AETH{Syndrome: p.syndrome})
		case decode.LayerTypeCNPPad:
			ls = append(ls, &decode.CNPReserved{})
		}
	}
	if p.payload > 0 {
		ls = append(ls, gopacket.Payload(make([]byte, p.payload)))
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b[14+20+6], b[14+20+7] = 0, 0 // RoCEv2 senders leave the UDP checksum 0
	if err := decode.SealRoCE(b); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), b...)
}

// writeCapture writes pkts to a nanosecond pcap in t.TempDir().
func writeCapture(t *testing.T, name string, pkts []tpkt) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := decode.NewPcapWriter(f, decode.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		if err := w.WritePacket(p.tsNs, roceFrame(t, p), 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeMicroCapture writes pkts to a microsecond pcap, as ibdump does.
func writeMicroCapture(t *testing.T, name string, pkts []tpkt) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		b := roceFrame(t, p)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(0, p.tsNs), CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeStream is n RDMA WRITE packets on one QP, gap(i) ns apart.
func writeStream(n int, qp uint32, t0 int64, gap func(i int) int64) []tpkt {
	var out []tpkt
	ts := t0
	for i := range n {
		if i > 0 {
			ts += gap(i)
		}
		op := decode.Opcode(0x07)
		switch {
		case i == 0:
			op = 0x06
		case i == n-1:
			op = 0x08
		}
		out = append(out, tpkt{tsNs: ts, src: 1, dst: 2, qp: qp, psn: uint32(i), op: op, payload: 1024})
	}
	return out
}

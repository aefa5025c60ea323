package correlate

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/ibscope/ibscope/decode"
)

// testPacket is one RoCEv2 packet of a capture built for a test.
type testPacket struct {
	tsNs       int64
	src, dst   netip.Addr // IPv4
	ecn        uint8      // IP ECN bits, 3 = CE
	op         decode.Opcode
	qp, psn    uint32
	payload    int   // message bytes after the headers
	nak        bool  // an ACKNOWLEDGE carrying a PSN-sequence-error NAK
	srcMACByte uint8 // last byte of the source MAC
}

// testCaptureWriter writes RoCEv2 frames built with gopacket's and decode's
// serializers (ICRC sealed) to a nanosecond pcap.
type testCaptureWriter struct {
	f   *os.File
	bw  *bufio.Writer
	w   *pcapgo.Writer
	buf gopacket.SerializeBuffer
}

func newTestCapture(t testing.TB, path string) *testCaptureWriter {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	return &testCaptureWriter{f: f, bw: bw, w: w, buf: gopacket.NewSerializeBuffer()}
}

// add writes p and returns its frame length in bytes.
func (c *testCaptureWriter) add(t testing.TB, p testPacket) int {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.srcMACByte}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 0xFF},
		EthernetType: layers.EthernetTypeIPv4}
	s4, d4 := p.src.As4(), p.dst.As4()
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: 26<<2 | p.ecn, TTL: 64, Flags: layers.IPv4DontFragment,
		Protocol: layers.IPProtocolUDP, SrcIP: s4[:], DstIP: d4[:]}
	udp := &layers.UDP{SrcPort: 0xC000, DstPort: decode.UDPPortRoCEv2}
	bth := &decode.BTH{OpCode: p.op, PKey: 0xFFFF, DestQP: p.qp, PSN: p.psn}
	ls := []gopacket.SerializableLayer{eth, ip, udp, bth}
	switch {
	case p.op.IsCNP():
		ls = append(ls, &decode.CNPReserved{})
	case p.op.IsAck():
		a := &decode.AETH{Syndrome: 0x1F, MSN: p.psn}
		if p.nak {
			a.Syndrome = 3<<5 | decode.NAKPSNSequenceError
		}
		ls = append(ls, a)
	case p.op == 0x06 || p.op == 0x0A: // RC RDMA WRITE FIRST / ONLY
		ls = append(ls, &decode.RETH{VA: 0x1000, RKey: 7, DMALen: uint32(p.payload)})
	}
	if p.payload > 0 {
		ls = append(ls, gopacket.Payload(make([]byte, p.payload)))
	}
	if err := gopacket.SerializeLayers(c.buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		t.Fatal(err)
	}
	frame := c.buf.Bytes()
	if err := decode.SealRoCE(frame); err != nil {
		t.Fatal(err)
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, p.tsNs), CaptureLength: len(frame), Length: len(frame)}
	if err := c.w.WritePacket(ci, frame); err != nil {
		t.Fatal(err)
	}
	return len(frame)
}

func (c *testCaptureWriter) close(t testing.TB) {
	if err := c.bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.f.Close(); err != nil {
		t.Fatal(err)
	}
}

var (
	hostA = netip.MustParseAddr("192.168.7.1")
	hostB = netip.MustParseAddr("192.168.7.2")
)

// writeStream writes n RDMA WRITE MIDDLE packets of 1024 bytes from A to B,
// one every gapNs from startNs, each 16th answered by an ACK from B.
func writeStream(t testing.TB, path string, n int, startNs, gapNs int64) {
	c := newTestCapture(t, path)
	for i := 0; i < n; i++ {
		ts := startNs + int64(i)*gapNs
		c.add(t, testPacket{tsNs: ts, src: hostA, dst: hostB, op: 0x07, qp: 0x11, psn: uint32(i), payload: 1024, srcMACByte: 1})
		if i%16 == 15 {
			c.add(t, testPacket{tsNs: ts + gapNs/2, src: hostB, dst: hostA, op: 0x11, qp: 0x22, psn: uint32(i), srcMACByte: 2})
		}
	}
	c.close(t)
}

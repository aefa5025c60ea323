package analyze

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

// tpkt is one packet of a test capture with a known timestamp.
type tpkt struct {
	tsNs     int64
	src, dst byte // host numbers: 192.168.7.n for RoCE, LID n for native IB
	qp, psn  uint32
	op       decode.Opcode
	ackReq   bool
	fecn     bool
	syndrome uint8 // AETH syndrome for opcodes with an AETH
	msn      uint32
	ecn      uint8
	payload  int    // payload bytes
	dmaLen   uint32 // RETH DMA length
	badICRC  bool
}

// baseNs is the test captures' epoch: 2024-01-01T00:00:00Z.
const baseNs = int64(1_704_067_200_000_000_000)

func (p tpkt) transport() []gopacket.SerializableLayer {
	ls := []gopacket.SerializableLayer{&decode.BTH{OpCode: p.op, DestQP: p.qp, PSN: p.psn, AckReq: p.ackReq, FECN: p.fecn, PKey: 0xffff}}
	for _, lt := range p.op.Headers(nil) {
		switch lt {
		case decode.LayerTypeRETH:
			ls = append(ls, &decode.RETH{VA: 0x1000, RKey: 7, DMALen: p.dmaLen})
		case decode.LayerTypeAETH:
			ls = append(ls, &decode.AETH{Syndrome: p.syndrome, MSN: p.msn})
		case decode.LayerTypeImmDt:
			ls = append(ls, &decode.ImmDt{Imm: 1})
		case decode.LayerTypeCNPPad:
			ls = append(ls, &decode.CNPReserved{})
		case decode.LayerTypeDETH:
			ls = append(ls, &decode.DETH{QKey: 1, SrcQP: 2})
		case decode.LayerTypeAtomicETH:
			ls = append(ls, &decode.AtomicETH{})
		case decode.LayerTypeAtomicAckETH:
			ls = append(ls, &decode.AtomicAckETH{})
		case decode.LayerTypeIETH:
			ls = append(ls, &decode.IETH{})
		}
	}
	if p.payload > 0 {
		ls = append(ls, gopacket.Payload(make([]byte, p.payload)))
	}
	return ls
}

func serializeTest(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// roceFrame builds a sealed RoCEv2 frame over IPv4.
func roceFrame(t testing.TB, p tpkt) []byte {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.src}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.dst}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: p.ecn, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(192, 168, 7, p.src), DstIP: net.IPv4(192, 168, 7, p.dst)}
	udp := &layers.UDP{SrcPort: 49152, DstPort: decode.UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	b := serializeTest(t, append([]gopacket.SerializableLayer{eth, ip, udp}, p.transport()...)...)
	b[14+20+6], b[14+20+7] = 0, 0 // RoCEv2 senders leave the UDP checksum 0
	if err := decode.SealRoCE(b); err != nil {
		t.Fatal(err)
	}
	if p.badICRC {
		b[len(b)-1] ^= 0xFF
	}
	return b
}

// nativeFrame builds a sealed native IB packet (LRH through VCRC).
func nativeFrame(t testing.TB, p tpkt) []byte {
	lrh := &decode.LRH{LNH: decode.LNHLocal, SLID: uint16(p.src), DLID: uint16(p.dst)}
	b := serializeTest(t, append([]gopacket.SerializableLayer{lrh}, p.transport()...)...)
	decode.SealNative(b)
	return b
}

// writeCapture writes pkts in the given order to a nanosecond pcap in
// t.TempDir: RoCEv2 frames, or native IB (link type 247) with native.
func writeCapture(t testing.TB, name string, native bool, pkts []tpkt) string {
	return writeCaptureIn(t, t.TempDir(), name, native, pkts)
}

// writeCaptureIn is writeCapture into dir.
func writeCaptureIn(t testing.TB, dir, name string, native bool, pkts []tpkt) string {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	lt := decode.LinkTypeEthernet
	if native {
		lt = decode.LinkTypeInfiniBand
	}
	w, err := decode.NewPcapWriter(f, lt)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		frame := roceFrame
		if native {
			frame = nativeFrame
		}
		if err := w.WritePacket(p.tsNs, frame(t, p), 0); err != nil {
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

// writeMicroCapture writes RoCEv2 frames to a microsecond pcap (magic
// 0xa1b2c3d4), as ibdump and tcpdump write by default.
func writeMicroCapture(t testing.TB, name string, pkts []tpkt) string {
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
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, p.tsNs), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeStream is a RDMA WRITE stream: n packets of payload bytes on one QP
// from src to dst, spaced by gap(i) ns, PSNs from psn0.
func writeStream(n int, src, dst byte, qp, psn0 uint32, payload int, t0 int64, gap func(i int) int64) []tpkt {
	out := make([]tpkt, 0, n)
	ts := t0
	for i := range n {
		if i > 0 {
			ts += gap(i)
		}
		op := decode.Opcode(0x07) // RC_RDMA_WRITE_MIDDLE
		switch {
		case i == 0:
			op = 0x06
		case i == n-1:
			op = 0x08
		}
		out = append(out, tpkt{tsNs: ts, src: src, dst: dst, qp: qp, psn: (psn0 + uint32(i)) & 0xFFFFFF, op: op, payload: payload, dmaLen: uint32(n * payload)})
	}
	return out
}

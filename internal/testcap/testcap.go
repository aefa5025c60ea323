package testcap

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

// BaseNs is the test captures' epoch: 2024-01-01T00:00:00Z, ns.
const BaseNs = int64(1_704_067_200_000_000_000)

// Packet is one packet of a test capture with a known timestamp.
type Packet struct {
	TsNs     int64
	Src, Dst byte // host numbers: 192.168.7.n for RoCE, LID n for native IB
	QP, PSN  uint32
	Op       decode.Opcode
	AckReq   bool
	FECN     bool
	Syndrome uint8 // AETH syndrome for opcodes with an AETH
	MSN      uint32
	ECN      uint8  // IP ECN bits (RoCE), 3 = CE
	Payload  int    // payload bytes
	DMALen   uint32 // RETH DMA length, bytes
	BadICRC  bool   // RoCE only: the ICRC is corrupted after sealing
	// MAD, when set, is the payload of a UD packet from QP1 (CMMAD builds one).
	MAD []byte
}

// transport is the packet's BTH, the extended headers its opcode carries,
// and its payload.
func (p Packet) transport() []gopacket.SerializableLayer {
	ls := []gopacket.SerializableLayer{&decode.BTH{OpCode: p.Op, DestQP: p.QP, PSN: p.PSN, AckReq: p.AckReq, FECN: p.FECN, PKey: 0xffff}}
	for _, lt := range p.Op.Headers(nil) {
		switch lt {
		case decode.LayerTypeRETH:
			ls = append(ls, &decode.RETH{VA: 0x1000, RKey: 7, DMALen: p.DMALen})
		case decode.LayerTypeAETH:
			ls = append(ls, &decode.AETH{Syndrome: p.Syndrome, MSN: p.MSN})
		case decode.LayerTypeImmDt:
			ls = append(ls, &decode.ImmDt{Imm: 1})
		case decode.LayerTypeCNPPad:
			ls = append(ls, &decode.CNPReserved{})
		case decode.LayerTypeDETH:
			if p.MAD != nil {
				ls = append(ls, &decode.DETH{QKey: 0x80010000, SrcQP: 1})
				continue
			}
			ls = append(ls, &decode.DETH{QKey: 1, SrcQP: 2})
		case decode.LayerTypeAtomicETH:
			ls = append(ls, &decode.AtomicETH{})
		case decode.LayerTypeAtomicAckETH:
			ls = append(ls, &decode.AtomicAckETH{})
		case decode.LayerTypeIETH:
			ls = append(ls, &decode.IETH{})
		case decode.LayerTypeFETH:
			ls = append(ls, &decode.FETH{Selectivity: decode.FlushRegion, Placement: decode.FlushPersistence})
		}
	}
	if p.MAD != nil {
		ls = append(ls, gopacket.Payload(p.MAD))
	} else if p.Payload > 0 {
		ls = append(ls, gopacket.Payload(make([]byte, p.Payload)))
	}
	return ls
}

// Serialize builds a frame of layers ls, lengths and checksums computed.
func Serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// RoCEFrame builds a sealed RoCEv2 frame over IPv4.
func RoCEFrame(t testing.TB, p Packet) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.Src}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, p.Dst}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: p.ECN, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(192, 168, 7, p.Src), DstIP: net.IPv4(192, 168, 7, p.Dst)}
	udp := &layers.UDP{SrcPort: 49152, DstPort: decode.UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	b := Serialize(t, append([]gopacket.SerializableLayer{eth, ip, udp}, p.transport()...)...)
	b[14+20+6], b[14+20+7] = 0, 0 // RoCEv2 senders leave the UDP checksum 0
	if err := decode.SealRoCE(b); err != nil {
		t.Fatal(err)
	}
	if p.BadICRC {
		b[len(b)-1] ^= 0xFF
	}
	return b
}

// NativeFrame builds a sealed native IB packet (LRH through VCRC).
func NativeFrame(t testing.TB, p Packet) []byte {
	t.Helper()
	lrh := &decode.LRH{LNH: decode.LNHLocal, SLID: uint16(p.Src), DLID: uint16(p.Dst)}
	b := Serialize(t, append([]gopacket.SerializableLayer{lrh}, p.transport()...)...)
	decode.SealNative(b)
	return b
}

// Write writes pkts in the given order to a nanosecond pcap named name in
// t.TempDir(): RoCEv2 frames, or native IB (link type 247) with native.
func Write(t testing.TB, name string, native bool, pkts []Packet) string {
	t.Helper()
	return WriteIn(t, t.TempDir(), name, native, pkts)
}

// WriteIn is Write into dir.
func WriteIn(t testing.TB, dir, name string, native bool, pkts []Packet) string {
	t.Helper()
	lt, frame := decode.LinkTypeEthernet, RoCEFrame
	if native {
		lt, frame = decode.LinkTypeInfiniBand, NativeFrame
	}
	frames := make([]Frame, len(pkts))
	for i, p := range pkts {
		frames[i] = Frame{TsNs: p.TsNs, B: frame(t, p)}
	}
	return writePcap(t, filepath.Join(dir, name), lt, frames)
}

// WriteMicro writes RoCEv2 frames to a microsecond pcap (magic 0xa1b2c3d4)
// named name in t.TempDir(), as ibdump and tcpdump write by default.
func WriteMicro(t testing.TB, name string, pkts []Packet) string {
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
		b := RoCEFrame(t, p)
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, p.TsNs), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Stream is an RDMA WRITE message: n packets of payload bytes on one QP from
// src to dst, the first at t0 and packet i gap(i) ns after packet i-1, PSNs
// from psn0 (mod 2^24).
func Stream(n int, src, dst byte, qp, psn0 uint32, payload int, t0 int64, gap func(i int) int64) []Packet {
	out := make([]Packet, 0, n)
	ts := t0
	for i := range n {
		if i > 0 {
			ts += gap(i)
		}
		op := decode.Opcode(0x07) // RC_RDMA_WRITE_MIDDLE
		switch {
		case i == 0:
			op = 0x06 // RC_RDMA_WRITE_FIRST
		case i == n-1:
			op = 0x08 // RC_RDMA_WRITE_LAST
		}
		out = append(out, Packet{TsNs: ts, Src: src, Dst: dst, QP: qp, PSN: (psn0 + uint32(i)) & 0xFFFFFF, Op: op, Payload: payload, DMALen: uint32(n * payload)})
	}
	return out
}

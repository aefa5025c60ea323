package decode

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// iba15Transport is an RC FLUSH's transport packet (BTH, FETH, RETH, room
// for the ICRC) written byte by byte from IBA 1.5's layout, not by the
// serializers: opcode 0x1C, the BTH's pad count 0, QP 0x000011, PSN 5;
// the FETH's low byte 0x12 (selectivity 1, the memory region; placement
// 2, persistence) with its reserved bits set, to be ignored; the RETH's VA,
// R_Key and DMA length.
const iba15Flush = "1c00ffff" + "00000011" + "80000005" + // BTH: opcode, flags, P_Key; QP; AckReq, PSN
	"ffffffd2" + // FETH: reserved 31-6 all ones, selectivity 01, placement 0010
	"00007f0012340000" + "00004321" + "00001000" + // RETH: VA, R_Key, DMA length
	"00000000" // ICRC, sealed below

// iba15AtomicWrite is an RC ATOMIC WRITE (0x1D): BTH, RETH and its 8 bytes
// of data.
const iba15AtomicWrite = "1d00ffff" + "00000011" + "80000006" +
	"00007f0012340008" + "00004321" + "00000008" +
	"0123456789abcdef" +
	"00000000"

// iba15Frame wraps a transport packet given in hex in Ethernet, IPv4 and UDP
// to port 4791 and seals its ICRC.
func iba15Frame(t testing.TB, transportHex string) []byte {
	t.Helper()
	tp, err := hex.DecodeString(transportHex)
	if err != nil {
		t.Fatal(err)
	}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 50000, DstPort: UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, udp, gopacket.Payload(tp)); err != nil {
		t.Fatal(err)
	}
	p := append([]byte(nil), buf.Bytes()...)
	if err := SealRoCE(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeChecked decodes an Ethernet frame with its CRCs checked.
func decodeChecked(t *testing.T, frame []byte) *Frame {
	t.Helper()
	d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
	f := &Frame{CapLen: len(frame), WireLen: len(frame)}
	if err := d.Decode(frame, f); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !f.ICRCOK {
		t.Fatal("ICRC not ok")
	}
	return f
}

// TestFLUSH decodes an RC FLUSH built from the spec's byte layout: the
// FETH's fields, the RETH after it, no payload, and the FETH in the JSON,
// the summary line and the table's columns.
func TestFLUSH(t *testing.T) {
	f := decodeChecked(t, iba15Frame(t, iba15Flush))
	if got := f.BTH.OpCode.String(); got != "RC_FLUSH" {
		t.Errorf("opcode %s, want RC_FLUSH", got)
	}
	if f.Has&HasFETH == 0 || f.FETH.Selectivity != FlushRegion || f.FETH.Placement != FlushPersistence {
		t.Errorf("FETH %+v (has %v), want selectivity 1, placement 2", f.FETH, f.Has&HasFETH != 0)
	}
	if f.Has&HasRETH == 0 || f.RETH.VA != 0x7f0012340000 || f.RETH.RKey != 0x4321 || f.RETH.DMALen != 0x1000 {
		t.Errorf("RETH %+v, want the one after the FETH", f.RETH)
	}
	if len(f.Payload) != 0 || f.BTH.OpCode.IsData() {
		t.Errorf("payload %d bytes, data %v: a FLUSH carries none", len(f.Payload), f.BTH.OpCode.IsData())
	}
	if js := string(f.AppendJSON(nil, "")); !strings.Contains(js, `"pad":0,"feth":{"selectivity":1,"placement":2},"reth":{"va":139638282125312,"rkey":17185,"dma_len":4096}`) {
		t.Errorf("JSON %s, want the feth object between the BTH's keys and the RETH", js)
	}
	if line := string(f.AppendSummary(nil, "")); !strings.Contains(line, " RC_FLUSH qp 0x000011 psn 5 persistence region  len ") {
		t.Errorf("summary %q, want the FLUSH's words after the BTH's", line)
	}
	var v ColumnValues
	found := 0
	for _, g := range ColumnGroups() {
		if g.Columns[0].Name != "feth_selectivity" {
			continue
		}
		found++
		if !g.Present(f) {
			t.Fatal("the FETH's columns are absent from a FLUSH")
		}
		g.Values(f, &v)
		if g.Columns[1].Name != "feth_placement" || v.Num[0] != 1 || v.Num[1] != 2 {
			t.Errorf("columns %v = %v, want 1, 2", g.Columns, v.Num[:2])
		}
	}
	if found != 1 {
		t.Errorf("%d column groups for the FETH, want 1", found)
	}
}

// TestFLUSHSerializers checks the serializers write the bytes of the
// spec's layout (the reserved bits zero) and gopacket's path finds BTH,
// FETH and RETH.
func TestFLUSHSerializers(t *testing.T) {
	want, _ := hex.DecodeString(iba15Flush)
	clear(want[BTHLen : BTHLen+3]) // the reserved bits are not kept
	want[BTHLen+3] &= 0x3F
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{},
		&BTH{OpCode: 0x1C, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 5},
		&FETH{Selectivity: FlushRegion, Placement: FlushPersistence},
		&RETH{VA: 0x7f0012340000, RKey: 0x4321, DMALen: 0x1000}); err != nil { // the BTH leaves room for the ICRC
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("serialized\n%x\nwant\n%x", buf.Bytes(), want)
	}
	p := gopacket.NewPacket(iba15Frame(t, iba15Flush), layers.LinkTypeEthernet, gopacket.Default)
	feth, _ := p.Layer(LayerTypeFETH).(*FETH)
	if feth == nil || p.Layer(LayerTypeRETH) == nil || feth.Selectivity != FlushRegion || feth.Placement != FlushPersistence {
		t.Errorf("gopacket's layers %v, FETH %+v", p.Layers(), feth)
	}
}

// TestAtomicWrite decodes an RC ATOMIC WRITE: a RETH and 8 bytes of data,
// a one-packet message.
func TestAtomicWrite(t *testing.T) {
	f := decodeChecked(t, iba15Frame(t, iba15AtomicWrite))
	op := f.BTH.OpCode
	if op.String() != "RC_ATOMIC_WRITE" || !op.IsData() || !op.IsFirst() || !op.IsLast() {
		t.Errorf("opcode %s data %v first %v last %v, want RC_ATOMIC_WRITE, a data packet alone in its message", op, op.IsData(), op.IsFirst(), op.IsLast())
	}
	if f.Has&HasRETH == 0 || f.RETH.DMALen != 8 || hex.EncodeToString(f.Payload) != "0123456789abcdef" {
		t.Errorf("RETH %+v payload %x, want DMA length 8 and the 8 bytes", f.RETH, f.Payload)
	}
	if f.Has&HasFETH != 0 {
		t.Error("an ATOMIC WRITE has no FETH")
	}
}

// TestFLUSHShort: a FLUSH whose packet ends inside its FETH is an error at
// the FETH's byte; cut there by the snap length, it keeps the BTH.
func TestFLUSHShort(t *testing.T) {
	tp := iba15Flush[:(BTHLen+2)*2] + "00000000" // BTH, half a FETH, the ICRC
	frame := iba15Frame(t, tp)
	d := Decoder{LinkType: LinkTypeEthernet}
	var f Frame
	f.CapLen, f.WireLen = len(frame), len(frame)
	err := d.Decode(frame, &f)
	if err == nil || !strings.Contains(err.Error(), "FETH needs 4 bytes, 2 left (opcode RC_FLUSH)") {
		t.Errorf("error %v, want the FETH named", err)
	}
	whole := iba15Frame(t, iba15Flush)
	cut := whole[:14+20+8+BTHLen+2]
	f = Frame{CapLen: len(cut), WireLen: len(whole)}
	if err := d.Decode(cut, &f); err != nil || f.Has&HasBTH == 0 || f.Has&HasFETH != 0 {
		t.Errorf("cut inside the FETH: error %v, BTH %v, FETH %v; want the BTH alone", err, f.Has&HasBTH != 0, f.Has&HasFETH != 0)
	}
}

// FuzzFETH seeds the FETH with its own bytes besides the generated
// packets' (which hold no FLUSH: tshark 4.0, which the bundled captures
// are held to, does not know it).
func FuzzFETH(f *testing.F) {
	f.Add([]byte{0xff, 0xff, 0xff, 0xd2, 0x00, 0x00})
	fuzzLayer(f, func() gopacket.DecodingLayer { return &FETH{} })
}

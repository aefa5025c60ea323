package decode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Fuzz targets: every layer's DecodeFromBytes and the Decoder for each link
// type (the Reader's are capfile's). Seeds come from testdata/pcaps;
// crashers found are kept under testdata/fuzz as regression inputs.
//
//	go test -run=^$ -fuzz=FuzzBTH -fuzztime=20s ./decode/

// seedRecords returns the records of the generated captures of one link
// type, and, for native IB, the packets inside ERF records too.
func seedRecords(f *testing.F, linkType int) [][]byte {
	f.Helper()
	var out [][]byte
	for _, name := range generatedFiles(f) {
		if strings.HasSuffix(name, ".pcapng") {
			continue // its frames are in the pcap files' forms
		}
		lt, recs := fileRecords(f, filepath.Join(pcapsDir, name))
		if lt != linkType {
			continue
		}
		for _, rec := range recs {
			out = append(out, rec.Data)
		}
	}
	return out
}

// layerSeeds returns header-sized pieces of the generated packets: every
// suffix starting at a 4-byte boundary of each native IB packet, so that each
// layer sees its own bytes among the seeds.
func layerSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, rec := range seedRecords(f, LinkTypeInfiniBand) {
		for i := 0; i < len(rec) && i <= 64; i += 4 {
			out = append(out, rec[i:])
		}
	}
	return out
}

// fuzzLayer checks that DecodeFromBytes never panics, keeps its contents and
// payload inside the input, and that what decodes serializes and decodes
// again to the same fields.
func fuzzLayer(f *testing.F, newLayer func() gopacket.DecodingLayer) {
	for _, s := range layerSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := newLayer()
		if err := l.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		if gl, ok := l.(gopacket.Layer); ok {
			if len(gl.LayerContents())+len(gl.LayerPayload()) > len(data) {
				t.Fatalf("contents %d + payload %d bytes exceed the %d-byte input", len(gl.LayerContents()), len(gl.LayerPayload()), len(data))
			}
		}
		_ = l.NextLayerType()
		sl, ok := l.(gopacket.SerializableLayer)
		if !ok {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if pl, ok := l.(gopacket.Layer); ok {
			copy(must(buf.AppendBytes(len(pl.LayerPayload()))), pl.LayerPayload())
		}
		if bth, ok := l.(*BTH); ok { // the pad bytes are not in the payload: put them back
			clear(must(buf.AppendBytes(int(bth.PadCnt))))
		}
		if err := sl.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatalf("serialize: %v", err)
		}
		again := newLayer()
		if err := again.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("decoding what was serialized: %v", err)
		}
		skip := []string{"HasVCRC", "HasICRC", "VCRC", "ICRC", "PktLen", "PayLen", "RLen", "WLen", "HasExt"} // lengths, CRCs and ERF extension headers are set by FixLengths, sealing, or not written
		if a, b := fieldsOf(l, skip...), fieldsOf(again, skip...); !reflect.DeepEqual(a, b) {
			t.Fatalf("fields changed by serialize and decode:\n%+v\n%+v", a, b)
		}
	})
}

func FuzzLRH(f *testing.F)       { fuzzLayer(f, func() gopacket.DecodingLayer { return &LRH{} }) }
func FuzzGRH(f *testing.F)       { fuzzLayer(f, func() gopacket.DecodingLayer { return &GRH{} }) }
func FuzzBTH(f *testing.F)       { fuzzLayer(f, func() gopacket.DecodingLayer { return &BTH{} }) }
func FuzzRDETH(f *testing.F)     { fuzzLayer(f, func() gopacket.DecodingLayer { return &RDETH{} }) }
func FuzzDETH(f *testing.F)      { fuzzLayer(f, func() gopacket.DecodingLayer { return &DETH{} }) }
func FuzzXRCETH(f *testing.F)    { fuzzLayer(f, func() gopacket.DecodingLayer { return &XRCETH{} }) }
func FuzzRETH(f *testing.F)      { fuzzLayer(f, func() gopacket.DecodingLayer { return &RETH{} }) }
func FuzzAtomicETH(f *testing.F) { fuzzLayer(f, func() gopacket.DecodingLayer { return &AtomicETH{} }) }
func FuzzAETH(f *testing.F)      { fuzzLayer(f, func() gopacket.DecodingLayer { return &AETH{} }) }
func FuzzAtomicAckETH(f *testing.F) {
	fuzzLayer(f, func() gopacket.DecodingLayer { return &AtomicAckETH{} })
}
func FuzzImmDt(f *testing.F) { fuzzLayer(f, func() gopacket.DecodingLayer { return &ImmDt{} }) }
func FuzzIETH(f *testing.F)  { fuzzLayer(f, func() gopacket.DecodingLayer { return &IETH{} }) }
func FuzzCNPReserved(f *testing.F) {
	fuzzLayer(f, func() gopacket.DecodingLayer { return &CNPReserved{} })
}
func FuzzLinkFCP(f *testing.F) { fuzzLayer(f, func() gopacket.DecodingLayer { return &LinkFCP{} }) }
func FuzzPFC(f *testing.F) {
	addCongestionSeeds(f)
	fuzzLayer(f, func() gopacket.DecodingLayer { return &PFC{} })
}
func FuzzPause(f *testing.F) {
	addCongestionSeeds(f)
	fuzzLayer(f, func() gopacket.DecodingLayer { return &Pause{} })
}

func FuzzIFA(f *testing.F) {
	addCongestionSeeds(f)
	fuzzLayer(f, func() gopacket.DecodingLayer { return &IFA{} })
}
func FuzzIFAMetadata(f *testing.F) {
	addCongestionSeeds(f)
	fuzzLayer(f, func() gopacket.DecodingLayer { return &IFAMetadata{} })
}
func FuzzIFA1(f *testing.F) {
	addCongestionSeeds(f)
	fuzzLayer(f, func() gopacket.DecodingLayer { return &IFA1{} })
}

// fuzzIFA1Marker is the IFA 1.0 probe marker of the seeds and the fuzzed Decoders.
const fuzzIFA1Marker = 0xAAAAAAAABBBBBBBB

// congestionSeeds are Ethernet frames of the congestion signals RoCE
// answers: PFC (good, naming no priority, times on disabled priorities) and PAUSE.
func congestionSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, l := range []gopacket.SerializableLayer{
		&PFC{ClassEnable: 0x08, Quanta: [8]uint16{3: 0xFFFF}}, &PFC{}, &PFC{ClassEnable: 1, Quanta: [8]uint16{5: 7}},
		&Pause{Quanta: 0xFFFF},
	} {
		out = append(out, macControlFrame(f, l))
	}
	roce := rocePacket(f, 0x0A, 32)
	hdr := IFA{Version: 2, GNS: IFANoGNS, NextHdr: 17, MaxLength: 16}
	for _, md := range []IFAMetadata{{HopLimit: 4, CurrentLength: 16, Stack: ifaHops(2)}, {CurrentLength: 0}} {
		out = append(out, ifaProbe(f, roce, hdr, md))
		ts := hdr
		ts.Flags = IFAFlagTS
		out = append(out, ifaProbe(f, roce, ts, md))
	}
	out = append(out, ifaProbe(f, roce, IFA{Version: 2, NextHdr: 17, MaxLength: 4}, IFAMetadata{CurrentLength: 8, Stack: ifaHops(1)}))
	ifa1 := IFA1{ProbeMarker: fuzzIFA1Marker, Version: 1, HopLimit: 2, HopCount: 3, MaxLength: 8, CurrentLength: 4}
	buf := gopacket.NewSerializeBuffer()
	if err := ifa1.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		f.Fatal(err)
	}
	p := splice(roce, 14+20+8, buf.Bytes())
	binary.BigEndian.PutUint16(p[14+2:], uint16(len(p)-14))       // IPv4 total length
	binary.BigEndian.PutUint16(p[14+20+4:], uint16(len(p)-14-20)) // UDP length
	return append(out, p)
}

// addCongestionSeeds adds the congestion frames after their Ethernet
// header, as a layer sees them.
func addCongestionSeeds(f *testing.F) {
	for _, s := range congestionSeeds(f) {
		f.Add(s[14:])
	}
}
func FuzzERF(f *testing.F) {
	for _, s := range seedRecords(f, LinkTypeERF) {
		f.Add(s)
	}
	fuzzLayer(f, func() gopacket.DecodingLayer { return &ERF{} })
}

// fuzzDecoder checks that the Decoder and the gopacket path never panic on
// frames of a link type, cut or whole, that the payload lies in the frame,
// and that the JSON, the table's columns and the summary line of what
// decodes are whole.
func fuzzDecoder(f *testing.F, linkType int) {
	for _, s := range seedRecords(f, linkType) {
		f.Add(s, uint16(0))
	}
	if linkType == LinkTypeEthernet {
		for _, s := range congestionSeeds(f) {
			f.Add(s, uint16(0))
		}
		// IBA 1.5's FLUSH and ATOMIC WRITE, which the generated captures lack.
		f.Add(iba15Frame(f, iba15Flush), uint16(0))
		f.Add(iba15Frame(f, iba15AtomicWrite), uint16(0))
	}
	if linkType == LinkTypeInfiniBand {
		f.Add(ibPacket(f, 0x1C, 0), uint16(0))
		f.Add(ibPacket(f, 0x1D, 8), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, cutBytes uint16) {
		for _, check := range []bool{false, true} {
			d := Decoder{LinkType: linkType, CheckCRC: check, IFA1ProbeMarker: fuzzIFA1Marker}
			var fr Frame
			fr.CapLen, fr.WireLen = len(data), len(data)+int(cutBytes)
			err := d.Decode(data, &fr)
			var fe *FrameError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FrameError", err)
			}
			if fe != nil && (fe.Offset < 0 || fe.Offset > len(data)) {
				t.Fatalf("error offset %d outside the %d-byte frame: %v", fe.Offset, len(data), err)
			}
			if len(fr.Payload) > len(data) {
				t.Fatalf("payload of %d bytes from a %d-byte frame", len(fr.Payload), len(data))
			}
			_ = fr.Transport.String()
			_ = fr.BTH.OpCode.String()
			_ = fr.FlowKey()
			if js := fr.AppendJSON(nil, ""); !json.Valid(js) { // a MAD's layouts read as far as the bytes go
				t.Fatalf("invalid JSON: %s", js)
			}
			if fr.Has&HasMAD != 0 {
				_ = fr.MAD.AppendSummary(nil)
			}
			checkColumns(t, &fr)
			// ibanalyze decode's line, with -e and -v's words: one line, whatever the headers hold.
			if line := fr.AppendSummaryWith(nil, "", SummaryOptions{Link: true, Verbose: true}); bytes.IndexByte(line, '\n') != len(line)-1 {
				t.Fatalf("summary is not one line: %q", line)
			}
		}
		if linkType == LinkTypeEthernet {
			checkRoCEv2FastPath(t, data, cutBytes)
		}
		p := gopacket.NewPacket(data, layers.LinkType(linkType), gopacket.DecodeOptions{SkipDecodeRecovery: true})
		for _, l := range p.Layers() {
			_ = l.LayerType().String()
		}
	})
}

// columnMax is the largest value a column of each numeric type holds.
var columnMax = map[ColumnType]uint64{ColumnUint8: 0xFF, ColumnUint16: 0xFFFF, ColumnUint32: 0xFFFFFFFF, ColumnUint64: ^uint64(0),
	ColumnBool: 1, ColumnOpcodeName: 0xFF, ColumnMAC: 1<<48 - 1}

// checkColumns takes the frame's values of every group it has, as export
// does, and checks each number is set and fits its column's type (the
// table writers would cut it).
func checkColumns(t *testing.T, fr *Frame) {
	var v ColumnValues
	for _, g := range ColumnGroups() {
		if !g.Present(fr) {
			continue
		}
		for i := range v.Num {
			v.Num[i] = ^uint64(0) // a column left unset shows as too large
		}
		g.Values(fr, &v)
		for i, c := range g.Columns {
			if m, ok := columnMax[c.Type]; ok && v.Num[i] > m {
				t.Fatalf("column %s: %d does not fit its type", c.Name, v.Num[i])
			}
		}
	}
}

func FuzzDecoderEthernet(f *testing.F)   { fuzzDecoder(f, LinkTypeEthernet) }
func FuzzDecoderERF(f *testing.F)        { fuzzDecoder(f, LinkTypeERF) }
func FuzzDecoderInfiniBand(f *testing.F) { fuzzDecoder(f, LinkTypeInfiniBand) }
func FuzzDecoderLinuxSLL(f *testing.F)   { fuzzDecoder(f, LinkTypeLinuxSLL) }
func FuzzDecoderLinuxSLL2(f *testing.F)  { fuzzDecoder(f, LinkTypeLinuxSLL2) }

// checkRoCEv2FastPath checks that Decode, which takes an Ethernet frame it
// finds to be the common RoCEv2 one through ethernetRoCEv2, leaves the
// frame and error the general path (ethernet) does, with CRCs checked and
// not, and with no IFA 1.0 marker (which keeps the general path).
func checkRoCEv2FastPath(t *testing.T, data []byte, cutBytes uint16) {
	t.Helper()
	for _, check := range []bool{false, true} {
		d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: check}
		var fast, general Frame
		fast.CapLen, fast.WireLen = len(data), len(data)+int(cutBytes)
		general.CapLen, general.WireLen = fast.CapLen, fast.WireLen
		errFast := d.Decode(data, &fast)
		general.Reset()
		errGeneral := d.ethernet(data, 0, &general)
		if fmt.Sprint(errFast) != fmt.Sprint(errGeneral) {
			t.Fatalf("CheckCRC %v: Decode's error %v, the general path's %v", check, errFast, errGeneral)
		}
		if !reflect.DeepEqual(fast, general) {
			t.Fatalf("CheckCRC %v: Decode's frame\n%+v\nthe general path's\n%+v", check, fast, general)
		}
		// DecodeHead, into a frame another packet left its fields in: the
		// same error and head.
		head := Frame{CapLen: fast.CapLen, WireLen: fast.WireLen}
		if err := d.Decode(headSeed(), &head); err != nil {
			t.Fatal(err)
		}
		errHead := d.DecodeHead(data, &head)
		if fmt.Sprint(errHead) != fmt.Sprint(errGeneral) {
			t.Fatalf("CheckCRC %v: DecodeHead's error %v, the general path's %v", check, errHead, errGeneral)
		}
		if got, want := frameHeadOf(&head), frameHeadOf(&general); got != want {
			t.Fatalf("CheckCRC %v: DecodeHead's head %+v, the general path's %+v", check, got, want)
		}
		// With HeadFields, into a frame a VLAN-tagged packet with other
		// addresses and BTH fields left: the same head, and the head
		// fields Decode leaves in such a frame (a frame whose BTH is
		// refused has HasBTH and the BTH fields it had before).
		whole := Frame{CapLen: fast.CapLen, WireLen: fast.WireLen}
		if err := d.Decode(headFieldsSeed(), &whole); err != nil {
			t.Fatal(err)
		}
		_ = d.Decode(data, &whole)
		for _, parts := range []HeadFields{HeadEthernet | HeadSrc | HeadDst | HeadIP | HeadBTH, HeadEthernet | HeadSrc | HeadDst | HeadIP | HeadOpcode | HeadQP | HeadPSN, HeadPSN, HeadDst} {
			d.HeadFields = parts
			head = Frame{CapLen: fast.CapLen, WireLen: fast.WireLen}
			if err := d.Decode(headFieldsSeed(), &head); err != nil {
				t.Fatal(err)
			}
			errHead = d.DecodeHead(data, &head)
			if fmt.Sprint(errHead) != fmt.Sprint(errGeneral) {
				t.Fatalf("CheckCRC %v, HeadFields %b: DecodeHead's error %v, the general path's %v", check, parts, errHead, errGeneral)
			}
			if got, want := frameHeadOf(&head), frameHeadOf(&general); got != want {
				t.Fatalf("CheckCRC %v, HeadFields %b: DecodeHead's head %+v, the general path's %+v", check, parts, got, want)
			}
			if got, want := headFieldsOf(&head, parts), headFieldsOf(&whole, parts); !reflect.DeepEqual(got, want) {
				t.Fatalf("CheckCRC %v, HeadFields %b: DecodeHead's head fields %+v, Decode's %+v", check, parts, got, want)
			}
		}
	}
}

// headFieldsOf is what DecodeHead promises of a frame with HeadFields
// parts beyond frameHeadOf, of the headers f.Has says it has (Reset leaves
// the others as they were).
func headFieldsOf(f *Frame, parts HeadFields) []any {
	var v []any
	if f.Has&HasEthernet != 0 && parts&HeadEthernet != 0 {
		v = append(v, f.Ethernet, f.DstMAC, f.SrcMAC, f.NumVLANs)
	}
	if f.Has&(HasIPv4|HasIPv6) != 0 {
		if parts&HeadSrc != 0 {
			v = append(v, f.Src)
		}
		if parts&HeadDst != 0 {
			v = append(v, f.Dst)
		}
		if parts&HeadIP != 0 {
			v = append(v, f.ECN, f.DSCP, f.TTL, f.UDPSrc)
		}
	}
	if f.Has&HasBTH != 0 {
		b := f.BTH
		switch {
		case parts&HeadBTH != 0:
			b.BaseLayer, b.ICRC, b.HasICRC = layers.BaseLayer{}, 0, false
			v = append(v, b)
		default:
			if parts&HeadOpcode != 0 {
				v = append(v, b.OpCode)
			}
			if parts&HeadQP != 0 {
				v = append(v, b.DestQP)
			}
			if parts&HeadPSN != 0 {
				v = append(v, b.PSN)
			}
		}
	}
	return v
}

// headFieldsSeed is a VLAN-tagged RoCEv2 frame whose every field
// headFields sets differs from a zero frame's.
func headFieldsSeed() []byte {
	b := make([]byte, 18+IPv4HeaderLen+UDPHeaderLen+BTHLen+AETHLen+ICRCLen)
	for i := range 12 {
		b[i] = byte(0xA0 + i)
	}
	b[12], b[13], b[14], b[15] = 0x81, 0x00, 0xA0, 0x07 // PCP 5, VLAN 7
	b[16], b[17], b[18], b[19] = 0x08, 0x00, 0x45, 0x6B
	binary.BigEndian.PutUint16(b[20:], uint16(len(b)-18))
	b[26], b[27] = 9, 17
	copy(b[30:38], []byte{192, 168, 1, 2, 192, 168, 3, 4})
	binary.BigEndian.PutUint16(b[38:], 50123)
	binary.BigEndian.PutUint16(b[40:], UDPPortRoCEv2)
	binary.BigEndian.PutUint16(b[42:], uint16(len(b)-38))
	copy(b[46:58], []byte{0x11, 0xC3, 0xAB, 0xCD, 0xC1, 0x12, 0x34, 0x56, 0xFF, 0x65, 0x43, 0x21})
	return b
}

// frameHeadOf is what DecodeHead promises of a frame.
func frameHeadOf(f *Frame) struct {
	transport      Transport
	has            Has
	iface          int8
	icrcOK, vcrcOK bool
} {
	return struct {
		transport      Transport
		has            Has
		iface          int8
		icrcOK, vcrcOK bool
	}{f.Transport, f.Has, f.Iface, f.ICRCOK, f.VCRCOK}
}

// headSeed is an Ethernet RoCEv2 frame (an ACK, its ICRC wrong) that
// DecodeHead's frame is first decoded from, leaving fields in it.
func headSeed() []byte {
	b := make([]byte, ethIPv4UDPLen+BTHLen+AETHLen+ICRCLen)
	b[12], b[13], b[14] = 0x08, 0x00, 0x45
	binary.BigEndian.PutUint16(b[16:], uint16(len(b)-14))
	b[22], b[23] = 64, 17
	binary.BigEndian.PutUint16(b[36:], UDPPortRoCEv2)
	binary.BigEndian.PutUint16(b[38:], uint16(len(b)-34))
	b[ethIPv4UDPLen] = 0x11 // RC ACKNOWLEDGE
	return b
}

package decode

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestLayerRoundTrip serializes each layer with distinctive field values and
// decodes it back.
func TestLayerRoundTrip(t *testing.T) {
	cases := []struct {
		in, out gopacket.DecodingLayer
	}{
		{&LRH{VL: 15, LVer: 1, SL: 9, Resv2: 2, LNH: LNHGlobal, DLID: 0xBEEF, Resv5: 0x15, SLID: 0xCAFE}, &LRH{}},
		{&GRH{IPVer: 6, TClass: 0xA5, FlowLabel: 0xFEDCB, NxtHdr: GRHNextHeaderIBA, HopLmt: 7, SGID: gid16(1), DGID: gid16(2)}, &GRH{}},
		{&RDETH{EECnxt: 0xABCDEF}, &RDETH{}},
		{&DETH{QKey: 0x80010203, SrcQP: 0x123456}, &DETH{}},
		{&XRCETH{XRCSRQ: 0x654321}, &XRCETH{}},
		{&RETH{VA: 0x0123456789ABCDEF, RKey: 0xDEADBEEF, DMALen: 0x10000}, &RETH{}},
		{&AtomicETH{VA: 0x1122334455667788, RKey: 0x99AABBCC, SwapAdd: 0xFFFFFFFFFFFFFFFE, Compare: 0x8000000000000001}, &AtomicETH{}},
		{&AETH{Syndrome: 0x64, MSN: 0xFEDCBA}, &AETH{}},
		{&AtomicAckETH{OrigRemData: 0x0102030405060708}, &AtomicAckETH{}},
		{&ImmDt{Imm: 0xA1B2C3D4}, &ImmDt{}},
		{&IETH{RKey: 0x0BADF00D}, &IETH{}},
		{&CNPReserved{Reserved: [16]byte{1, 2, 3, 15: 16}}, &CNPReserved{}},
		{&LinkFCP{Op: LinkOpInit, FCTBS: 0xABC, VL: 15, FCCL: 0x123}, &LinkFCP{}},
	}
	for _, c := range cases {
		name := c.in.CanDecode().(gopacket.LayerType).String()
		t.Run(name, func(t *testing.T) {
			buf := gopacket.NewSerializeBuffer()
			if err := c.in.(gopacket.SerializableLayer).SerializeTo(buf, gopacket.SerializeOptions{ComputeChecksums: true}); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			if lrh, ok := c.in.(*LRH); ok { // an LRH needs PktLen words after it
				lrh.PktLen = 5
				buf = gopacket.NewSerializeBuffer()
				copy(must(buf.AppendBytes(12)), make([]byte, 12))
				if err := lrh.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
					t.Fatal(err)
				}
				data = buf.Bytes()
			}
			// VCRC, HasVCRC and PktLen are set by sealing and FixLengths, not by the caller.
			checkDecodesBack(t, data, c.in, c.out, "VCRC", "HasVCRC", "PktLen")
		})
	}
}

// codecLayer is a layer that both decodes and serializes.
type codecLayer interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
}

// checkRoundTrip serializes in and checks that it decodes back into out.
func checkRoundTrip(t *testing.T, in, out codecLayer) {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := in.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	checkDecodesBack(t, buf.Bytes(), in, out)
}

// checkDecodesBack decodes data, made from in, into out and checks that
// their header fields (fieldsOf, without skip) match.
func checkDecodesBack(t *testing.T, data []byte, in, out gopacket.DecodingLayer, skip ...string) {
	t.Helper()
	if err := out.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		t.Fatalf("%+v: %v", in, err)
	}
	if a, b := fieldsOf(in, skip...), fieldsOf(out, skip...); !reflect.DeepEqual(a, b) {
		t.Errorf("round trip changed the fields:\n in %+v\nout %+v", a, b)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func gid16(n byte) [16]byte { return [16]byte{0xfe, 0x80, 15: n} }

// fieldsOf returns a layer's header fields: the struct without the bytes it
// was decoded from, the extBase bookkeeping, or the fields named in skip.
func fieldsOf(l any, skip ...string) any {
	v := reflect.ValueOf(l).Elem()
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	for _, name := range append([]string{"BaseLayer"}, skip...) {
		if f := c.FieldByName(name); f.IsValid() && f.CanSet() {
			f.Set(reflect.Zero(f.Type()))
		}
	}
	if f := c.FieldByName("extBase"); f.IsValid() {
		// unexported: zero it through a fresh value of the same type
		c2 := reflect.New(v.Type()).Elem()
		for i := 0; i < c.NumField(); i++ {
			if c.Type().Field(i).Name != "extBase" {
				c2.Field(i).Set(c.Field(i))
			}
		}
		c = c2
	}
	return c.Interface()
}

// TestGopacketPathMatchesFastPath decodes every frame of every generated
// capture twice, through gopacket.NewPacket with the registered layers and
// through the Decoder, and requires the same headers from both.
func TestGopacketPathMatchesFastPath(t *testing.T) {
	for _, name := range generatedFiles(t) {
		if strings.HasSuffix(name, ".pcapng") {
			continue // one link type per file below; pcapng mixes them
		}
		t.Run(name, func(t *testing.T) {
			linkType, recs := fileRecords(t, filepath.Join(pcapsDir, name))
			dec := Decoder{LinkType: linkType, CheckCRC: true}
			var f Frame
			compared := 0
			for _, rec := range recs {
				data := rec.Data
				f.CapLen, f.WireLen = len(data), rec.WireLen
				if err := dec.Decode(data, &f); err != nil {
					t.Fatalf("frame %d: %v", rec.Number, err)
				}
				if f.Transport == TransportNone || f.Truncated() {
					continue
				}
				p := gopacket.NewPacket(data, layers.LinkType(linkType), gopacket.Default)
				if el := p.ErrorLayer(); el != nil {
					t.Fatalf("frame %d: gopacket: %v", rec.Number, el.Error())
				}
				compareLayers(t, rec.Number, p, &f)
				compared++
			}
			if compared == 0 {
				t.Fatal("no frame compared")
			}
		})
	}
}

// compareLayers requires that the packet holds exactly the headers the Frame
// has, with the same fields.
func compareLayers(t *testing.T, n int, p gopacket.Packet, f *Frame) {
	t.Helper()
	type pair struct {
		has Has
		lt  gopacket.LayerType
		fl  any
	}
	pairs := []pair{
		{HasLRH, LayerTypeLRH, &f.LRH}, {HasGRH, LayerTypeGRH, &f.GRH}, {HasBTH, LayerTypeBTH, &f.BTH},
		{HasRDETH, LayerTypeRDETH, &f.RDETH}, {HasDETH, LayerTypeDETH, &f.DETH}, {HasXRCETH, LayerTypeXRCETH, &f.XRCETH},
		{HasRETH, LayerTypeRETH, &f.RETH}, {HasAtomicETH, LayerTypeAtomicETH, &f.AtomicETH}, {HasAETH, LayerTypeAETH, &f.AETH},
		{HasAtomicAckETH, LayerTypeAtomicAckETH, &f.AtomicAckETH}, {HasImmDt, LayerTypeImmDt, &f.ImmDt},
		{HasIETH, LayerTypeIETH, &f.IETH}, {HasFETH, LayerTypeFETH, &f.FETH}, {HasCNP, LayerTypeCNPPad, nil}, {HasLink, LayerTypeLinkFCP, &f.Link},
	}
	for _, pr := range pairs {
		l := p.Layer(pr.lt)
		if (l != nil) != (f.Has&pr.has != 0) {
			t.Errorf("frame %d: %v in gopacket %v, in Frame %v", n, pr.lt, l != nil, f.Has&pr.has != 0)
			continue
		}
		if l == nil || pr.fl == nil {
			continue
		}
		if a, b := fieldsOf(l), fieldsOf(pr.fl); !reflect.DeepEqual(a, b) {
			t.Errorf("frame %d: %v differs:\ngopacket %+v\n   Frame %+v", n, pr.lt, a, b)
		}
	}
	if f.Has&HasBTH != 0 {
		app := p.ApplicationLayer()
		var payload []byte
		if app != nil {
			payload = app.Payload()
		}
		if string(payload) != string(f.Payload) {
			t.Errorf("frame %d: payload %d bytes in gopacket, %d in Frame", n, len(payload), len(f.Payload))
		}
	}
}

package decode

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// madFrames decodes the generated MAD captures and returns each frame that
// holds a MAD, with its link type.
func madFrames(t testing.TB) (out []struct {
	lt   int
	data []byte
}) {
	t.Helper()
	for _, name := range madCaptures {
		lt, recs := fileRecords(t, filepath.Join(pcapsDir, name))
		d := Decoder{LinkType: lt}
		var f Frame
		for _, r := range recs {
			f.CapLen, f.WireLen = len(r.Data), r.WireLen
			if err := d.Decode(r.Data, &f); err != nil {
				t.Fatalf("%s: frame %d: %v", name, r.Number, err)
			}
			if f.Has&HasMAD != 0 {
				out = append(out, struct {
					lt   int
					data []byte
				}{lt, r.Data})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no MAD in the generated captures (go run ./testdata/gen)")
	}
	return out
}

// TestMADZeroAllocs requires decoding a MAD and writing its JSON to
// allocate nothing per packet, for every class and attribute generated.
func TestMADZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 64<<10)
	for i, fr := range madFrames(t) {
		d := Decoder{LinkType: fr.lt, CheckCRC: true}
		var f Frame
		f.CapLen, f.WireLen = len(fr.data), len(fr.data)
		allocs := testing.AllocsPerRun(100, func() {
			if err := d.Decode(fr.data, &f); err != nil {
				t.Fatal(err)
			}
			buf = f.AppendJSON(buf[:0], "")
			_, _ = f.MAD.CM()
		})
		if allocs != 0 {
			t.Errorf("MAD %d (%s %s): %.1f allocations per packet, want 0", i, ClassName(f.MAD.MgmtClass), f.MAD.AttributeName(), allocs)
		}
		if !json.Valid(buf) {
			t.Errorf("MAD %d: invalid JSON: %s", i, buf)
		}
	}
}

// TestMADGopacketPath checks that gopacket.NewPacket finds the same MAD as
// the fast path, as its last layer.
func TestMADGopacketPath(t *testing.T) {
	for i, fr := range madFrames(t) {
		d := Decoder{LinkType: fr.lt}
		var f Frame
		f.CapLen, f.WireLen = len(fr.data), len(fr.data)
		if err := d.Decode(fr.data, &f); err != nil {
			t.Fatal(err)
		}
		p := gopacket.NewPacket(fr.data, layers.LinkType(fr.lt), gopacket.Default)
		m, ok := p.Layer(LayerTypeMAD).(*MAD)
		if !ok {
			t.Fatalf("MAD %d: gopacket found no MAD: %v", i, p)
		}
		if m.TransactionID != f.MAD.TransactionID || m.AttributeID != f.MAD.AttributeID || string(m.Data) != string(f.MAD.Data) {
			t.Errorf("MAD %d: gopacket %+v, fast path %+v", i, m, &f.MAD)
		}
	}
}

// TestMADRoundTrip serializes a MAD header over a body and decodes it back.
func TestMADRoundTrip(t *testing.T) {
	m := MAD{BaseVersion: 1, MgmtClass: MgmtClassCM, ClassVersion: 2, Method: 0x03, Status: 0x1234,
		ClassSpecific: 0x5678, TransactionID: 0x0102030405060708, AttributeID: CMRequest, AttributeModifier: 0x9ABCDEF0}
	buf := gopacket.NewSerializeBuffer()
	copy(must(buf.AppendBytes(MADLen-MADHeaderLen)), make([]byte, MADLen-MADHeaderLen))
	if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	var got MAD
	if err := got.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	got.BaseLayer, got.Data = layers.BaseLayer{}, nil
	if !reflect.DeepEqual(got, m) {
		t.Errorf("round trip: got %+v, want %+v", got, m)
	}
}

// TestMADShort: a UD datagram on QP1 too short for the common header is
// an error naming the byte where the MAD starts; cut by the snap length it
// is not.
func TestMADShort(t *testing.T) {
	for _, fr := range madFrames(t)[:1] {
		d := Decoder{LinkType: fr.lt}
		var f Frame
		f.CapLen, f.WireLen = len(fr.data), len(fr.data)
		if err := d.Decode(fr.data, &f); err != nil {
			t.Fatal(err)
		}
		start := len(fr.data) - len(f.Payload)
		cut := fr.data[:start+10]
		f.CapLen, f.WireLen = len(cut), len(fr.data)
		if err := d.Decode(cut, &f); err != nil || f.Has&HasMAD != 0 {
			t.Errorf("cut inside the MAD header: err %v, MAD %v; want neither", err, f.Has&HasMAD != 0)
		}
	}
}

// TestMADTooShort: a UD SEND on QP1 whose payload cannot hold the MAD
// header, not cut by the snap length, is an error at the payload's byte,
// the headers before it kept.
func TestMADTooShort(t *testing.T) {
	eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 50000, DstPort: UDPPortRoCEv2}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, udp,
		&BTH{OpCode: 0x64, DestQP: 1, PKey: 0xFFFF}, &DETH{QKey: 0x80010000, SrcQP: 1}, gopacket.Payload(make([]byte, 12)))
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), buf.Bytes()...)
	if err := SealRoCE(b); err != nil {
		t.Fatal(err)
	}
	d := Decoder{LinkType: LinkTypeEthernet}
	var f Frame
	f.CapLen, f.WireLen = len(b), len(b)
	err = d.Decode(b, &f)
	var fe *FrameError
	want := 14 + 20 + 8 + BTHLen + 8
	if !errors.As(err, &fe) || fe.Offset != want || f.Has&HasDETH == 0 || f.Has&HasMAD != 0 {
		t.Fatalf("error %v (want one at byte %d), DETH kept %v, MAD %v", err, want, f.Has&HasDETH != 0, f.Has&HasMAD != 0)
	}
}

// FuzzMAD decodes arbitrary bytes as a MAD: its JSON must be valid and
// never panic, CM() must stay inside the bytes, and what decodes
// serializes back to the same header.
func FuzzMAD(f *testing.F) {
	for _, fr := range madFrames(f) {
		d := Decoder{LinkType: fr.lt}
		var fm Frame
		fm.CapLen, fm.WireLen = len(fr.data), len(fr.data)
		_ = d.Decode(fr.data, &fm)
		f.Add(append([]byte(nil), fm.MAD.Data...))
		f.Add(append([]byte(nil), fm.MAD.Data[:len(fm.MAD.Data)/2]...))
	}
	// A REJ cut right after its communication IDs: CM() once read past it.
	rej := make([]byte, MADHeaderLen+8)
	rej[1], rej[17] = MgmtClassCM, byte(CMReject)
	f.Add(rej)
	f.Fuzz(func(t *testing.T, data []byte) {
		var m MAD
		if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			if len(data) >= MADHeaderLen {
				t.Fatalf("%d bytes refused: %v", len(data), err)
			}
			return
		}
		js := m.appendJSON([]byte("{\"x\":0"))
		js = append(js, '}')
		if !json.Valid(js) {
			t.Fatalf("invalid JSON: %s", js)
		}
		_, _ = m.CM()
		_ = m.AttributeName()
		buf := gopacket.NewSerializeBuffer()
		copy(must(buf.AppendBytes(len(m.Payload))), m.Payload)
		if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		var again MAD
		if err := again.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		again.BaseLayer, again.Data, m.BaseLayer, m.Data = layers.BaseLayer{}, nil, layers.BaseLayer{}, nil
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip: %+v != %+v", again, m)
		}
	})
}

// TestMADTextField checks a MAD's text (NodeDescription): cut at its first
// NUL, UTF-8 kept as it is, control characters escaped and bytes that are
// not UTF-8 replaced, as every other JSON string ibscope writes.
func TestMADTextField(t *testing.T) {
	f := fstr("node_string", 0, 16, "")
	b := []byte("n\xc5\x93ud \"1\"\x01\xff\x00junk")
	got := string(appendFieldValue(nil, &f, b))
	if want := `"nœud \"1\"\u0001\ufffd"`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("invalid JSON: %s", got)
	}
}

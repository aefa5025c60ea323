package decode

import (
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pauseMAC is the destination of MAC control frames (802.3 Annex 31B).
var pauseMAC = []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// macControlFrame builds an Ethernet frame carrying l (a *PFC or *Pause),
// zero-padded to the 60-byte minimum frame, as a switch sends it.
func macControlFrame(t testing.TB, l gopacket.SerializableLayer) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 9}, DstMAC: pauseMAC, EthernetType: EtherTypeMACControl}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, l); err != nil {
		t.Fatal(err)
	}
	p := append([]byte(nil), buf.Bytes()...)
	if len(p) < 60 {
		p = append(p, make([]byte, 60-len(p))...)
	}
	return p
}

func TestMACControlRoundTrip(t *testing.T) {
	for _, c := range []struct {
		in, out codecLayer
	}{
		{&PFC{Opcode: MACControlOpPFC, ClassEnable: 0x18, Quanta: [8]uint16{3: 0xFFFF, 4: 0x1234}}, &PFC{}},
		{&PFC{Opcode: MACControlOpPFC, ClassEnable: 0xFF, Quanta: [8]uint16{1, 2, 3, 4, 5, 6, 7, 0xFFFF}}, &PFC{}},
		{&Pause{Opcode: MACControlOpPause, Quanta: 0xFFFF}, &Pause{}},
		{&Pause{Opcode: MACControlOpPause}, &Pause{}},
	} {
		checkRoundTrip(t, c.in, c.out)
	}
}

// TestMACControlPaths decodes PFC and PAUSE frames through the fast path and
// through gopacket, and checks both against what was built.
func TestMACControlPaths(t *testing.T) {
	pfc := PFC{ClassEnable: 0x88, Quanta: [8]uint16{3: 0xFFFF, 7: 100}}
	pause := Pause{Quanta: 0x0200}
	for _, c := range []struct {
		frame []byte
		has   Has
	}{
		{macControlFrame(t, &pfc), HasPFC},
		{macControlFrame(t, &pause), HasPause},
	} {
		d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
		var f Frame
		f.CapLen, f.WireLen = len(c.frame), len(c.frame)
		if err := d.Decode(c.frame, &f); err != nil {
			t.Fatal(err)
		}
		if f.Has != c.has|HasEthernet || f.Transport != TransportNone || !f.Decoded() {
			t.Errorf("Has %b, transport %q, decoded %v; want %b, none, true", f.Has, f.Transport, f.Decoded(), c.has)
		}
		p := gopacket.NewPacket(c.frame, layers.LayerTypeEthernet, gopacket.Default)
		if p.ErrorLayer() != nil {
			t.Fatal(p.ErrorLayer().Error())
		}
		switch c.has {
		case HasPFC:
			if f.PFC.Opcode != MACControlOpPFC || f.PFC.ClassEnable != pfc.ClassEnable || f.PFC.Quanta != pfc.Quanta {
				t.Errorf("fast path: %+v, want %+v", f.PFC, pfc)
			}
			if g, ok := p.Layer(LayerTypePFC).(*PFC); !ok || g.ClassEnable != pfc.ClassEnable || g.Quanta != pfc.Quanta {
				t.Errorf("gopacket: %v", p)
			}
			if !f.PFC.Enabled(3) || f.PFC.Enabled(4) || f.PFC.Enabled(8) {
				t.Errorf("Enabled: vector 0x%x", f.PFC.ClassEnable)
			}
			want := `"pfc":{"opcode":257,"class_enable":136,"quanta":[0,0,0,65535,0,0,0,100]}`
			if js := string(f.AppendJSON(nil, "")); !strings.Contains(js, want) || strings.Contains(js, "transport") {
				t.Errorf("JSON %s, want %s and no transport", js, want)
			}
		case HasPause:
			if f.Pause.Opcode != MACControlOpPause || f.Pause.Quanta != pause.Quanta {
				t.Errorf("fast path: %+v, want %+v", f.Pause, pause)
			}
			if g, ok := p.Layer(LayerTypePause).(*Pause); !ok || g.Quanta != pause.Quanta {
				t.Errorf("gopacket: %v", p)
			}
			if js := string(f.AppendJSON(nil, "")); !strings.Contains(js, `"pause":{"quanta":512}`) {
				t.Errorf("JSON %s", js)
			}
		}
	}
}

func TestPauseNs(t *testing.T) {
	for _, c := range []struct {
		quanta uint16
		rate   int64
		ns     int64
	}{
		{1, 100e9, 5},           // 512 bits at 100 Gb/s: 5.12 ns
		{0xFFFF, 100e9, 335539}, // the longest pause at 100 Gb/s
		{0xFFFF, 400e9, 83884},
		{1, 10e9, 51},
		{100, 0, 0},
	} {
		if got := PauseNs(c.quanta, c.rate); got != c.ns {
			t.Errorf("PauseNs(%d, %d) = %d, want %d", c.quanta, c.rate, got, c.ns)
		}
	}
}

// TestMACControlBadInput: each problem is named with its byte in the frame,
// and the frame keeps every field decoded.
func TestMACControlBadInput(t *testing.T) {
	const at = 14 // the MAC control opcode follows the Ethernet header
	noPriority := macControlFrame(t, &PFC{})
	disabled := macControlFrame(t, &PFC{ClassEnable: 0x01, Quanta: [8]uint16{0: 10, 5: 7}})
	reserved := macControlFrame(t, &PFC{ClassEnable: 0x0101, Quanta: [8]uint16{0: 10}})
	short := macControlFrame(t, &PFC{ClassEnable: 1})[:at+10]
	for _, c := range []struct {
		name   string
		frame  []byte
		offset int
		msg    string
		has    Has
	}{
		{"vector names no priority", noPriority, at + 2, "class-enable vector 0x0000 names no priority", HasPFC},
		{"quanta on a disabled class", disabled, at + 4 + 2*5, "time[5] is 7 quanta but priority 5 is not enabled", HasPFC},
		{"reserved vector bits", reserved, at + 2, "sets reserved bits", HasPFC},
		{"PFC cut short", short, at, "10 bytes after the ethertype, need 20", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Decoder{LinkType: LinkTypeEthernet}
			var f Frame
			f.CapLen, f.WireLen = len(c.frame), len(c.frame)
			err := d.Decode(c.frame, &f)
			var fe *FrameError
			if !errors.As(err, &fe) || fe.Offset != c.offset || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("%v; want byte %d: %q", err, c.offset, c.msg)
			}
			if f.Has != c.has|HasEthernet {
				t.Errorf("Has %b, want %b: the fields are decoded all the same", f.Has, c.has)
			}
			if c.has != 0 && f.PFC.Quanta != (PFC{}).Quanta && f.PFC.Quanta[0] != 10 {
				t.Errorf("fields of the bad frame: %+v", f.PFC)
			}
		})
	}
}

// TestPauseRequest: a PFC frame names its enabled priorities and their
// quanta; a PAUSE names all eight with its one time; other frames none.
func TestPauseRequest(t *testing.T) {
	pfc := Frame{Has: HasPFC, PFC: PFC{ClassEnable: 0x0108, Quanta: [8]uint16{3: 0xFFFF, 7: 9}}}
	if e, q, ok := pfc.PauseRequest(); !ok || e != 0x08 || q != pfc.PFC.Quanta {
		t.Errorf("PFC: %#x %v %v, want 0x8 %v true", e, q, ok, pfc.PFC.Quanta)
	}
	pause := Frame{Has: HasPause, Pause: Pause{Quanta: 77}}
	if e, q, ok := pause.PauseRequest(); !ok || e != 0xFF || q != [8]uint16{77, 77, 77, 77, 77, 77, 77, 77} {
		t.Errorf("PAUSE: %#x %v %v, want 0xff, 77 each, true", e, q, ok)
	}
	if e, q, ok := (&Frame{Has: HasBTH}).PauseRequest(); ok || e != 0 || q != [8]uint16{} {
		t.Errorf("RoCE frame: %#x %v %v, want nothing", e, q, ok)
	}
}

package capfile

import (
	"bytes"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/decode"
)

// memCapture writes frames (cycled to n records) into an in-memory capture.
func memCapture(t testing.TB, linkType, n int, frames ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, linkType)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := w.WritePacket(&Packet{TsNs: int64(i) * 137, Data: frames[i%len(frames)], Iface: uint8(i % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZeroAllocs requires the fast path to allocate nothing per frame:
// decoding RoCEv2 (IPv4 and IPv6) and native IB frames with CRC checks, and
// reading records from a pcap file.
func TestZeroAllocs(t *testing.T) {
	const runs = 1000
	frames := []struct {
		name     string
		linkType int
		data     []byte
	}{
		{"RoCEv2", decode.LinkTypeEthernet, rocePacket(t, 0x07, 1024)},
		{"RoCEv2 ACK", decode.LinkTypeEthernet, rocePacket(t, 0x11, 0)},
		{"native IB", decode.LinkTypeInfiniBand, ibPacket(t, 0x06, 1024)},
		{"native IB UD", decode.LinkTypeInfiniBand, ibPacket(t, 0x64, 256)},
	}
	for _, fr := range frames {
		d := decode.Decoder{LinkType: fr.linkType, CheckCRC: true}
		var f decode.Frame
		f.CapLen, f.WireLen = len(fr.data), len(fr.data)
		allocs := testing.AllocsPerRun(runs, func() {
			if err := d.Decode(fr.data, &f); err != nil || f.Has&decode.CRCsCheck == 0 || !f.ICRCOK {
				t.Fatalf("%s: %v (CRCs ok %v)", fr.name, err, f.ICRCOK)
			}
		})
		if allocs != 0 {
			t.Errorf("decoding a %s frame: %.1f allocations per frame, want 0", fr.name, allocs)
		}
	}
	for _, c := range []struct {
		name     string
		linkType int
		frames   [][]byte
	}{
		{"pcap RoCEv2", decode.LinkTypeEthernet, [][]byte{rocePacket(t, 0x06, 256), rocePacket(t, 0x07, 256), rocePacket(t, 0x11, 0)}},
		{"pcap ERF", decode.LinkTypeERF, [][]byte{ibPacket(t, 0x06, 256), ibPacket(t, 0x11, 0)}},
	} {
		file := memCapture(t, c.linkType, runs+10, c.frames...)
		r, err := NewReader(bytes.NewReader(file), c.name)
		if err != nil {
			t.Fatal(err)
		}
		var f decode.Frame
		allocs := testing.AllocsPerRun(runs, func() {
			if err := r.Next(&f); err != nil || !f.ICRCOK {
				t.Fatalf("%s: %v", c.name, err)
			}
		})
		if allocs != 0 {
			t.Errorf("reading %s: %.1f allocations per frame, want 0", c.name, allocs)
		}
	}
}

// TestZeroAllocsPcapng requires the same of the pcapng path.
func TestZeroAllocsPcapng(t *testing.T) {
	frames := [][]byte{rocePacket(t, 0x06, 256), rocePacket(t, 0x11, 0)}
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1010; i++ {
		p := frames[i%2]
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(i)), CaptureLength: len(p), Length: len(p)}, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, "mem.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var f decode.Frame
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Next(&f); err != nil || !f.ICRCOK {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("reading pcapng: %.1f allocations per frame, want 0", allocs)
	}
}

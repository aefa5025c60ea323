package capfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// writerRecs are records of every shape the encoders meet: lengths that
// pad differently, a cut packet, a timestamp with every ns digit.
var writerRecs = []struct {
	tsNs  int64
	data  []byte
	wire  int
	iface int
}{
	{1767323045_123456789, bytes.Repeat([]byte{0xAB}, 60), 60, 0},
	{1767323045_123457001, bytes.Repeat([]byte{0xCD}, 61), 61, 1},
	{1767323046_000000999, bytes.Repeat([]byte{0xEF}, 64), 1500, 0},
	{1767323047_999999999, []byte{1, 2, 3}, 3, 1},
}

// TestPcapEncoderMatchesPcapgo: the pcap encoder writes what gopacket's
// pcapgo writes, in ns and in us.
func TestPcapEncoderMatchesPcapgo(t *testing.T) {
	for _, micro := range []bool{false, true} {
		var want bytes.Buffer
		w := pcapgo.NewWriterNanos(&want)
		if micro {
			w = pcapgo.NewWriter(&want)
		}
		if err := w.WriteFileHeader(96, layers.LinkType(decode.LinkTypeLinuxSLL)); err != nil {
			t.Fatal(err)
		}
		got := AppendPcapFileHeader(nil, decode.LinkTypeLinuxSLL, 96, micro)
		for _, r := range writerRecs {
			ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, r.tsNs), CaptureLength: len(r.data), Length: r.wire}
			if err := w.WritePacket(ci, r.data); err != nil {
				t.Fatal(err)
			}
			got = AppendPcapRecord(got, r.tsNs, r.data, r.wire, micro)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("micro %v: encoder\n%x\npcapgo\n%x", micro, got, want.Bytes())
		}
	}
}

// TestPcapngEncoderMatchesPcapgo: a section with an shb_userappl, two
// interfaces with if_name (and the if_tsresol 9 every interface gets) and
// packets on both are what pcapgo's NgWriter writes.
func TestPcapngEncoderMatchesPcapgo(t *testing.T) {
	var want bytes.Buffer
	ngIf := func(lt int, name string) pcapgo.NgInterface {
		return pcapgo.NgInterface{Name: name, LinkType: layers.LinkType(lt), SnapLength: 65535, TimestampResolution: 9}
	}
	w, err := pcapgo.NewNgWriterInterface(&want, ngIf(decode.LinkTypeEthernet, "eth0"), pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "ibscope test"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface(ngIf(decode.LinkTypeERF, "mlx5_0")); err != nil {
		t.Fatal(err)
	}
	got := AppendNgSectionHeader(nil, []NgOption{NgString(NgOptSHBUserAppl, "ibscope test")})
	got = AppendNgInterface(got, decode.LinkTypeEthernet, 65535, []NgOption{NgString(NgOptIfName, "eth0")})
	got = AppendNgInterface(got, decode.LinkTypeERF, 65535, []NgOption{NgString(NgOptIfName, "mlx5_0")})
	for _, r := range writerRecs {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, r.tsNs), CaptureLength: len(r.data), Length: r.wire, InterfaceIndex: r.iface}
		if err := w.WritePacket(ci, r.data); err != nil {
			t.Fatal(err)
		}
		got = AppendNgPacket(got, uint32(r.iface), r.tsNs, r.data, r.wire, nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("encoder\n%x\npcapgo\n%x", got, want.Bytes())
	}
}

// TestERFRecord: rlen padded to 8, wlen the wire length, the truncated flag
// exactly when the packet was cut, the interface bits, the Ethernet types'
// 2 bytes; and the record decodes back to the packet.
func TestERFRecord(t *testing.T) {
	pkt := bytes.Repeat([]byte{0x5A}, 200)
	for _, c := range []struct {
		name      string
		typ       uint8
		captured  int
		wire      int
		iface     uint8
		rlen      int
		truncated bool
	}{
		{"whole IB packet", decode.ERFTypeInfiniBand, 60, 60, 1, 80, false},
		{"whole, already 8-aligned", decode.ERFTypeInfiniBand, 64, 64, 0, 80, false},
		{"link packet", decode.ERFTypeIBLink, decode.LinkFCPLen, decode.LinkFCPLen, 3, 24, false},
		{"cut by a 128-byte snap", decode.ERFTypeInfiniBand, 128, 200, 1, 144, true},
		{"Ethernet with its 2 bytes", decode.ERFTypeEthernet, 62, 62, 0, 80, false},
		{"cut Ethernet", decode.ERFTypeEthernet, 100, 200, 2, 120, true},
		{"interface bits beyond 3 are dropped", decode.ERFTypeInfiniBand, 60, 60, 5, 80, false},
	} {
		rec, err := AppendERFRecord([]byte("prefix"), 1767323045_123456789, c.typ, pkt[:c.captured], c.wire, c.iface)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.HasPrefix(rec, []byte("prefix")) {
			t.Fatalf("%s: the record does not append", c.name)
		}
		rec = rec[len("prefix"):]
		if len(rec) != c.rlen || int(binary.BigEndian.Uint16(rec[10:])) != c.rlen {
			t.Errorf("%s: %d bytes, rlen %d; want %d", c.name, len(rec), binary.BigEndian.Uint16(rec[10:]), c.rlen)
		}
		var e decode.ERF
		if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if e.Type != c.typ || int(e.WLen) != c.wire || e.Interface() != c.iface&3 || e.TimestampNs() != 1767323045_123456789 ||
			(e.Flags&decode.ERFFlagTruncated != 0) != c.truncated || e.Flags&^(3|decode.ERFFlagTruncated) != 0 {
			t.Errorf("%s: type %d wlen %d iface %d flags %#x ts %d", c.name, e.Type, e.WLen, e.Interface(), e.Flags, e.TimestampNs())
		}
		// A cut record's padding cannot be told from the packet (ERF has no
		// captured length): the payload starts with what was captured.
		if !bytes.HasPrefix(e.Payload, pkt[:c.captured]) || !c.truncated && len(e.Payload) != c.captured {
			t.Errorf("%s: payload %d bytes, want the %d captured", c.name, len(e.Payload), c.captured)
		}
	}
	if _, err := AppendERFRecord(nil, 0, decode.ERFTypeInfiniBand, pkt[:10], 70000, 0); err == nil || !strings.Contains(err.Error(), "does not fit an ERF record") {
		t.Errorf("a 70000-byte packet: %v, want that it does not fit", err)
	}
	if got := ERFTypeFor(decode.LinkFCPLen, false); got != decode.ERFTypeIBLink {
		t.Errorf("a link packet's type %d", got)
	}
	if got := ERFTypeFor(decode.LinkFCPLen, true); got != decode.ERFTypeEthernet {
		t.Errorf("an Ethernet frame's type %d", got)
	}
}

// TestEncoderFiles: the Encoder's files read back through our reader, with
// each record's wire length, truncation and interface, in pcap and pcapng.
func TestEncoderFiles(t *testing.T) {
	for _, ng := range []bool{false, true} {
		for _, lt := range []int{decode.LinkTypeERF, decode.LinkTypeInfiniBand, decode.LinkTypeEthernet} {
			enc, err := NewEncoder(EncoderConfig{LinkType: lt, PcapNG: ng, SnapLenBytes: 64})
			if err != nil {
				t.Fatal(err)
			}
			b := enc.AppendHeader(nil)
			for _, r := range writerRecs {
				n := len(b)
				if b, err = enc.AppendPacket(b, &Packet{TsNs: r.tsNs, Data: r.data, WireLenBytes: r.wire, Iface: uint8(r.iface)}); err != nil {
					t.Fatal(err)
				}
				if len(b)-n > enc.MaxRecordBytes() {
					t.Errorf("ng %v link type %d: a %d-byte record, more than MaxRecordBytes %d", ng, lt, len(b)-n, enc.MaxRecordBytes())
				}
			}
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			var f decode.Frame
			for i, r := range writerRecs {
				data, err := rd.NextRecord(&f)
				if err != nil {
					t.Fatalf("ng %v link type %d: record %d: %v", ng, lt, i+1, err)
				}
				if f.TsNs != r.tsNs || rd.LinkType() != lt {
					t.Errorf("ng %v link type %d: record %d at %d, link type %d", ng, lt, i+1, f.TsNs, rd.LinkType())
				}
				if lt != decode.LinkTypeERF {
					if f.WireLen != r.wire || !bytes.Equal(data, r.data) {
						t.Errorf("ng %v link type %d: record %d: wire %d, %d bytes", ng, lt, i+1, f.WireLen, len(data))
					}
					continue
				}
				var e decode.ERF
				if err := e.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				cut := len(r.data) < r.wire
				if int(e.WLen) != r.wire || e.Interface() != uint8(r.iface) || (e.Flags&decode.ERFFlagTruncated != 0) != cut || !bytes.HasPrefix(e.Payload, r.data) {
					t.Errorf("ng %v: record %d: wlen %d iface %d flags %#x", ng, i+1, e.WLen, e.Interface(), e.Flags)
				}
			}
			rd.Close()
		}
	}
	if _, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeLinuxSLL, SnapLenBytes: 64}); err == nil {
		t.Error("link type 113 accepted")
	}
	if _, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeEthernet, ERFEthernet: true, SnapLenBytes: 64}); err == nil {
		t.Error("ERF Ethernet records in an Ethernet file accepted")
	}
}

// TestInteropWriterOptions: tshark reads the pcapng options the encoder
// writes (interface name and description, the packet's direction flag)
// and an ERF record's truncated flag.
func TestInteropWriterOptions(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	b := AppendNgSectionHeader(nil, []NgOption{NgString(NgOptSHBHardware, "ibscope test"), NgString(NgOptSHBUserAppl, "ibscope")})
	b = AppendNgInterface(b, decode.LinkTypeERF, 65535, []NgOption{NgString(NgOptIfName, "mlx5_0"), NgString(NgOptIfDescription, "port 1")})
	rec, err := AppendERFRecord(nil, 1767323045_123456789, decode.ERFTypeInfiniBand, bytes.Repeat([]byte{0}, 40), 300, 1)
	if err != nil {
		t.Fatal(err)
	}
	b = AppendNgPacket(b, 0, 1767323045_123456789, rec, erfWireLenBytes(len(rec), 40, 300), []NgOption{NgUint32(NgOptEPBFlags, 1)}) // inbound
	path := filepath.Join(t.TempDir(), "opts.pcapng")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "frame.interface_name", "-e", "frame.interface_description", "-e", "frame.packet_flags_direction",
		"-e", "erf.flags.trunc", "-e", "erf.flags.cap", "-e", "erf.wlen", "-e", "frame.time_epoch")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.Bytes())
	}
	got := strings.TrimSpace(string(out))
	want := "mlx5_0|port 1|0x00000001|1|1|300|1767323045.123456789" // direction 1: inbound
	if got != want {
		t.Errorf("tshark reads %q, want %q", got, want)
	}
}

// FuzzERFRecord: whatever the type, lengths and interface, a record that
// AppendERFRecord writes decodes back to what was written.
func FuzzERFRecord(f *testing.F) {
	f.Add(int64(1767323045_123456789), uint8(decode.ERFTypeInfiniBand), []byte("packet bytes"), 300, uint8(1))
	f.Add(int64(0), uint8(decode.ERFTypeEthernet|0x80), []byte{1}, 1, uint8(7))
	f.Add(int64(1), uint8(decode.ERFTypeIBLink), []byte{1, 2, 3, 4, 5, 6}, 6, uint8(0))
	f.Fuzz(func(t *testing.T, tsNs int64, typ uint8, data []byte, wire int, iface uint8) {
		rec, err := AppendERFRecord(nil, tsNs, typ, data, wire, iface)
		if err != nil {
			if len(data) <= 0xFFFF-ERFRecordMaxOverheadBytes && wire <= 0xFFFF {
				t.Fatalf("%d bytes of a %d-byte packet refused: %v", len(data), wire, err)
			}
			return
		}
		var e decode.ERF
		if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		cut := len(data) < wire
		if len(rec)%8 != 0 || int(e.RLen) != len(rec) || int(e.WLen) != max(wire, len(data)) || e.Type != typ&0x7F || e.HasExt ||
			e.Interface() != iface&3 || (e.Flags&decode.ERFFlagTruncated != 0) != cut || !bytes.HasPrefix(e.Payload, data) {
			t.Fatalf("record %x: type %d rlen %d wlen %d flags %#x, from %d of %d bytes", rec, e.Type, e.RLen, e.WLen, e.Flags, len(data), wire)
		}
		if tsNs >= 0 && tsNs < 1<<32*1e9 && e.TimestampNs() != tsNs {
			t.Fatalf("timestamp %d ns reads back %d", tsNs, e.TimestampNs())
		}
	})
}

// An Encoder's statistics block holds every count at its option code, the
// times in the interface's units (us with Micro), and nothing in pcap.
func TestEncoderStatistics(t *testing.T) {
	st := InterfaceStats{StartNs: 1_700_000_000_123_456_789, EndNs: 1_700_000_001_000_000_999,
		Received: 1000, InterfaceDrops: 7, InterfaceDropsKnown: true, OSDrops: 11, Delivered: 900}
	for _, micro := range []bool{false, true} {
		enc, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeEthernet, PcapNG: true, Micro: micro, SnapLenBytes: 64})
		if err != nil {
			t.Fatal(err)
		}
		b := enc.AppendStatistics(nil, st)
		le := binary.LittleEndian
		if len(b) < 28 || le.Uint32(b) != ngBlockInterfaceStatistics || int(le.Uint32(b[4:])) != len(b) || int(le.Uint32(b[len(b)-4:])) != len(b) {
			t.Fatalf("micro %v: not one statistics block: % x", micro, b)
		}
		div := uint64(1)
		if micro {
			div = 1000
		}
		want := map[uint16]uint64{NgOptISBStartTime: uint64(st.StartNs) / div, NgOptISBEndTime: uint64(st.EndNs) / div,
			NgOptISBIfRecv: 1000, NgOptISBIfDrop: 7, NgOptISBOSDrop: 11, NgOptISBUsrDeliv: 900}
		got := map[uint16]uint64{}
		for o := b[20 : len(b)-4]; len(o) >= 4; {
			code, n := le.Uint16(o), int(le.Uint16(o[2:]))
			if code == ngOptEnd {
				break
			}
			v := o[4 : 4+n]
			if code == NgOptISBStartTime || code == NgOptISBEndTime {
				got[code] = uint64(le.Uint32(v))<<32 | uint64(le.Uint32(v[4:]))
			} else {
				got[code] = le.Uint64(v)
			}
			o = o[4+pad4(n):]
		}
		for code, w := range want {
			if got[code] != w {
				t.Errorf("micro %v: option %d = %d, want %d", micro, code, got[code], w)
			}
		}
	}
	pcap, _ := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeEthernet, SnapLenBytes: 64})
	if b := pcap.AppendStatistics(nil, st); len(b) != 0 {
		t.Errorf("pcap got a statistics block: % x", b)
	}
}

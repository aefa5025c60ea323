package capfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// erfTwins writes the same packets, native IB (with a link packet and one
// cut by the snap length) and RoCE, as a raw ERF file and as a pcap of
// link type 197 (erf-pcap), with a padding record in the raw file.
func erfTwins(t testing.TB) (raw, pcap []byte) {
	t.Helper()
	rawEnc, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeERF, SnapLenBytes: 4096, RawERF: true})
	if err != nil {
		t.Fatal(err)
	}
	pcapEnc, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeERF, SnapLenBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	pcap = pcapEnc.AppendHeader(nil)
	ib, roce := ibPacket(t, 0x04, 40), rocePacket(t, 0x0A, 64)
	link := make([]byte, decode.LinkFCPLen)
	link[0] = 0x10 // a credit update: op 1
	pkts := []struct {
		typ      uint8
		data     []byte
		wireLen  int
		iface    uint8
		tsNs     int64
		padAfter bool
	}{
		{decode.ERFTypeInfiniBand, ib, len(ib), 0, 1_700_000_000_123_456_789, false},
		{decode.ERFTypeEthernet, roce, len(roce), 1, 1_700_000_000_223_456_789, true},
		{decode.ERFTypeIBLink, link, len(link), 1, 1_700_000_000_323_456_789, false},
		{decode.ERFTypeInfiniBand, ib[:30], len(ib), 0, 1_700_000_001_000_000_000, false},
	}
	for _, p := range pkts {
		if raw, err = rawEnc.AppendPacket(raw, &Packet{TsNs: p.tsNs, ERFType: p.typ, Data: p.data, WireLenBytes: p.wireLen, Iface: p.iface}); err != nil {
			t.Fatal(err)
		}
		if pcap, err = pcapEnc.AppendPacket(pcap, &Packet{TsNs: p.tsNs, ERFType: p.typ, Data: p.data, WireLenBytes: p.wireLen, Iface: p.iface}); err != nil {
			t.Fatal(err)
		}
		if p.padAfter { // a padding record (type 48): no packet
			pad, _ := AppendERFRecord(nil, p.tsNs, erfTypePad, make([]byte, 16), 16, 0)
			raw = append(raw, pad...)
		}
	}
	return raw, pcap
}

// A raw ERF file reads back as its erf-pcap twin does, frame for frame
// (numbers, times, lengths, interface bits, every header), padding
// records skipped; only the records' offsets differ.
func TestRawERFReadsAsERFPcap(t *testing.T) {
	raw, pcap := erfTwins(t)
	got, err := readFrames(t, raw, "x.erf")
	if err != nil {
		t.Fatal(err)
	}
	want, err := readFrames(t, pcap, "x.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || len(got) != len(want) {
		t.Fatalf("raw ERF gives %d frames, its pcap twin %d; want 4", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		g.Offset, w.Offset = 0, 0
		if !reflect.DeepEqual(g, w) {
			t.Errorf("frame %d:\n raw ERF %+v\n    pcap %+v", i+1, g, w)
		}
	}
	if got[0].Transport != decode.TransportIB || got[1].Transport != decode.TransportRoCEv2 || got[1].Iface != 1 || got[2].Has&decode.HasLink == 0 ||
		got[3].WireLen <= got[3].CapLen {
		t.Errorf("frames decode as %v/%v/%v, iface %d, link %v, lengths %d of %d", got[0].Transport, got[1].Transport, got[2].Transport,
			got[1].Iface, got[2].Has&decode.HasLink != 0, got[3].CapLen, got[3].WireLen)
	}
	r, err := NewReader(bytes.NewReader(raw), "x.erf")
	if err != nil || r.LinkType() != decode.LinkTypeERF || r.ResolutionNs() != 1 || r.SnapLen() != 0 {
		t.Errorf("raw ERF reader: link type %d, resolution %d ns, snap %d (%v)", r.LinkType(), r.ResolutionNs(), r.SnapLen(), err)
	}
}

// tshark reads the raw ERF file as ibscope does: the same number of
// frames, the same times to the ns, the same interfaces and lengths.
func TestRawERFTshark(t *testing.T) {
	testenv.MustHaveTool(t, "tshark")
	raw, _ := erfTwins(t)
	path := filepath.Join(t.TempDir(), "x.erf")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-E", "separator=,",
		"-e", "frame.time_epoch", "-e", "erf.flags.cap", "-e", "erf.wlen", "-e", "erf.types.type").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	frames, err := readFrames(t, raw, "x.erf")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark reads %d frames, ibscope %d:\n%s", len(lines), len(frames), out)
	}
	types := []string{"21", "2", "25", "21"}
	for i, f := range frames {
		want := fmt.Sprintf("%d.%09d,%d,%d,%s", f.TsNs/1e9, f.TsNs%1e9, f.Iface, f.WireLen, types[i])
		if lines[i] != want {
			t.Errorf("frame %d: tshark says %s, ibscope %s", i+1, lines[i], want)
		}
	}
}

// Files that are not ERF are not taken for it, and a damaged raw ERF file
// says where.
func TestRawERFDetection(t *testing.T) {
	raw, _ := erfTwins(t)
	for _, c := range []struct {
		name, file, err string
	}{
		{"text", "frame,time,opcode\n1,0.5,RC_SEND_ONLY\n", "not a pcap or pcapng file"},
		{"zeros", string(make([]byte, 64)), "not a pcap or pcapng file"},
		// '0' at byte 8 reads as a padding record (type 48) of 0x2c31 bytes:
		// padding alone does not make a file ERF.
		{"text like padding", "frame,ti0e,1,opcode\n" + strings.Repeat("x", 20000), "not a pcap or pcapng file"},
		{"first record only, cut", string(raw[:20]), "not a pcap or pcapng file"},
	} {
		_, err := NewReader(strings.NewReader(c.file), "x.erf")
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
	// Two whole records, then a third cut short: the two are read, then
	// the damage is reported at the third's offset.
	rec1 := int(raw[10])<<8 | int(raw[11])
	rec2 := rec1 + (int(raw[rec1+10])<<8 | int(raw[rec1+11]))
	_, err := readFrames(t, raw[:rec2+20], "x.erf")
	if err == nil || !strings.Contains(err.Error(), "last ERF record cut short") {
		t.Errorf("cut file: %v", err)
	}
}

// Damage in the second or third record of a raw ERF file (a length of 0,
// an unknown type, a length past the end) is reported at that record, and
// the records before it are read: the file is recognised by its first
// good record (it used to be refused whole at byte 0 as "not a pcap or
// pcapng file (magic 0xbe0b0000), nor raw ERF records").
func TestRawERFDamageAfterFirstRecord(t *testing.T) {
	raw, _ := erfTwins(t)
	var offs []int // where each record starts
	for off := 0; off < len(raw); off += int(raw[off+10])<<8 | int(raw[off+11]) {
		offs = append(offs, off)
	}
	for _, c := range []struct {
		name   string
		record int // 0-based index of the damaged record
		damage func(rec []byte)
		says   string
	}{
		{"2nd rlen 0", 1, func(rec []byte) { rec[10], rec[11] = 0, 0 }, "ERF record of type 2 claims 0 bytes"},
		{"2nd unknown type", 1, func(rec []byte) { rec[8] = 99 }, "ERF record of type 99 claims"},
		{"3rd rlen 0", 2, func(rec []byte) { rec[10], rec[11] = 0, 0 }, "ERF record of type 48 claims 0 bytes"},
		{"3rd unknown type", 2, func(rec []byte) { rec[8] = 0x7F }, "ERF record of type 127 claims"},
		{"2nd past the end", 1, func(rec []byte) { rec[10], rec[11] = 0xFF, 0xF0 }, "last ERF record cut short: its header says 65520 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), raw...)
			c.damage(b[offs[c.record]:])
			frames, err := readFrames(t, b, "x.erf")
			var fe *FileError
			if !errors.As(err, &fe) || fe.Offset != int64(offs[c.record]) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("error %v, want %q at byte offset %d", err, c.says, offs[c.record])
			}
			// Records before the damage, padding aside, are read.
			want := min(c.record, 2) // the third record is the padding after the second packet
			if len(frames) != want {
				t.Errorf("%d frames read before the damage, want %d", len(frames), want)
			}
		})
	}
}

func FuzzReaderERF(f *testing.F) {
	raw, _ := erfTwins(f)
	f.Add(raw)
	// The hostile rounds' damage: the second and third records with a
	// length of 0 or an unknown type, and a text file with '0' (padding,
	// type 48) at byte 8.
	second := int(raw[10])<<8 | int(raw[11])
	third := second + (int(raw[second+10])<<8 | int(raw[second+11]))
	for _, at := range []int{second, third} {
		zero := append([]byte(nil), raw...)
		zero[at+10], zero[at+11] = 0, 0
		unknown := append([]byte(nil), raw...)
		unknown[at+8] = 99
		f.Add(zero)
		f.Add(unknown)
	}
	f.Add([]byte("frame,ti0e,opcode\n1,0.5,RC_SEND_ONLY\n" + strings.Repeat("x", 30000)))
	f.Fuzz(checkReaderOn)
}

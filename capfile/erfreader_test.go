package capfile

import (
	"bytes"
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

func FuzzReaderERF(f *testing.F) {
	raw, _ := erfTwins(f)
	f.Add(raw)
	f.Fuzz(checkReaderOn)
}

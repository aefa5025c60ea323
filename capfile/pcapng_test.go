package capfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// ngFile builds pcapng files block by block, each section in its own byte order.
type ngFile struct {
	buf   bytes.Buffer
	order byteOrder
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// block appends a block of type typ with body (padded to 4 bytes).
func (w *ngFile) block(typ uint32, body []byte) {
	padded := append(append([]byte(nil), body...), make([]byte, (4-len(body)%4)%4)...)
	n := uint32(12 + len(padded))
	var b []byte
	b = w.order.AppendUint32(b, typ)
	b = w.order.AppendUint32(b, n)
	b = append(b, padded...)
	b = w.order.AppendUint32(b, n)
	w.buf.Write(b)
}

// section starts a section in byte order order.
func (w *ngFile) section(order byteOrder) {
	w.order = order
	var b []byte
	b = order.AppendUint32(b, ngByteOrderMagic)
	b = order.AppendUint16(b, 1)
	b = order.AppendUint16(b, 0)
	b = order.AppendUint64(b, math.MaxUint64) // section length unknown
	w.block(ngBlockSection, b)
}

// iface adds an interface; tsresol < 0 leaves the option out, tsOffsetS 0 too.
func (w *ngFile) iface(linkType int, tsresol int, tsOffsetS int64) {
	var b []byte
	b = w.order.AppendUint16(b, uint16(linkType))
	b = w.order.AppendUint16(b, 0)
	b = w.order.AppendUint32(b, 0) // no snap length
	if tsresol >= 0 {
		b = w.order.AppendUint16(b, ngOptTsResol)
		b = w.order.AppendUint16(b, 1)
		b = append(b, byte(tsresol), 0, 0, 0)
	}
	if tsOffsetS != 0 {
		b = w.order.AppendUint16(b, ngOptTsOffset)
		b = w.order.AppendUint16(b, 8)
		b = w.order.AppendUint64(b, uint64(tsOffsetS))
	}
	b = w.order.AppendUint32(b, 0) // opt_endofopt
	w.block(ngBlockInterface, b)
}

// epb adds an Enhanced Packet Block.
func (w *ngFile) epb(ifIndex uint32, tsUnits uint64, data []byte, wireLen int) {
	var b []byte
	b = w.order.AppendUint32(b, ifIndex)
	b = w.order.AppendUint32(b, uint32(tsUnits>>32))
	b = w.order.AppendUint32(b, uint32(tsUnits))
	b = w.order.AppendUint32(b, uint32(len(data)))
	b = w.order.AppendUint32(b, uint32(wireLen))
	w.block(ngBlockEnhancedPacket, append(b, data...))
}

// spb adds a Simple Packet Block.
func (w *ngFile) spb(data []byte) {
	w.block(ngBlockSimplePacket, append(w.order.AppendUint32(nil, uint32(len(data))), data...))
}

func readFrames(t *testing.T, file []byte, name string) ([]decoded, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(file), name)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var out []decoded
	var f decode.Frame
	for {
		err := r.Next(&f)
		if err == io.EOF {
			return out, nil
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			return out, err
		}
		d := decoded{Frame: f, Err: err}
		d.Payload = nil
		out = append(out, d)
	}
}

// TestPcapngSections reads what `cat a.pcapng b.pcapng` makes: the second
// section, in the other byte order, describes its own interfaces from 0
// again (native IB there, Ethernet in the first), and each packet is decoded
// with its own section's interface.
func TestPcapngSections(t *testing.T) {
	var w ngFile
	w.section(binary.LittleEndian)
	w.iface(decode.LinkTypeEthernet, -1, 0)
	roce := rocePacket(t, 0x04, 8)
	w.epb(0, 1_000_000, roce, len(roce))
	w.section(binary.BigEndian)
	w.iface(decode.LinkTypeInfiniBand, 9, 0)
	ib := ibPacket(t, 0x04, 8)
	for i := range 3 {
		w.epb(0, 2_000_000_000+uint64(i), ib, len(ib))
	}
	frames, err := readFrames(t, w.buf.Bytes(), "cat.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tr   decode.Transport
		tsNs int64
	}{{decode.TransportRoCEv2, 1e9}, {decode.TransportIB, 2e9}, {decode.TransportIB, 2e9 + 1}, {decode.TransportIB, 2e9 + 2}}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if f.Err != nil || f.Transport != want[i].tr || f.TsNs != want[i].tsNs {
			t.Errorf("frame %d: %v at %d ns (%v); want %v at %d ns", f.Number, f.Transport, f.TsNs, f.Err, want[i].tr, want[i].tsNs)
		}
	}
	if frames[1].Has&decode.HasLRH == 0 || frames[1].LRH.SLID != 2 {
		t.Errorf("frame 2: SLID %d (has LRH: %v), want 2", frames[1].LRH.SLID, frames[1].Has&decode.HasLRH != 0)
	}
}

// TestPcapngTsResol converts every kind of if_tsresol and if_tsoffset
// exactly: 2^-32 and 2^-30 s are binary fractions that float arithmetic got
// 7.4% wrong, 10^-20 s is finer than a ns.
func TestPcapngTsResol(t *testing.T) {
	const quarterS = 250_000_000
	cases := []struct {
		name      string
		tsresol   int
		tsOffsetS int64
		units     uint64
		wantNs    int64
	}{
		{"default microseconds", -1, 0, 1_700_000_000_250_000, 1_700_000_000*1e9 + quarterS},
		{"10^-9", 9, 0, 1_700_000_000_250_000_000, 1_700_000_000*1e9 + quarterS},
		{"10^-3", 3, 0, 250, quarterS},
		{"10^0", 0, 0, 3, 3e9},
		{"2^-32", 0x80 | 32, 0, 1 << 30, quarterS},
		{"2^-30", 0x80 | 30, 0, 1 << 28, quarterS},
		{"2^-32 seconds and fraction", 0x80 | 32, 0, 1_700_000_000<<32 | 1<<30, 1_700_000_000*1e9 + quarterS},
		{"2^0", 0x80, 0, 7, 7e9},
		{"2^-64 rounds down", 0x80 | 64, 0, 1 << 62, quarterS},
		{"10^-12", 12, 0, 1_700_000_123_456_789_012, 1_700_000_123_456_789},
		{"10^-20", 20, 0, 25 * 1e17, quarterS / 10}, // 2^64 units of 10^-20 s are 0.18 s
		{"10^-20 below a ns", 20, 0, 99_999_999_999, 0},
		{"10^-127", 127, 0, math.MaxUint64, 0},
		{"if_tsoffset", 6, 1_700_000_000, quarterS / 1000, 1_700_000_000*1e9 + quarterS},
		{"negative if_tsoffset", 6, -1, 1_250_000, quarterS},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w ngFile
			w.section(binary.LittleEndian)
			w.iface(decode.LinkTypeEthernet, c.tsresol, c.tsOffsetS)
			p := rocePacket(t, 0x04, 8)
			w.epb(0, c.units, p, len(p))
			frames, err := readFrames(t, w.buf.Bytes(), "tsresol.pcapng")
			if err != nil || len(frames) != 1 {
				t.Fatalf("%d frames, %v", len(frames), err)
			}
			if f := frames[0]; f.Err != nil || f.NoTs || f.TsNs != c.wantNs {
				t.Errorf("ts %d ns (no time %v, %v), want %d", f.TsNs, f.NoTs, f.Err, c.wantNs)
			}
		})
	}
}

// TestPcapngTimeOutOfRange: a time past 2262 in ns is reported for its frame,
// which is skipped; the next frame reads.
func TestPcapngTimeOutOfRange(t *testing.T) {
	for _, c := range []struct {
		tsresol   int
		tsOffsetS int64
		units     uint64
	}{{9, 0, math.MaxUint64}, {0, 0, math.MaxUint64}, {0x80, 0, 1 << 40}, {6, math.MaxInt64, 1}, {6, math.MinInt64, 1}} {
		var w ngFile
		w.section(binary.LittleEndian)
		w.iface(decode.LinkTypeEthernet, c.tsresol, c.tsOffsetS)
		p := rocePacket(t, 0x04, 8)
		w.epb(0, c.units, p, len(p))
		w.iface(decode.LinkTypeEthernet, 9, 0)
		w.epb(1, 5, p, len(p))
		frames, err := readFrames(t, w.buf.Bytes(), "future.pcapng")
		if err != nil || len(frames) != 2 {
			t.Fatalf("%d frames, %v", len(frames), err)
		}
		if e := frames[0].Err; e == nil || !strings.Contains(e.Error(), "future.pcapng: frame 1 (record at byte offset ") ||
			!strings.Contains(e.Error(), "is not a time from 1678 to 2262 in ns; frame skipped") || frames[0].Transport != decode.TransportNone {
			t.Errorf("resolution %#x, offset %d s, %d units: frame 1: %v, %v; want the time refused", c.tsresol, c.tsOffsetS, c.units, frames[0].Transport, e)
		}
		if f := frames[1]; f.Err != nil || f.TsNs != 5 || f.Transport != decode.TransportRoCEv2 {
			t.Errorf("frame 2 after it: %v at %d ns (%v)", f.Transport, f.TsNs, f.Err)
		}
	}
}

// TestPcapngSimplePacket: a Simple Packet Block has no time, and the frame
// says so instead of carrying a made-up one; JSON leaves ts_ns out.
func TestPcapngSimplePacket(t *testing.T) {
	var w ngFile
	w.section(binary.LittleEndian)
	w.iface(decode.LinkTypeEthernet, -1, 0)
	p := rocePacket(t, 0x04, 8)
	w.spb(p)
	w.epb(0, 3, p, len(p))
	frames, err := readFrames(t, w.buf.Bytes(), "spb.pcapng")
	if err != nil || len(frames) != 2 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	if f := frames[0]; f.Err != nil || !f.NoTs || f.TsNs != 0 || f.Transport != decode.TransportRoCEv2 || f.CapLen != len(p) {
		t.Errorf("simple packet: %v, no time %v, ts %d, %d bytes (%v); want RoCEv2 with no time", f.Transport, f.NoTs, f.TsNs, f.CapLen, f.Err)
	}
	if js := string(frames[0].AppendJSON(nil, "")); strings.Contains(js, "ts_ns") {
		t.Errorf("JSON of a frame without time: %s", js)
	}
	if f := frames[1]; f.NoTs || f.TsNs != 3000 {
		t.Errorf("enhanced packet after it: no time %v, ts %d, want 3000 ns", f.NoTs, f.TsNs)
	}
}

// TestPcapngDamagedBlocks: damage to the block framing stops the file with a
// FileError naming frame and byte offset.
func TestPcapngDamagedBlocks(t *testing.T) {
	p := rocePacket(t, 0x04, 8)
	build := func() *ngFile {
		var w ngFile
		w.section(binary.LittleEndian)
		w.iface(decode.LinkTypeEthernet, -1, 0)
		w.epb(0, 1, p, len(p))
		return &w
	}
	w := build()
	second := int64(w.buf.Len())
	w.epb(3, 2, p, len(p))
	cases := []struct {
		name    string
		file    []byte
		message string
	}{
		{"unknown interface", w.buf.Bytes(), "pcapng packet on interface 3, but its section describes 1"},
	}
	w = build()
	w.epb(0, 2, p, len(p))
	bad := append([]byte(nil), w.buf.Bytes()...)
	bad[len(bad)-1] = 9
	cases = append(cases, struct {
		name    string
		file    []byte
		message string
	}{"trailing length", bad, "length " + strconv.Itoa(len(bad)-int(second)) + " at its start but"})
	w = build()
	w.epb(0, 2, p, len(p))
	huge := append([]byte(nil), w.buf.Bytes()...)
	binary.LittleEndian.PutUint32(huge[second+20:], 1<<20)
	cases = append(cases, struct {
		name    string
		file    []byte
		message string
	}{"captured length past the block", huge, "claims 1048576 captured bytes in a " + strconv.Itoa(len(huge)-int(second)) + "-byte block"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			frames, err := readFrames(t, c.file, "damaged.pcapng")
			var fe *FileError
			if len(frames) != 1 || !errors.As(err, &fe) || fe.Frame != 2 || fe.Offset != second || !strings.Contains(err.Error(), c.message) {
				t.Errorf("%d frames, then %v; want 1, then frame 2 at byte offset %d: %q", len(frames), err, second, c.message)
			}
		})
	}
}

// TestPcapRecordHeaders: a pcap record whose wire length is below its
// captured length, or whose sub-second field holds a second or more, is
// reported (file, frame, byte offset) and skipped; the framing still holds,
// so the frames after it read.
func TestPcapRecordHeaders(t *testing.T) {
	p := rocePacket(t, 0x04, 8)
	for _, c := range []struct {
		name    string
		nano    bool
		at      int // byte in the record header
		value   uint32
		message string
	}{
		{"orig_len 40", true, 12, 40, "record header: original length 40 below captured length " + strconv.Itoa(len(p)) + "; frame skipped"},
		{"orig_len 0", true, 12, 0, "record header: original length 0 below captured length " + strconv.Itoa(len(p))},
		{"nanoseconds 0xFFFFFFFF", true, 4, math.MaxUint32, "record header: nanoseconds field 4294967295 is a second or more; frame skipped"},
		{"microseconds 1e6", false, 4, 1e6, "record header: microseconds field 1000000 is a second or more"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := pcapFile(c.nano, p, p, p)
			recAt := 24 + 16 + len(p)
			binary.LittleEndian.PutUint32(file[recAt+c.at:], c.value)
			frames, err := readFrames(t, file, "bad.pcap")
			if err != nil || len(frames) != 3 {
				t.Fatalf("%d frames, %v", len(frames), err)
			}
			want := "bad.pcap: frame 2 (record at byte offset " + strconv.Itoa(recAt) + "): " + c.message
			if e := frames[1].Err; e == nil || !strings.Contains(e.Error(), want) || frames[1].Transport != decode.TransportNone {
				t.Errorf("frame 2: %v (%v); want %q", e, frames[1].Transport, want)
			}
			if frames[0].Err != nil || frames[2].Err != nil || frames[2].Transport != decode.TransportRoCEv2 {
				t.Errorf("frames 1 and 3: %v, %v", frames[0].Err, frames[2].Err)
			}
		})
	}
}

// pcapFile builds a little-endian pcap of Ethernet frames one second apart.
func pcapFile(nano bool, pkts ...[]byte) []byte {
	var b []byte
	magic := uint32(magicMicro)
	if nano {
		magic = magicNano
	}
	b = binary.LittleEndian.AppendUint32(b, magic)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = binary.LittleEndian.AppendUint32(b, 65535)
	b = binary.LittleEndian.AppendUint32(b, decode.LinkTypeEthernet)
	for i, p := range pkts {
		b = binary.LittleEndian.AppendUint32(b, uint32(i+1))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// TestLRHAfterRoCE: a RoCE frame decoded into the Frame a native IB frame
// used does not claim the IB frame's LRH (its SLID).
func TestLRHAfterRoCE(t *testing.T) {
	var f decode.Frame
	ib := decode.Decoder{LinkType: decode.LinkTypeInfiniBand}
	if err := ib.Decode(ibPacket(t, 0x04, 8), &f); err != nil || f.Has&decode.HasLRH == 0 || f.LRH.SLID != 2 {
		t.Fatalf("IB frame: SLID %d (%v), want 2", f.LRH.SLID, err)
	}
	eth := decode.Decoder{LinkType: decode.LinkTypeEthernet}
	if err := eth.Decode(rocePacket(t, 0x04, 8), &f); err != nil || f.Has&decode.HasLRH != 0 {
		t.Errorf("RoCE frame after it: has an LRH (SLID %d, %v)", f.LRH.SLID, err)
	}
}

// TestPcapngTsResolTshark compares our times for binary and decimal
// if_tsresol with tshark's frame.time_epoch. Decimal resolutions finer than
// a ns are left out: tshark 4.0 gets them wrong (10^-12 s units of
// 1700000.123456789012 s print as 1700000.012776324, 10^-20 s as 0);
// TestPcapngTsResol checks ours against the arithmetic.
func TestPcapngTsResolTshark(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	for _, c := range []struct {
		tsresol int
		units   uint64
	}{{0x80 | 32, 1_700_000_000<<32 | 1<<30}, {0x80 | 30, 1_700_000_000<<30 | 3<<27}, {9, 1_700_000_000_123_456_789}, {-1, 1_700_000_000_250_000},
		{0x80 | 40, 1_700_000 << 40}} {
		var w ngFile
		w.section(binary.LittleEndian)
		w.iface(decode.LinkTypeEthernet, c.tsresol, 0)
		p := rocePacket(t, 0x04, 8)
		w.epb(0, c.units, p, len(p))
		path := filepath.Join(t.TempDir(), "tsresol.pcapng")
		if err := os.WriteFile(path, w.buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.time_epoch").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		sec, frac, _ := strings.Cut(strings.TrimSpace(string(out)), ".")
		frac = (frac + "000000000")[:9]
		s, err1 := strconv.ParseInt(sec, 10, 64)
		n, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("tshark printed %q", out)
		}
		frames, err := readFrames(t, w.buf.Bytes(), path)
		if err != nil || len(frames) != 1 {
			t.Fatalf("%d frames, %v", len(frames), err)
		}
		if frames[0].TsNs != s*1e9+n {
			t.Errorf("if_tsresol %#x: %d ns, tshark %s", c.tsresol, frames[0].TsNs, out)
		}
	}
}

// TestPcapngSectionsTshark: what `cat a.pcapng a.pcapng` makes decodes field
// for field as tshark decodes it, in both sections.
func TestPcapngSectionsTshark(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	one, err := os.ReadFile(filepath.Join(pcapsDir, "mixed.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "twice.pcapng")
	if err := os.WriteFile(path, append(append([]byte(nil), one...), one...), 0o644); err != nil {
		t.Fatal(err)
	}
	frames := readAll(t, path)
	half := len(frames) / 2
	for i := range half {
		a, b := frames[i], frames[half+i]
		if a.Transport != b.Transport || a.TsNs != b.TsNs || (a.Err == nil) != (b.Err == nil) {
			t.Errorf("frame %d of the second section: %v at %d ns (%v); the first section's: %v at %d ns (%v)",
				i+1, b.Transport, b.TsNs, b.Err, a.Transport, a.TsNs, a.Err)
		}
	}
	if n := interopFile(t, tshark, path, map[string]int{}); n != 2*half {
		t.Errorf("tshark compared %d frames, want %d", n, 2*half)
	}
}

package capfile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/klauspost/compress/zstd"
)

// ibPacket builds a sealed native IB packet (LRH, BTH, the opcode's headers,
// payloadBytes of data) with the serializers.
func ibPacket(t testing.TB, op decode.Opcode, payloadBytes int) []byte {
	t.Helper()
	ls := append([]gopacket.SerializableLayer{&decode.LRH{LNH: decode.LNHLocal, DLID: 1, SLID: 2}}, transportLayers(op, payloadBytes, 0xAB)...)
	p := serialize(t, gopacket.SerializeOptions{FixLengths: true}, ls...)
	decode.SealNative(p)
	return p
}

// rocePacket builds a sealed RoCEv2 IPv4 frame.
func rocePacket(t testing.TB, op decode.Opcode, payloadBytes int) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &layers.UDP{SrcPort: 50000, DstPort: decode.UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	ls := append([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4},
		ip, udp}, transportLayers(op, payloadBytes, 0xCD)...)
	p := serialize(t, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...)
	if err := decode.SealRoCE(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// transportLayers is what ibPacket and rocePacket put after their network
// headers: the BTH of opcode op, the extended headers it implies, and
// payloadBytes of fill.
func transportLayers(op decode.Opcode, payloadBytes int, fill byte) []gopacket.SerializableLayer {
	ls := []gopacket.SerializableLayer{&decode.BTH{OpCode: op, PKey: 0xFFFF, DestQP: 7, PSN: 9}}
	for _, lt := range op.Headers(nil) {
		ls = append(ls, extHeader(lt))
	}
	if payloadBytes > 0 {
		ls = append(ls, gopacket.Payload(bytes.Repeat([]byte{fill}, payloadBytes)))
	}
	return ls
}

// serialize lays ls out with opts into a slice of its own.
func serialize(t testing.TB, opts gopacket.SerializeOptions, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// extHeader is an empty extended transport header of layer type lt, which
// the serializers fill in: the headers an opcode implies (Opcode.Headers).
func extHeader(lt gopacket.LayerType) gopacket.SerializableLayer {
	switch lt {
	case decode.LayerTypeRDETH:
		return &decode.RDETH{}
	case decode.LayerTypeDETH:
		return &decode.DETH{}
	case decode.LayerTypeXRCETH:
		return &decode.XRCETH{}
	case decode.LayerTypeRETH:
		return &decode.RETH{}
	case decode.LayerTypeAtomicETH:
		return &decode.AtomicETH{}
	case decode.LayerTypeAETH:
		return &decode.AETH{}
	case decode.LayerTypeAtomicAckETH:
		return &decode.AtomicAckETH{}
	case decode.LayerTypeImmDt:
		return &decode.ImmDt{}
	case decode.LayerTypeIETH:
		return &decode.IETH{}
	}
	return &decode.CNPReserved{}
}

// writeCapture writes packets into a nanosecond pcap in a temporary directory.
func writeCapture(t testing.TB, linkType int, pkts ...[]byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bad.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := NewPcapWriter(f, linkType)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pkts {
		if err := w.WritePacket(&Packet{TsNs: int64(i+1) * 1000, Data: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenBadFiles(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(pcapsDir, "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		data    []byte
		offset  int64
		message string
	}{
		{"not a capture", []byte("frame,time,opcode\n1,0.5,RC_SEND_ONLY\n"), 0, "not a pcap or pcapng file"},
		{"empty", nil, 0, "empty"},
		{"file header cut", good[:10], 10, "pcap file header cut short: 10 of 24 bytes"},
		{"pcapng header cut", []byte{0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0}, 0, "pcapng"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.pcap")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			var fe *FileError
			if !errors.As(err, &fe) {
				r.Close()
				t.Fatalf("Open: %v, want a *FileError", err)
			}
			if fe.Name != path || fe.Offset != c.offset || !strings.Contains(err.Error(), c.message) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q (offset %d), want the file name, offset %d and %q", err, fe.Offset, c.offset, c.message)
			}
		})
	}
}

// TestDamagedRecords reads files whose last record is damaged: the frames
// before it decode, then a FileError names the frame and byte offset and
// sticks.
func TestDamagedRecords(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(pcapsDir, "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	all := readAll(t, filepath.Join(pcapsDir, "rocev2_ipv4.pcap"))
	last := all[len(all)-1]
	huge := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(huge[last.Offset+8:], 1<<30)
	cases := []struct {
		name    string
		data    []byte
		frame   int
		offset  int64
		message string
	}{
		{"last record cut", good[:len(good)-5], last.Number, last.Offset + 16, "last record cut short"},
		{"record header cut", good[:last.Offset+7], last.Number, last.Offset, "record header cut short: 7 of 16 bytes"},
		{"impossible length", huge, last.Number, last.Offset, "claims 1073741824 captured bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(c.data), "damaged.pcap")
			if err != nil {
				t.Fatal(err)
			}
			var f decode.Frame
			n, err := framesBeforeError(r, &f)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("after %d frames: %v, want a *FileError", n, err)
			}
			if n != c.frame-1 || fe.Frame != c.frame || fe.Offset != c.offset || !strings.Contains(err.Error(), c.message) {
				t.Errorf("after %d frames: %q (frame %d, offset %d); want %d frames, then frame %d at offset %d: %q",
					n, err, fe.Frame, fe.Offset, c.frame-1, c.frame, c.offset, c.message)
			}
			want := "damaged.pcap: frame " + strconv.Itoa(c.frame)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not name %q", err, want)
			}
			if err2 := r.Next(&f); err2 != err {
				t.Errorf("the next call returned %v, want the same FileError", err2)
			}
		})
	}
}

// TestCutPcapng reads a pcapng file whose last block is cut short: the
// frames before it decode, then a FileError names the frame, the block's
// byte offset and the cut.
func TestCutPcapng(t *testing.T) {
	path := filepath.Join(pcapsDir, "mixed.pcapng")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := readAll(t, path)
	last := all[len(all)-1]
	r, err := NewReader(bytes.NewReader(good[:len(good)-20]), "cut.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	n, err := framesBeforeError(r, nil)
	var fe *FileError
	if !errors.As(err, &fe) || n != last.Number-1 || fe.Frame != last.Number || fe.Offset != last.Offset ||
		!strings.Contains(err.Error(), "cut.pcapng: frame "+strconv.Itoa(last.Number)) || !strings.Contains(err.Error(), "last block cut short") {
		t.Errorf("after %d frames: %v; want %d frames, then frame %d at byte offset %d: last block cut short", n, err, last.Number-1, last.Number, last.Offset)
	}
}

// TestBadFrames reads files with malformed frames among good ones: each bad
// frame gives a DecodeError naming the file, frame and byte offsets, and
// reading goes on with the next frame.
func TestBadFrames(t *testing.T) {
	good := ibPacket(t, 0x04, 8) // RC SEND ONLY
	shortPktLen := append([]byte(nil), good...)
	binary.BigEndian.PutUint16(shortPktLen[4:], binary.BigEndian.Uint16(good[4:])-2) // 8 bytes left over
	ack := ibPacket(t, 0x11, 0)                                                      // RC ACKNOWLEDGE: BTH, AETH, no data
	badPad := append([]byte(nil), ack...)
	badPad[decode.LRHLen+1] |= 3 << 4 // pad count 3: the AETH would lose 3 of its 4 bytes
	decode.SealNative(badPad)
	reserved := ibPacket(t, 0x04, 8)
	reserved[decode.LRHLen] = 0x18 // a reserved RC opcode
	decode.SealNative(reserved)

	roce := rocePacket(t, 0x0A, 32) // RC RDMA WRITE ONLY
	badUDP := append([]byte(nil), roce...)
	binary.BigEndian.PutUint16(badUDP[14+20+4:], uint16(len(roce))) // UDP length beyond the frame

	cases := []struct {
		name     string
		linkType int
		bad      []byte
		byteOff  int
		message  string
	}{
		{"PktLen short of the packet", decode.LinkTypeInfiniBand, shortPktLen, 4, "unaccounted for"},
		{"pad count eats the AETH", decode.LinkTypeInfiniBand, badPad, decode.LRHLen + decode.BTHLen, "AETH needs 4 bytes, 1 left: the BTH pad count 3 contradicts the packet length"},
		{"reserved opcode", decode.LinkTypeInfiniBand, reserved, decode.LRHLen, "unknown opcode 0x18"},
		{"UDP length past the IP payload", decode.LinkTypeEthernet, badUDP, 14 + 20 + 4, "disagrees with the IP payload length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok := good
			if c.linkType == decode.LinkTypeEthernet {
				ok = roce
			}
			path := writeCapture(t, c.linkType, ok, c.bad, ok)
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var f decode.Frame
			for n := 1; n <= 3; n++ {
				err := r.Next(&f)
				if n != 2 {
					if err != nil || f.Has&decode.CRCsCheck == 0 || !f.ICRCOK {
						t.Errorf("frame %d: %v (ICRC ok %v), want a good frame", n, err, f.ICRCOK)
					}
					continue
				}
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("frame 2: %v, want a *DecodeError", err)
				}
				recOff := int64(24 + 16 + len(ok))
				if de.Name != path || de.Frame != 2 || de.Offset != recOff || de.Err.Offset != c.byteOff || !strings.Contains(err.Error(), c.message) {
					t.Errorf("frame 2: %q (frame %d, record offset %d, byte %d); want frame 2, record offset %d, byte %d, %q",
						err, de.Frame, de.Offset, de.Err.Offset, recOff, c.byteOff, c.message)
				}
				for _, part := range []string{path, "frame 2", "byte offset " + strconv.Itoa(int(recOff)), "byte " + strconv.Itoa(c.byteOff) + " of the frame"} {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("%q does not say %q", err, part)
					}
				}
			}
			if err := r.Next(&f); err != io.EOF {
				t.Errorf("after 3 frames: %v, want EOF", err)
			}
		})
	}
}

// TestSnapLenCut checks frames cut by the snap length: the headers the
// capture holds decode, the rest is left out quietly (no error, no CRC
// verdict), wherever the cut falls.
func TestSnapLenCut(t *testing.T) {
	for _, c := range []struct {
		name     string
		linkType int
		pkt      []byte
		bthAt    int // where the BTH starts
	}{
		{"native IB", decode.LinkTypeInfiniBand, ibPacket(t, 0x06, 300), decode.LRHLen},
		{"RoCEv2", decode.LinkTypeEthernet, rocePacket(t, 0x06, 300), 14 + 20 + 8},
	} {
		for _, keep := range []int{c.bthAt + 5, c.bthAt + decode.BTHLen + 5, c.bthAt + decode.BTHLen + 16, 100, len(c.pkt) - 1} {
			var f decode.Frame
			f.CapLen, f.WireLen = keep, len(c.pkt)
			d := decode.Decoder{LinkType: c.linkType, CheckCRC: true}
			if err := d.Decode(c.pkt[:keep], &f); err != nil {
				t.Errorf("%s cut to %d bytes: %v", c.name, keep, err)
				continue
			}
			want := decode.Has(0)
			if keep >= c.bthAt+decode.BTHLen {
				want |= decode.HasBTH
			}
			if keep >= c.bthAt+decode.BTHLen+16 {
				want |= decode.HasRETH
			}
			if got := f.Has & (decode.HasBTH | decode.HasRETH | decode.CRCsCheck | decode.HasICRC); got != want {
				t.Errorf("%s cut to %d bytes: has %b of BTH, RETH, CRC verdict, ICRC; want %b", c.name, keep, got, want)
			}
			if f.Has&decode.HasRETH != 0 && f.RETH.DMALen != 0 {
				t.Errorf("%s cut to %d bytes: RETH DMALen %d, want the 0 it was built with", c.name, keep, f.RETH.DMALen)
			}
		}
	}
}

// framesBeforeError reads r into f (a scratch frame when nil) until Next
// fails and returns how many frames it read and the error.
func framesBeforeError(r *Reader, f *decode.Frame) (int, error) {
	if f == nil {
		f = new(decode.Frame)
	}
	n := 0
	for {
		if err := r.Next(f); err != nil {
			return n, err
		}
		n++
	}
}

// TestCompressedCaptures reads gzip, bzip2 and zstd captures as the
// capture inside (the same frames), and names the compressor of those it
// does not read.
func TestCompressedCaptures(t *testing.T) {
	src := filepath.Join(pcapsDir, "mixed.pcapng")
	plain, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, src)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"gzip": gz.Bytes(), "zstd": enc.EncodeAll(plain, nil)}
	if out, err := exec.Command("bzip2", "-c", src).Output(); err == nil {
		files["bzip2"] = out
	} else if testenv.InCI() {
		t.Fatalf("bzip2: %v", err)
	} else {
		t.Logf("bzip2 not run (%v): bzip2 case left out", err)
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.pcapng."+name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, path)
			if len(got) != len(want) {
				t.Fatalf("%d frames, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].TsNs != want[i].TsNs || got[i].Transport != want[i].Transport || got[i].Offset != want[i].Offset {
					t.Errorf("frame %d: %v at %d ns, offset %d; want %v at %d, offset %d", i+1,
						got[i].Transport, got[i].TsNs, got[i].Offset, want[i].Transport, want[i].TsNs, want[i].Offset)
				}
			}
			// cut: a FileError naming the frame, after the frames before
			// the cut that the decompressor gave (bzip2 and zstd give
			// none of a cut block: then the FileError comes from Open)
			r, err := NewReader(bytes.NewReader(data[:len(data)*2/3]), "cut."+name)
			n := 0
			if err == nil {
				n, err = framesBeforeError(r, nil)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Frame != min(n, 1)*(n+1) || !strings.Contains(err.Error(), "cut."+name) {
				t.Errorf("cut %s file: %d frames, then %v; want a FileError at the next frame", name, n, err)
			}
			if n == 0 && !strings.Contains(err.Error(), name+" data cut short or damaged") {
				t.Errorf("cut %s file: %v does not say the %s data is cut", name, err, name)
			}
		})
	}
	gzgz := bytes.Buffer{}
	zw = gzip.NewWriter(&gzgz)
	zw.Write(gz.Bytes())
	zw.Close()
	for _, c := range []struct {
		name, data, message string
	}{
		{"xz", "\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46", "compressed with xz: decompress it first (xz -d x.xz)"},
		{"lz4", "\x04\x22\x4d\x18\x64\x40\xa7", "compressed with lz4: decompress it first (lz4 -d x.lz4)"},
		{"gzip twice", gzgz.String(), "compressed with gzip, but what it holds is not a pcap or pcapng file (magic 0x1f8b0800)"},
		{"gzip of a text", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\xe7\x02\x00\x20\x30\x3a\x36\x06\x00\x00\x00", "compressed with gzip, but what it holds is not a pcap or pcapng file (magic 0x68656c6c)"},
	} {
		path := filepath.Join(t.TempDir(), "x."+strings.Fields(c.name)[0])
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(path)
		if err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(c.message, "x."+strings.Fields(c.name)[0], path)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.message)
		}
	}
}

// TestBadPFCFrameInFile: a PFC frame the decoder refuses (a time on a
// priority it does not enable) is named with the file, frame and byte,
// and the frames around it decode.
func TestBadPFCFrameInFile(t *testing.T) {
	const at = 14 // the MAC control opcode follows the Ethernet header
	good := macControlFrame(t, &decode.PFC{ClassEnable: 0x08, Quanta: [8]uint16{3: 0xFFFF}})
	disabled := macControlFrame(t, &decode.PFC{ClassEnable: 0x01, Quanta: [8]uint16{0: 10, 5: 7}})
	path := writeCapture(t, decode.LinkTypeEthernet, good, disabled, good)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f decode.Frame
	for n := 1; n <= 3; n++ {
		err := r.Next(&f)
		if n != 2 {
			if err != nil || f.Has&decode.HasPFC == 0 {
				t.Errorf("frame %d: %v, Has %b", n, err, f.Has)
			}
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Frame != 2 || de.Err.Offset != at+4+2*5 {
			t.Fatalf("frame 2: %v", err)
		}
		for _, part := range []string{path, "frame 2", "byte 28 of the frame", "time[5]"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%q does not say %q", err, part)
			}
		}
	}
}

// TestGzipTrailingGarbage: bytes after the end of a gzip capture's
// compressed data are said to be that, after every record is read (it
// said "record header cut short: 0 of 16 bytes"); a second gzip member
// goes on where the first ended, as gzip -d reads it.
func TestGzipTrailingGarbage(t *testing.T) {
	src := filepath.Join(pcapsDir, "rocev2_ipv4.pcap")
	plain, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	want := len(readAll(t, src))
	member := func(b []byte) []byte {
		var out bytes.Buffer
		zw := gzip.NewWriter(&out)
		zw.Write(b)
		zw.Close()
		return out.Bytes()
	}
	whole := member(plain)
	for _, c := range []struct {
		name string
		data []byte
		says string
	}{
		{"text after", append(append([]byte(nil), whole...), "garbage after the gzip stream"...), "trailing garbage"},
		{"zeros after", append(append([]byte(nil), whole...), 0, 0, 0, 0), "trailing garbage"},
		{"two members", append(member(plain[:len(plain)/2]), member(plain[len(plain)/2:])...), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(c.data), "x.pcap.gz")
			if err != nil {
				t.Fatal(err)
			}
			n, err := framesBeforeError(r, nil)
			if c.says == "" {
				if err != io.EOF || n != want {
					t.Errorf("%d frames, then %v; want %d and the end", n, err, want)
				}
				return
			}
			var fe *FileError
			if n != want || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "cut short") {
				t.Errorf("%d frames, then %v; want %d, then %q", n, err, want, c.says)
			}
		})
	}
}

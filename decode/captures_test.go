package decode

import (
	"encoding/binary"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealCaptures checks the CRC verdicts on captures from real hardware and
// stacks: every ICRC and VCRC in them is correct.
func TestRealCaptures(t *testing.T) {
	files := sharedFiles(t)
	want := map[string]struct {
		transport      Transport
		icrcOK, vcrcOK int
	}{
		"softroce-demo_infiniband.pcap": {TransportIB, 43, 43},
		"oferby-proxy_roce.pcap":        {TransportRoCEv2, 105, 0},
		"cx4lx_cnp.pcap":                {TransportRoCEv2, 1, 0},
	}
	for _, path := range files {
		name := filepath.Base(path)
		w, ok := want[name]
		if !ok {
			continue
		}
		var ib, icrcOK, vcrcOK int
		for _, f := range readAll(t, path) {
			if f.Err != nil {
				t.Errorf("%v", f.Err)
			}
			if f.Transport != w.transport {
				continue
			}
			ib++
			if f.Has&CRCsCheck == 0 {
				t.Errorf("%s: frame %d: CRCs not checked", name, f.Number)
			}
			if f.Has&HasICRC != 0 && f.ICRCOK {
				icrcOK++
			}
			if f.Has&HasVCRC != 0 && f.VCRCOK {
				vcrcOK++
			}
			if name == "cx4lx_cnp.pcap" {
				// 0x82fd002a is the ICRC in wire byte order, as Wireshark shows it.
				if f.BTH.OpCode != OpcodeCNP || bits.ReverseBytes32(f.BTH.ICRC) != 0x82fd002a {
					t.Errorf("%s: opcode 0x%02x ICRC on the wire 0x%08x, want a CNP with ICRC 0x82fd002a", name, uint8(f.BTH.OpCode), bits.ReverseBytes32(f.BTH.ICRC))
				}
			}
		}
		if ib != w.icrcOK || icrcOK != w.icrcOK || vcrcOK != w.vcrcOK {
			t.Errorf("%s: %d %v frames, %d ICRCs and %d VCRCs correct; want %d, %d, %d",
				name, ib, w.transport, icrcOK, vcrcOK, w.icrcOK, w.icrcOK, w.vcrcOK)
		}
	}
}

// TestGeneratedCaptures checks every generated capture against what the
// generator says it holds: frame counts, the frames whose CRC it broke, the
// frames the snap length cut.
func TestGeneratedCaptures(t *testing.T) {
	for name, e := range loadExpect(t) {
		t.Run(name, func(t *testing.T) {
			frames := readAll(t, filepath.Join(pcapsDir, name))
			if len(frames) != e.Frames {
				t.Fatalf("%d frames, want %d", len(frames), e.Frames)
			}
			ib := 0
			for _, f := range frames {
				n := f.Number
				if f.Err != nil {
					t.Errorf("frame %d: %v", n, f.Err)
					continue
				}
				if f.Transport == TransportNone {
					if !contains(e.NotIB, n) {
						t.Errorf("frame %d: not decoded as IB or RoCE", n)
					}
					continue
				}
				ib++
				if f.CapLen > f.WireLen { // e.g. ERF record padding taken for packet bytes
					t.Errorf("frame %d: %d bytes captured of %d on the wire", n, f.CapLen, f.WireLen)
				}
				cut := contains(e.Cut, n)
				if f.Truncated() != cut {
					t.Errorf("frame %d: truncated %v, want %v", n, f.Truncated(), cut)
				}
				if cut {
					if f.Has&CRCsCheck != 0 {
						t.Errorf("frame %d: cut by the snap length, yet CRCs were judged", n)
					}
					if f.Has&HasBTH == 0 {
						t.Errorf("frame %d: cut frame lost its BTH", n)
					}
					continue
				}
				if f.Has&CRCsCheck == 0 {
					t.Errorf("frame %d: CRCs not checked", n)
					continue
				}
				if f.Has&HasICRC != 0 && f.ICRCOK == contains(e.BadICRC, n) {
					t.Errorf("frame %d: ICRC ok %v, want %v", n, f.ICRCOK, !contains(e.BadICRC, n))
				}
				if f.Has&HasVCRC != 0 && f.VCRCOK == contains(e.BadVCRC, n) {
					t.Errorf("frame %d: VCRC/LPCRC ok %v, want %v", n, f.VCRCOK, !contains(e.BadVCRC, n))
				}
			}
			if ib != e.IBFrames {
				t.Errorf("%d IB/RoCE frames, want %d", ib, e.IBFrames)
			}
		})
	}
}

// TestRecordOffsets checks that each frame's Offset points at its record in
// the file: a pcap record header, or a pcapng Enhanced Packet Block, that
// holds the frame's captured length.
func TestRecordOffsets(t *testing.T) {
	for _, name := range generatedFiles(t) {
		file, err := os.ReadFile(filepath.Join(pcapsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range readAll(t, filepath.Join(pcapsDir, name)) {
			off := f.Offset
			if off < 0 || off+28 > int64(len(file)) {
				t.Errorf("%s: frame %d: offset %d outside the %d-byte file", name, f.Number, off, len(file))
				continue
			}
			capLen := binary.LittleEndian.Uint32(file[off+8:]) // pcap record header
			if strings.HasSuffix(name, ".pcapng") {
				if typ := binary.LittleEndian.Uint32(file[off:]); typ != 6 {
					t.Errorf("%s: frame %d: block type %d at offset %d, want 6 (EPB)", name, f.Number, typ, off)
				}
				capLen = binary.LittleEndian.Uint32(file[off+20:])
			}
			if int(capLen) < f.CapLen {
				t.Errorf("%s: frame %d: record at offset %d holds %d bytes, the frame %d", name, f.Number, off, capLen, f.CapLen)
			}
		}
	}
}

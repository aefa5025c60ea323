package decode

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestSealFrame clears the CRCs of every intact frame of the generated
// captures (pcap files of each link type) and requires SealFrame to put the
// same bytes back.
func TestSealFrame(t *testing.T) {
	expect := loadExpect(t)
	for _, name := range generatedFiles(t) {
		if strings.HasSuffix(name, ".pcapng") {
			continue // several link types in one file; its frames are in the others' forms
		}
		e := expect[name]
		linkType, recs := fileRecords(t, filepath.Join(pcapsDir, name))
		dec := Decoder{LinkType: linkType, CheckCRC: true}
		var f Frame
		sealed := 0
		for _, rec := range recs {
			data, n := rec.Data, rec.Number
			f.CapLen, f.WireLen = len(data), rec.WireLen
			if dec.Decode(data, &f) != nil || f.Transport == TransportNone || f.Truncated() ||
				contains(e.BadICRC, n) || contains(e.BadVCRC, n) {
				continue
			}
			want := append([]byte(nil), data...)
			got := append([]byte(nil), data...)
			at := func(sub []byte) int { return cap(data) - cap(sub) } // where a decoded slice starts in data
			switch {
			case f.Has&HasLink != 0:
				clear(got[at(f.Link.Contents)+4 : at(f.Link.Contents)+6])
			case f.Has&HasICRC != 0:
				icrcAt := at(f.BTH.Contents) + BTHLen + len(f.BTH.Payload) + int(f.BTH.PadCnt)
				end := icrcAt + ICRCLen
				if f.Has&HasLRH != 0 {
					end += 2 // and the VCRC
				}
				clear(got[icrcAt:end])
			}
			if bytes.Equal(got, want) {
				t.Fatalf("%s: frame %d: no CRC cleared", name, n)
			}
			if err := SealFrame(linkType, got); err != nil {
				t.Errorf("%s: frame %d: %v", name, n, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: frame %d: sealing changed the frame", name, n)
			}
			sealed++
		}
		if sealed == 0 {
			t.Errorf("%s: no frame sealed", name)
		}
	}
}

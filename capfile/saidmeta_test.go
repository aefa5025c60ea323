package capfile

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// TestMetaAsOpened: what a file says of itself (SnapLen here) is what the
// open read, before its first packet, wherever the reading stands: a
// second pcapng section's interfaces (no snap length) once turned a -j 1
// reader's 96 into 0 by the end, while a file read ahead kept 96 (found by
// FuzzStreamWorkers; its input is kept as later-section-snap-length).
func TestMetaAsOpened(t *testing.T) {
	le := binary.LittleEndian
	p := rocePacket(t, 0x04, 8)
	var w ngFile
	w.section(le)
	idb := le.AppendUint16(nil, decode.LinkTypeEthernet)
	idb = le.AppendUint16(idb, 0)
	idb = le.AppendUint32(idb, 96) // snap length
	w.block(ngBlockInterface, idb)
	w.epb(0, 1, p, len(p))
	w.section(le)
	w.iface(decode.LinkTypeEthernet, -1, 0)
	w.epb(0, 2, p, len(p))

	r, err := NewReader(bytes.NewReader(w.buf.Bytes()), "two-sections.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	if r.SnapLen() != 96 {
		t.Fatalf("opened: snap length %d, want 96", r.SnapLen())
	}
	var f decode.Frame
	for n := 0; ; n++ {
		if err := r.Next(&f); err == io.EOF {
			if n != 2 {
				t.Fatalf("%d frames, want 2", n)
			}
			break
		}
	}
	if r.SnapLen() != 96 {
		t.Errorf("read to its end: snap length %d, want 96 as opened", r.SnapLen())
	}

	path := filepath.Join(t.TempDir(), "two-sections.pcapng")
	if err := os.WriteFile(path, w.buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		s, err := OpenStream([]string{path}, StreamOptions{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, err := s.Next(); err == io.EOF {
				break
			}
		}
		if s.SnapLen(0) != 96 {
			t.Errorf("%d workers, read to the end: snap length %d, want 96", workers, s.SnapLen(0))
		}
		s.Close()
	}
}

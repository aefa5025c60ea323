package capture

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// A write error leaves a file that ends on its last whole record, and the
// error says so. The file system is a real tmpfs too small for the capture.
func TestWriterDiskFull(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	path := filepath.Join(dir, "full.pcap")
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	frame := rocev2Frame(opSendOnly, 1, 0, 1000, false, false)
	var werr error
	n := 0
	for ; n < 1000 && werr == nil; n++ {
		werr = w.Write(&Packet{Data: frame, TsNs: int64(n), WireLenBytes: len(frame)})
		if werr == nil && n%10 == 9 {
			werr = w.Flush()
		}
	}
	if werr == nil {
		t.Fatal("no error writing 1 MB to a 64 kB file system")
	}
	if !errors.Is(werr, syscall.ENOSPC) || !strings.Contains(werr.Error(), "last whole record") {
		t.Errorf("error %q: want ENOSPC and where the file ends", werr)
	}
	if err := w.Write(&Packet{Data: frame, WireLenBytes: len(frame)}); err == nil {
		t.Error("write after a failed write succeeded")
	}
	w.Close()
	recs, _ := readAll(t, path) // fails the test if the file does not end on a record
	if len(recs) == 0 || len(recs) >= n {
		t.Fatalf("file holds %d records after %d writes", len(recs), n)
	}
	for i, r := range recs {
		if !bytes.Equal(r, frame) {
			t.Fatalf("record %d damaged", i)
		}
	}
}

package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// A write error leaves a file that ends on its last whole record, and the
// error says so. The file system is a real tmpfs too small for the capture.
func TestWriterDiskFull(t *testing.T) {
	path := filepath.Join(testenv.SmallTmpfs(t, "64k"), "full.pcap")
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	frame := rocev2Frame(opSendOnly, 1, 0, 1000, false, false)
	var werr error
	n := 0
	for ; n < 1000 && werr == nil; n++ {
		werr = w.Write(&capfile.Packet{Data: frame, TsNs: int64(n), WireLenBytes: len(frame)})
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
	if err := w.Write(&capfile.Packet{Data: frame, WireLenBytes: len(frame)}); err == nil {
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

// A disk that fills up in the middle of one large write keeps the records
// that fit, whole, and Run's report counts the rest as not written: what it
// says was written is what the file holds.
func TestRunDiskFull(t *testing.T) {
	path := filepath.Join(testenv.SmallTmpfs(t, "64k"), "full.pcap")
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	roce, _ := mixedTraffic(100, false)
	const sent = 2000 // about 290 kB: one buffered write, larger than the disk
	src := &memSource{frames: roce, n: sent}
	rep, err := Run(context.Background(), src, w, RunOptions{})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "last whole record") {
		t.Fatalf("error %v: want ENOSPC and where the file ends", err)
	}
	if cerr := w.Close(); !errors.Is(err, cerr) {
		t.Errorf("Close: %v, want the write error again", cerr)
	}
	recs, _ := readAll(t, path)
	if len(recs) == 0 {
		t.Fatal("the file holds no record: what fit on the disk was not kept")
	}
	if rep.Written != uint64(len(recs)) || rep.Unwritten != sent-rep.Written || rep.Captured != sent {
		t.Errorf("the file holds %d records; report:\n%s", len(recs), rep.String())
	}
	var bytes uint64
	for i, r := range recs {
		bytes += uint64(len(r))
		if f := roce[i%len(roce)]; !strings.HasPrefix(string(f), string(r)) {
			t.Fatalf("record %d damaged", i)
		}
	}
	if rep.Bytes != bytes {
		t.Errorf("report says %d bytes written, the records hold %d", rep.Bytes, bytes)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("%d packets", len(recs))) {
		t.Errorf("error %q does not say how many packets the file holds (%d)", err, len(recs))
	}
}

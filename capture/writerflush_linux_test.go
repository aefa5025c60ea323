package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

// The writer's goroutine writes chunks while Run goes on: a disk that
// fills up a few chunks into a capture stops Run at the next hand-off, and
// the report still says exactly what the file holds.
func TestRunDiskFullWhileWriting(t *testing.T) {
	// About 1.5 chunks of room: the first chunk goes out whole, the second
	// one fails part way.
	path := filepath.Join(testenv.SmallTmpfs(t, "1536k"), "full.pcap")
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, SnapLenBytes: 128})
	if err != nil {
		t.Fatal(err)
	}
	roce, _ := mixedTraffic(100, false)
	const sent = 100_000 // about 14 MB of records: many chunks
	src := &memSource{frames: roce, n: sent}
	rep, err := Run(context.Background(), src, w, RunOptions{})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "last whole record") {
		t.Fatalf("error %v: want ENOSPC and where the file ends", err)
	}
	if cerr := w.Close(); !errors.Is(err, cerr) {
		t.Errorf("Close: %v, want the write error again", cerr)
	}
	recs, _ := readAll(t, path)
	if len(recs) < chunkBytes/(16+128) {
		t.Fatalf("the file holds %d records: the first chunk was not kept", len(recs))
	}
	if rep.Written != uint64(len(recs)) || rep.Written+rep.Unwritten != rep.Captured || rep.Captured > sent {
		t.Errorf("the file holds %d records; report:\n%s", len(recs), rep.String())
	}
}

// A rotated file the writer's goroutine cannot open stops the writer: the
// error names the file, the earlier file keeps every packet counted as
// written, and no later packet is counted.
func TestWriterRotationOpenFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.pcap")
	if err := os.Mkdir(RotatedName(path, 1), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, RotateBytes: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	frame := rocev2Frame(opSendOnly, 1, 0, 1000, false, false)
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		werr = w.Write(&capfile.Packet{Data: frame, TsNs: int64(i + 1), WireLenBytes: len(frame)})
	}
	if werr == nil {
		werr = w.Flush()
	}
	if werr == nil || !strings.Contains(werr.Error(), RotatedName(path, 1)) {
		t.Fatalf("error %v: want one naming %s", werr, RotatedName(path, 1))
	}
	if err := w.Write(&capfile.Packet{Data: frame, WireLenBytes: len(frame)}); err == nil {
		t.Error("write after a failed rotation succeeded")
	}
	n, _ := w.Written()
	if err := w.Close(); !errors.Is(err, werr) && (err == nil || err.Error() != werr.Error()) {
		t.Errorf("Close: %v, want %v again", err, werr)
	}
	recs, _ := readAll(t, RotatedName(path, 0))
	if n != uint64(len(recs)) || len(recs) == 0 {
		t.Errorf("%d packets counted as written, the first file holds %d", n, len(recs))
	}
	if files := w.Files(); len(files) != 1 {
		t.Errorf("files %v: want only the first", files)
	}
}

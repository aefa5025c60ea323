package capture

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// A second writer of the same capture file, plain or rotating, is refused
// before it touches the file, naming the first one's PID; once the first
// is closed the name is free again and no lock file is left.
func TestWriterSecondCaptureRefused(t *testing.T) {
	frame := rocev2Frame(opSendOnly, 1, 0, 100, false, false)
	for _, c := range []struct {
		name string
		cfg  WriterConfig
	}{
		{"plain", WriterConfig{}},
		{"rotating", WriterConfig{RotateBytes: 1000, MaxFiles: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := c.cfg
			cfg.Path, cfg.LinkType = filepath.Join(dir, "same.pcap"), decode.LinkTypeEthernet
			first, err := NewWriter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 40 {
				if err := first.Write(&capfile.Packet{Data: frame, TsNs: int64(i+1) * 1e6, WireLenBytes: len(frame)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := first.Flush(); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			second, err := NewWriter(cfg)
			if err == nil {
				second.Close()
				t.Fatal("a second writer of the same file was let in")
			}
			if want := "another capture (PID " + strconv.Itoa(os.Getpid()) + ","; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the refused writer changed the files:\nbefore %s\nafter  %s", before, after)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			third, err := NewWriter(cfg)
			if err != nil {
				t.Fatalf("after the first writer closed: %v", err)
			}
			third.Close()
			if _, err := os.Stat(lockFileName(cfg.Path)); !os.IsNotExist(err) {
				t.Errorf("lock file left behind: %v", err)
			}
		})
	}
}

// Outputs that keep nothing under a name take no lock: two writers of
// /dev/null, or of stdout, both run.
func TestWriterNoLockOnDevices(t *testing.T) {
	for _, path := range []string{os.DevNull, "-"} {
		a, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, Stdout: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, Stdout: &strings.Builder{}})
		if err != nil {
			t.Errorf("%s: second writer refused: %v", path, err)
		} else {
			b.Close()
		}
		a.Close()
	}
	if _, err := os.Stat(lockFileName(os.DevNull)); err == nil {
		t.Errorf("a lock file was made beside %s", os.DevNull)
	}
}

// snapshot is the names and sizes of the files in dir, lock files aside.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + "=" + strconv.FormatInt(fi.Size(), 10) + " ")
	}
	return b.String()
}

package sim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// tree lists every name under dir, hidden ones too.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return names
}

func loadYAML(t *testing.T, text string) *Scenario {
	t.Helper()
	s, err := LoadScenario(writeFile(t, "s.yaml", text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRunConfined: a symbolic link inside the output directory does not
// lead a tap out of it; the failed run leaves nothing, and removes the
// output directory it made.
func TestRunConfined(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	out := filepath.Join(base, "out")
	os.Mkdir(out, 0o755)
	os.Symlink(outside, filepath.Join(out, "esc"))
	s := loadYAML(t, strings.Replace(goodYAML, "file: a.pcap", "file: esc/a.pcap", 1))
	if _, err := Run(s, out); err == nil {
		t.Fatal("a tap through a link out of the output directory was written")
	}
	if left := tree(t, outside); len(left) > 0 {
		t.Errorf("written outside: %v", left)
	}
	if left := tree(t, out); len(left) != 1 || left[0] != "esc" {
		t.Errorf("output directory holds %v", left)
	}
	// A tap file that is a link is refused, its target untouched.
	os.WriteFile(filepath.Join(outside, "keep"), []byte("keep"), 0o644)
	os.Symlink(filepath.Join(outside, "keep"), filepath.Join(out, "a.pcap"))
	if _, err := Run(loadYAML(t, goodYAML), out); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("tap onto a link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "keep")); string(b) != "keep" {
		t.Errorf("link target now %q", b)
	}

	// A run refused after it made the output directory removes it.
	made := filepath.Join(base, "new", "out")
	if _, err := Run(loadYAML(t, strings.Replace(goodYAML, "{a: sw, b: b}]", "{a: sw, b: b}, {a: a, b: b}]", 1)), made); err == nil {
		t.Error("a host with two links accepted")
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); err == nil {
		t.Errorf("a refused run left %v", tree(t, filepath.Join(base, "new")))
	}
}

// TestRunFailureLeavesNothing: a run that fails after its captures were
// written (the sysfs tree's directory is taken by a file) leaves none of its
// files, and an earlier run's capture stays as it was.
func TestRunFailureLeavesNothing(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "a.pcap"), []byte("earlier run"), 0o644)
	os.WriteFile(filepath.Join(out, "sysfs"), []byte("in the way"), 0o644)
	s := loadYAML(t, goodYAML+"telemetry: {period_ns: 20000, sidecar_dir: sc, sysfs_dir: sysfs}\n")
	_, err := Run(s, out)
	if err == nil || !strings.Contains(err.Error(), "sysfs") {
		t.Fatalf("error %v, want one about the sysfs tree", err)
	}
	if left := tree(t, out); strings.Join(left, " ") != "a.pcap sysfs" {
		t.Errorf("left behind: %v", left)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.pcap")); string(b) != "earlier run" {
		t.Errorf("the earlier capture is now %d bytes", len(b))
	}
}

// TestRunStopsAtWriteError: on a file system that fills up, the run stops at
// the first write error (well before its events run out) and leaves
// nothing. Needs root for the tmpfs.
func TestRunStopsAtWriteError(t *testing.T) {
	out := testenv.SmallTmpfs(t, "64k")
	s := loadYAML(t, strings.Replace(goodYAML, "bytes: 65536", "bytes: 1073741824", 1))
	// 1 GiB takes about 4 million events: a run not stopped by the write
	// error would end on the event limit instead.
	_, err := runLimited(s, out, 200_000)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "a.pcap") {
		t.Errorf("error %v, want ENOSPC writing a.pcap", err)
	}
	if left := tree(t, out); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

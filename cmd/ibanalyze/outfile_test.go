package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// everything lists every name under dir, hidden ones too.
func everything(t *testing.T, dir string) []string {
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

// TestNoPartialOutput: every writing command that fails midway, here
// because its file system fills up while it writes, leaves neither its
// output under the final name nor a temporary file.
func TestNoPartialOutput(t *testing.T) {
	tel := filepath.Join(t.TempDir(), "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	incast, roce := simIncast(t), simPreset(t, "incast-small-roce")
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"export parquet", func(out string) []string { return []string{"export", rocev2Pcap, "-o", out + "/p.parquet"} }},
		{"export arrow", func(out string) []string { return []string{"export", rocev2Pcap, "-o", out + "/p.arrow"} }},
		{"export partitioned", func(out string) []string {
			return []string{"export", rocev2Pcap, "-o", out + "/ds", "--partition-by", "host=a,date"}
		}},
		{"correlate", func(out string) []string {
			return []string{"correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-o", out + "/j.parquet"}
		}},
		{"ipd --plot", func(out string) []string {
			return []string{"ipd", filepath.Join(incast, "s1.pcap"), "--plot", out + "/ipd.svg"}
		}},
		{"flows --plot", func(out string) []string { return []string{"flows", rocev2Pcap, "--plot", out + "/flows.png"} }},
		{"credits --plot", func(out string) []string {
			return []string{"credits", filepath.Join(incast, "s1.pcap"), "--plot", out + "/credits.svg"}
		}},
		{"pfc --plot", func(out string) []string {
			return []string{"pfc", filepath.Join(roce, "s1.pcapng"), "--plot", out + "/pfc.png"}
		}},
		{"report", func(out string) []string {
			return []string{"report", filepath.Join(incast, "s1.pcap"), "-o", out + "/report.html"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := testenv.SmallTmpfs(t, "4k")
			_, stderr, code := run(t, c.args(out)...)
			if code == 0 {
				t.Fatalf("succeeded on a 4 kB file system")
			}
			if !strings.Contains(stderr, "no space left on device") {
				t.Errorf("stderr %q: want the write error", stderr)
			}
			if left := everything(t, out); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestOutputDevicesAndLinks: -o /dev/null and a FIFO are written through
// (never replaced by a regular file); a symbolic link is refused and its
// target untouched.
func TestOutputDevicesAndLinks(t *testing.T) {
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	runOK(t, "export", rocev2Pcap, "--format", "parquet", "-o", "/dev/null")
	runOK(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "--format", "arrow", "-o", "/dev/null")
	runOK(t, "flows", rocev2Pcap, "--plot", "/dev/null.png")
	runOK(t, "report", rocev2Pcap, "-o", "/dev/null")
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v (%v)", fi.Mode(), err)
	}

	fifo := filepath.Join(dir, "rows.arrow")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	runOK(t, "export", rocev2Pcap, "-o", fifo)
	if b := <-got; !strings.HasPrefix(string(b), "ARROW1") {
		t.Errorf("the FIFO's reader got %d bytes, not an Arrow file", len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("FIFO is now %v (%v)", fi.Mode(), err)
	}

	// /dev/stdout sent to a file: the rows go there whole, the summary to
	// stderr.
	for _, args := range [][]string{
		{"export", rocev2Pcap, "--format", "arrow", "-o", "/dev/stdout"},
		{"correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "--format", "arrow", "-o", "/dev/stdout"},
	} {
		out := filepath.Join(dir, "stdout.arrow")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd := exec.Command(ibanalyzeBin, args...)
		cmd.Stdout, cmd.Stderr = f, &stderr
		err = cmd.Run()
		f.Close()
		b, _ := os.ReadFile(out)
		if err != nil || !strings.HasPrefix(string(b), "ARROW1") || !strings.HasSuffix(string(b), "ARROW1") || !strings.Contains(stderr.String(), "/dev/stdout: ") {
			t.Errorf("%s -o /dev/stdout > file: %v, %d bytes (%q...), stderr %q", args[0], err, len(b), b[:min(len(b), 16)], stderr.String())
		}
	}

	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	for _, args := range [][]string{
		{"export", rocev2Pcap, "-o", filepath.Join(dir, "l.parquet")},
		{"correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-o", filepath.Join(dir, "l.parquet")},
		{"flows", rocev2Pcap, "--plot", filepath.Join(dir, "l.png")},
		{"report", rocev2Pcap, "-o", filepath.Join(dir, "l.html")},
	} {
		link := args[len(args)-1]
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := run(t, args...)
		if code != 1 || !strings.Contains(stderr, link+": is a symbolic link") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and a refusal", args[:1], code, stderr)
		}
		if b, _ := os.ReadFile(target); string(b) != "keep" {
			t.Errorf("%v: link target now %q", args[:1], b)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%v: link replaced", args[:1])
		}
	}
}

// TestExportPartitionKeepsOtherCaptures: a second capture of the same name
// exported into the same dataset is refused when it reaches the first one's
// partition file, naming both; the first one's rows stay, and the
// partition directory the failed export had made is removed.
func TestExportPartitionKeepsOtherCaptures(t *testing.T) {
	dir := t.TempDir()
	day := int64(24 * time.Hour)
	pkts := testcap.Stream(4, 1, 2, 7, 0, 256, testcap.BaseNs, func(int) int64 { return 1000 })
	os.Mkdir(filepath.Join(dir, "n1"), 0o755)
	os.Mkdir(filepath.Join(dir, "n2"), 0o755)
	first := testcap.WriteIn(t, filepath.Join(dir, "n1"), "cap.pcap", false, pkts)
	// The second starts two days later, then has a packet of the first's day.
	later := append(testcap.Stream(3, 1, 2, 7, 0, 256, testcap.BaseNs+2*day, func(int) int64 { return 1000 }), pkts[0])
	second := testcap.WriteIn(t, filepath.Join(dir, "n2"), "cap.pcap", false, later)

	ds := filepath.Join(dir, "ds")
	runOK(t, "export", first, "-o", ds, "--partition-by", "date")
	part := filepath.Join(ds, "date=2024-01-01", "part-cap.parquet")
	before, err := os.ReadFile(part)
	if err != nil {
		t.Fatalf("first export: %v (have %v)", err, everything(t, ds))
	}
	_, stderr, code := run(t, "export", second, "-o", ds, "--partition-by", "date")
	if code != 1 || !strings.Contains(stderr, part+" exists") || !strings.Contains(stderr, second) {
		t.Errorf("second capture of the same name: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(part); string(after) != string(before) {
		t.Error("the first capture's partition file changed")
	}
	if left := everything(t, ds); len(left) != 2 {
		t.Errorf("dataset now holds %v, want only the first capture's file", left)
	}
	// Exported under another name, it joins the dataset.
	other := filepath.Join(dir, "n2", "cap-n2.pcap")
	os.Rename(second, other)
	runOK(t, "export", other, "-o", ds, "--partition-by", "date")
	if left := everything(t, ds); len(left) != 5 {
		t.Errorf("dataset now holds %v", left)
	}
}

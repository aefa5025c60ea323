package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const rocev2Pcap = "../../testdata/pcaps/rocev2_ipv4.pcap"

func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"p.parquet", "p.arrow"} {
		out := filepath.Join(dir, name)
		stdout, stderr, code := run(t, "export", rocev2Pcap, "-o", out)
		if code != 0 || !strings.Contains(stdout, out+": 77 rows (0 frames not decoded)") {
			t.Fatalf("export -o %s: exit %d\nstdout %s\nstderr %s", name, code, stdout, stderr)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() == 0 || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v", out, fi, err)
		}
	}

	ds := filepath.Join(dir, "ds")
	stdout, stderr, code := run(t, "export", rocev2Pcap, "-o", ds, "--partition-by", "host=n1,transport")
	want := filepath.Join(ds, "host=n1", "transport=rocev2", "part-rocev2_ipv4.parquet")
	if code != 0 || !strings.Contains(stdout, want) {
		t.Fatalf("partitioned export: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

func TestExportCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(rocev2Pcap)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, b[:len(b)-50], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", rocev2Pcap, "-o", filepath.Join(dir, "p.txt")}, "cannot tell the format from the extension"},
		{[]string{"export", rocev2Pcap}, `required flag(s) "output" not set`},
		{[]string{"export", rocev2Pcap, "-o", filepath.Join(dir, "d"), "--partition-by", "qp"}, `partition key "qp": want date, hour, transport or NAME=VALUE`},
		{[]string{"export", cut, "-o", filepath.Join(dir, "cut.parquet")}, cut + ": frame 77"},
		{[]string{"export", filepath.Join(dir, "missing.pcap"), "-o", filepath.Join(dir, "m.parquet")}, "no such file"},
	} {
		_, stderr, code := run(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args[1:], code, stderr, tc.want)
		}
	}
	// The cut capture failed too, but its frames before the cut are written.
	if err := os.Remove(filepath.Join(dir, "cut.parquet")); err != nil {
		t.Errorf("export of a cut capture: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left)+len(hidden) > 0 {
		t.Errorf("files left behind: %v %v", left, hidden)
	}
}

// TestExportInterrupted: SIGTERM or SIGINT in the middle of an export leaves
// neither the output nor its temporary file, nor, for a partitioned export,
// the directories it made. The capture comes through a FIFO held open, so
// the export is still waiting for frames when the signal arrives.
func TestExportInterrupted(t *testing.T) {
	b, err := os.ReadFile(rocev2Pcap)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		out  string   // under the test's directory
		args []string // after the output
		tmp  string   // glob of the temporary file, under the test's directory
	}{
		{"file", "p.parquet", nil, ".p.parquet.*.tmp"},
		{"partitioned", "ds", []string{"--partition-by", "date,hour"}, "ds/date=*/hour=*/.part-live.parquet.*.tmp"},
	}
	for _, c := range cases {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "live.pcap")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			cmd := exec.Command(ibanalyzeBin, append([]string{"export", fifo, "-o", filepath.Join(dir, c.out)}, c.args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once ibanalyze opens it
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(b); err != nil {
				t.Fatal(err)
			}
			// Wait, without a time limit of its own, for the temporary file.
			for {
				if m, _ := filepath.Glob(filepath.Join(dir, c.tmp)); len(m) > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			w.Close()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("%s, %v: %v, want exit status %d; stderr %s", c.name, sig, err, 128+int(sig), stderr.String())
			}
			if !strings.Contains(stderr.String(), "partial output removed") {
				t.Errorf("%s, %v: stderr %q", c.name, sig, stderr.String())
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "live.pcap" {
					t.Errorf("%s, %v: left behind: %s", c.name, sig, e.Name())
				}
			}
		}
	}
}

// TestOutputDash: -o - is standard output, as tcpdump's -w -, for export,
// correlate and report, never a file named "-" in the working directory.
func TestOutputDash(t *testing.T) {
	if _, err := os.Stat("-"); err == nil {
		t.Fatal(`a file named "-" is already here`)
	}
	stdout, stderr, code := run(t, "export", rocev2Pcap, "-o", "-", "--format", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "# {") || strings.Count(stdout, "\n") != 79 || !strings.Contains(stderr, "77 rows") {
		t.Errorf("export -o -: exit %d, %d lines\n%s", code, strings.Count(stdout, "\n"), stderr)
	}
	tel := filepath.Join(t.TempDir(), "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	stdout, stderr, code = run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-o", "-", "--format", "jsonl")
	if code != 0 || strings.Count(stdout, "\n") != 8 || !strings.Contains(stderr, "8 rows") {
		t.Errorf("correlate -o -: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = run(t, "report", rocev2Pcap, "-o", "-")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || !strings.HasSuffix(stdout, "</html>\n") {
		t.Errorf("report -o -: exit %d, %d bytes", code, len(stdout))
	}
	if _, err := os.Stat("-"); err == nil {
		os.Remove("-")
		t.Error(`a file named "-" was written`)
	}
}

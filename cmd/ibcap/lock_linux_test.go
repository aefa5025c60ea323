package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two captures into one file: the second, a real ibcap on the same veth,
// is refused before it touches the file, with the first one's PID named,
// and exits non-zero; the first keeps every frame sent (before the lock,
// both truncated the file and each said it wrote all it saw). With -C/-W
// the ring of files is locked as one. Once the first ends, the name is
// free again.
func TestIbcapSecondCaptureRefused(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	for _, c := range []struct {
		name  string
		extra []string
		file  string // the file holding the frames, "" for the -w name
	}{
		{"plain", nil, ""},
		{"ring", []string{"-C", "100", "-W", "3"}, "same-00000.pcap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "same.pcap")
			args := append([]string{"-i", "vcap", "-w", out}, c.extra...)
			first := startIbcap(t, ns, nil, args...)
			ns.Replay(t, bundled, "--pps=50000")
			second := ns.Command(ibcapBin, args...)
			// A second ibcap that is let in captures until stopped: a
			// deadline ends it so the test fails instead of hanging.
			stop := time.AfterFunc(30*time.Second, func() { second.Process.Signal(os.Interrupt) })
			msg, err := second.CombinedOutput()
			stop.Stop()
			if err == nil {
				t.Fatalf("the second ibcap into %s ran:\n%s", out, msg)
			}
			if says := fmt.Sprintf("is being written by another capture (PID %d,", first.cmd.Process.Pid); !strings.Contains(string(msg), says) {
				t.Errorf("the second ibcap does not say %q:\n%s", says, msg)
			}
			first.cmd.Process.Signal(os.Interrupt)
			if err := first.wait(t); err != nil {
				t.Fatalf("the first ibcap: %v\n%s", err, first.stderr.String())
			}
			file := out
			if c.file != "" {
				file = filepath.Join(dir, c.file)
			}
			got, err := readRecords(t, file)
			if err != nil {
				t.Fatal(err)
			}
			sameFrames(t, got, want)
			again := startIbcap(t, ns, nil, args...)
			again.cmd.Process.Signal(os.Interrupt)
			if err := again.wait(t); err != nil {
				t.Fatalf("an ibcap after the first ended: %v\n%s", err, again.stderr.String())
			}
		})
	}
}

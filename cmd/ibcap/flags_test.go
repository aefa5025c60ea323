package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIbcapNumericFlags: a negative or absurd -s, -B, -C, -G, -W or
// --duration is refused with a message naming the flag, before a device is
// opened or a file created (--duration -1s used to capture without limit).
func TestIbcapNumericFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--duration", "-1s"}, "--duration -1s: want 0 (no limit) up to a year"},
		{[]string{"--duration", "9000h"}, "--duration 9000h0m0s: want 0"},
		{[]string{"-s", "-1"}, "-s -1: want 0 (whole packets) up to 65535 bytes"},
		{[]string{"-s", "1000000"}, "-s 1000000: want 0"},
		{[]string{"-B", "-4"}, "-B -4: want 0 (the default 65536 KiB) up to 16777216 KiB"},
		{[]string{"-B", "99999999999"}, "-B 99999999999: want 0"},
		{[]string{"-C", "-1"}, "-C -1: want 0 (no size rotation) up to 1000000000 MB"},
		{[]string{"-C", "9223372036854"}, "-C 9223372036854: want 0"},
		{[]string{"-G", "-60"}, "-G -60: want 0 (no time rotation) up to 31622400 seconds"},
		{[]string{"-G", "9300000000"}, "-G 9300000000: want 0"},
		{[]string{"-W", "-2", "-C", "1"}, "-W -2: want 0 (keep every file) up to 1000000 files"},
		{[]string{"-c", "-1"}, `invalid argument "-1" for "-c, --count" flag`},
	} {
		out := filepath.Join(t.TempDir(), "x.pcap")
		msg, err := exec.Command(ibcapBin, append([]string{"-i", "nosuch0", "-w", out}, c.args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(msg), c.says) {
			t.Errorf("%v: %v\n%s\nwant %q", c.args, err, msg, c.says)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the capture file was created", c.args)
		}
	}
}

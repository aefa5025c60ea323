package main

import (
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// TestDecodeNoTime: a frame without a timestamp (pcapng simple packet
// block) says so in the text lines and has no ts_ns in JSON; flows skips
// it with a warning naming it.
func TestDecodeNoTime(t *testing.T) {
	pkts := testcap.Stream(3, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.WriteUntimed(t, "spb.pcapng", pkts, 1)
	stdout, stderr, code := run(t, "decode", path)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(strings.TrimSpace(lines[1]), "2 (no time)          rocev2 ") ||
		strings.Contains(lines[0], "no time") {
		t.Errorf("decode: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, _ = run(t, "decode", "--json", path)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || strings.Contains(lines[1], "ts_ns") || !strings.Contains(lines[0], "ts_ns") {
		t.Errorf("decode --json:\n%s", stdout)
	}
	_, stderr, _ = run(t, "flows", path)
	if !strings.Contains(stderr, path+": frame 2 (record at byte offset ") || !strings.Contains(stderr, "no timestamp (pcapng simple packet block)") {
		t.Errorf("flows stderr:\n%s", stderr)
	}
}

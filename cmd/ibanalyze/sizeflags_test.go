package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// Every flag that sizes memory is range-checked before anything is
// allocated: a huge value is refused with the flag and its range named,
// never tried (a reorder window of 10^9 packets would be a 154 GB ring).
func TestSizeFlagsRefused(t *testing.T) {
	good := testcap.Write(t, "good.pcap", false, writeStream(50, 5, testcap.BaseNs, func(int) int64 { return 1000 }))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ipd", "--window", "1000000000", good}, "--window 1000000000: want 1 to 1000000 packets"},
		{[]string{"ipd", "--window", "0", good}, "--window 0: want 1 to 1000000 packets"},
		{[]string{"flows", "--window", "-3", good}, "--window -3: want 1 to 1000000 packets"},
		{[]string{"ipd", "--compare", "--window", "2000000", good, good}, "--window 2000000: want 1 to 1000000 packets"},
		{[]string{"ipd", "--compare", "--match-window", "2s", good, good}, `--match-window "2s": want a duration from 1ns to 1s`},
		{[]string{"ipd", "--phases", "--phase-packets", "1000000000", good}, "--phase-packets 1000000000: want 1 to 65536"},
		{[]string{"ipd", "--bins", "1000000000", good}, "--bins 1000000000: want 1 to 10000"},
		{[]string{"ipd", "--exp", "--bins", "63", good}, "--bins 63: want 1 to 62"},
		{[]string{"ipd", "--bins", "-1", good}, "--bins -1: want 1 to 10000"},
		{[]string{"ipd", "--bin", "1000000000s", "--bins", "10000", good}, "10000 bins of 1000000000s end past the largest time"},
		{[]string{"ipd", "--top", "-2", good}, "--top -2: want 0 (all) or more"},
		{[]string{"tick", "--phase-packets", "1000000000", "--telemetry", "none.txt", good}, "--phase-packets 1000000000: want 1 to 65536"},
		{[]string{"tick", "--min-phase-packets", "1000000000", "--telemetry", "none.txt", good}, "--phase-packets 1000000000: want 1 to 65536"},
		{[]string{"tick", "--iface", "300", "--telemetry", "none.txt", good}, "--iface 300: want 0 to 127"},
		{[]string{"tick", "--max-packets", "0", "--telemetry", "none.txt", good}, "--max-packets 0: want 1 to 200000000"},
		{[]string{"buffer", "--max-packets", "300000000", good, good}, "--max-packets 300000000: want 1 to 200000000"},
	} {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
		if strings.Contains(errOut, "out of memory") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: crashed: %s", c.args, errOut)
		}
	}
}

// tick and buffer keep every data packet they read: past --max-packets they
// stop, saying why and what to do, instead of running out of memory.
func TestMaxPacketsKept(t *testing.T) {
	dir := simIncast(t)
	s1, s2, r := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tick", "--max-packets", "100", s1, "--telemetry", filepath.Join(dir, "perfquery.txt")},
			s1 + ": more data packets than the bound on packets kept (100): tick keeps every native IB data packet (16 bytes each) to time the waits; cut the capture to the congestion episode, or raise --max-packets"},
		{[]string{"buffer", "--max-packets", "1500", s1, s2, r},
			s2 + ": more data packets than the bound on packets kept (1500): buffer keeps every data packet of the sender captures to match it; cut the captures to the congestion episode, or raise --max-packets"},
	} {
		_, errOut, code := run(t, c.args...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	// Enough for the capture: the same report as without a bound.
	out := runOK(t, "buffer", "--max-packets", "2048", s1, s2, r)
	wantInOutput(t, out, "estimate 32768 bytes")
}

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capture"
)

// completeIbcap runs ibcap __complete ARGS with env added and returns the
// lines offered (value and description) and the directive line.
func completeIbcap(t *testing.T, env []string, args ...string) (lines []string, directive string) {
	t.Helper()
	out, stderr, code := runIbcap(t, env, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, stderr)
	}
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

// values are the completions of lines without their descriptions.
func values(lines []string) []string {
	var vs []string
	for _, l := range lines {
		v, _, _ := strings.Cut(l, "\t")
		vs = append(vs, v)
	}
	return vs
}

// -i completes what -D lists: the RDMA ports of sysfs (by IBSCOPE_SYSFS
// here), the network interfaces, any; -d the RDMA devices; -j the time
// stamp types, those the -i device offers once -i is given; --format the
// file formats; --opcode opcode names item by item; -Q the directions; -y
// the link types of the -i device, as -L lists them.
func TestCompleteFlagValues(t *testing.T) {
	sysfs := []string{capture.EnvSysfs + "=" + writeSysfs(t)}
	lines, directive := completeIbcap(t, sysfs, "-i", "")
	if !slices.Contains(lines, "mlx5_0:1\tRDMA port (InfiniBand, ACTIVE, 100 Gb/sec (4X EDR)), verbs sniffer") {
		t.Errorf("-i: no mlx5_0:1 line: %q", lines)
	}
	for _, want := range []string{"lo", "any"} {
		if !slices.Contains(values(lines), want) {
			t.Errorf("-i: %q lacks %s", lines, want)
		}
	}
	if directive != ":4" {
		t.Errorf("-i: directive %s, want :4 (no file names)", directive)
	}
	if lines, _ := completeIbcap(t, sysfs, "-i", "ml"); !slices.Equal(values(lines), []string{"mlx5_0:1"}) {
		t.Errorf("-i ml: %q", lines)
	}
	if lines, _ := completeIbcap(t, sysfs, "-d", ""); !slices.Equal(values(lines), []string{"mlx5_0"}) {
		t.Errorf("-d: %q", lines)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-j", ""}, []string{"host", "adapter", "adapter_unsynced"}},
		{[]string{"-i", "lo", "-j", ""}, []string{"host"}}, // loopback has no hardware clock
		{[]string{"--format", ""}, []string{"auto", "pcap", "pcapng", "erf-pcap", "ib247", "erf-raw"}},
		{[]string{"--time-stamp-precision", ""}, []string{"nano", "micro"}},
		{[]string{"--opcode", "RC_SEND_ONLY,UD_"}, []string{"RC_SEND_ONLY,UD_SEND_ONLY", "RC_SEND_ONLY,UD_SEND_ONLY_WITH_IMMEDIATE"}},
		{[]string{"-Q", ""}, []string{"in", "out", "inout"}},
		{[]string{"-i", "mlx5_0:1", "-y", ""}, []string{"ERF", "INFINIBAND"}},
		{[]string{"-i", "lo", "-y", ""}, []string{"EN10MB"}},
		{[]string{"-y", ""}, nil}, // -L too needs -i
	} {
		if lines, _ := completeIbcap(t, sysfs, c.args...); !slices.Equal(values(lines), c.want) {
			t.Errorf("%q: %q, want %q", c.args, values(lines), c.want)
		}
	}
}

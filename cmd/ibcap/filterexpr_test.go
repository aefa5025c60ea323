package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expression comes after the flags, as tcpdump takes it, or with -f;
// both at once, or with --all, is refused.
func TestFilterExpressionArgs(t *testing.T) {
	var f flags
	if err := filterExpression(&f, []string{"udp", "port", "4791"}); err != nil || f.filterExpr != "udp port 4791" {
		t.Errorf("args: %q, %v", f.filterExpr, err)
	}
	f = flags{filterExpr: "arp"}
	if err := filterExpression(&f, nil); err != nil || f.filterExpr != "arp" {
		t.Errorf("-f: %q, %v", f.filterExpr, err)
	}
	for _, c := range []struct {
		f    flags
		args []string
		says string
	}{
		{flags{filterExpr: "arp"}, []string{"udp"}, "a filter expression twice"},
		{flags{all: true}, []string{"udp"}, "drop --all"},
		{flags{filterExpr: "  "}, nil, "empty filter expression"},
	} {
		if err := filterExpression(&c.f, c.args); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v %v: %v, want %q", c.f, c.args, err, c.says)
		}
	}
}

// ibcap -i vcap -w FILE udp dst port 4791 keeps what that expression keeps
// (the bundled capture's RoCEv2 frames, none of its others); a mistyped
// expression is refused with libpcap's message before a file is created.
func TestIbcapFilterExpression(t *testing.T) {
	ns := newNetns(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pcap")
	msg, err := ns.Command(ibcapBin, "-i", "vcap", "-w", bad, "udp", "prot", "4791").CombinedOutput()
	if err == nil || !strings.Contains(string(msg), `filter "udp prot 4791": `) || !strings.Contains(string(msg), "syntax error") {
		t.Errorf("a mistyped expression: %v\n%s", err, msg)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a mistyped expression created the capture file")
	}

	out := filepath.Join(dir, "x.pcap")
	ib := startIbcap(t, ns, nil, "-i", "vcap", "-w", out, "udp", "dst", "port", "4791")
	var want [][]byte
	for _, f := range bundledRoCE(t) {
		if f[12] != 0x89 { // RoCEv1 (ethertype 0x8915) is not UDP
			want = append(want, f)
		}
	}
	ns.Replay(t, bundled, "--pps=20000")
	waitRecords(t, out, len(want))
	stopIbcap(t, ib)
	got, err := readRecords(t, out)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, want)
}

// Without libpcap an expression is refused in one line that says what to
// install, before any capture file is created.
func TestIbcapFilterWithoutLibpcap(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.pcap")
	_, stderr, code := runIbcap(t, []string{"IBSCOPE_LIBPCAP=/nonexistent/libpcap.so.1"}, "-i", "lo", "-w", out, "udp")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "apt-get install libpcap0.8") {
		t.Errorf("exit %d, want 1 and one line saying to install libpcap0.8:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the capture file was created")
	}
}

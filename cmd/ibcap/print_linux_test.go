package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// Without -w ibcap prints, as tcpdump: a line per RoCE frame sent across
// the veth pair, numbered from 1, each the frame's decoded summary, and
// -c stops it after that many.
func TestPrintLive(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	var stdout bytes.Buffer
	p := startIbcap(t, ns, &stdout, "-i", "vcap", "-c", strconv.Itoa(len(want)))
	ns.Replay(t, bundled, "--pps=20000")
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("ibcap printed %d lines; %d RoCE frames were sent\n%s", len(lines), len(want), p.stderr.String())
	}
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), strconv.Itoa(i+1)+" ") {
			t.Fatalf("line %d: %q is not numbered %d", i+1, l, i+1)
		}
		if got, w := lineTail(l), summaryTail(t, decode.LinkTypeEthernet, want[i]); got != w {
			t.Fatalf("line %d: %q, want %q", i+1, got, w)
		}
	}
	t.Logf("%d RoCE frames sent, %d lines printed", len(want), len(lines))
}

// -Q in keeps what vcap received, which is every frame sent to it
// (VLAN-tagged ones too, whose direction the kernel filter reads), and
// -Q out none of them; on vsend, the sending end, the other way round.
func TestDirectionLive(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	for _, tc := range []struct {
		dev, dir string
		kept     int
	}{{"vcap", "in", len(want)}, {"vcap", "out", 0}, {"vsend", "out", len(want)}, {"vsend", "in", 0}} {
		out := filepath.Join(t.TempDir(), "q.pcap")
		p := startIbcap(t, ns, nil, "-i", tc.dev, "-Q", tc.dir, "-w", out)
		ns.Replay(t, bundled, "--pps=20000")
		if tc.kept > 0 {
			waitRecords(t, out, tc.kept)
		}
		p.cmd.Process.Signal(os.Interrupt)
		if err := p.wait(t); err != nil {
			t.Fatalf("ibcap -Q %s: %v\n%s", tc.dir, err, p.stderr.String())
		}
		got, err := readRecords(t, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.kept {
			t.Errorf("ibcap -i %s -Q %s kept %d frames; want %d\n%s", tc.dev, tc.dir, len(got), tc.kept, p.stderr.String())
		}
		if tc.kept > 0 {
			sameFrames(t, got, want)
			if n := tsharkCount(t, out); n != tc.kept {
				t.Errorf("tshark reads %d frames of ibcap -Q %s's file, want %d", n, tc.dir, tc.kept)
			}
		}
	}
}

// Promiscuous mode is on while ibcap captures on a netdev, as with
// tcpdump, and -p leaves it off: the kernel's promiscuity count says.
func TestPromiscuousByDefault(t *testing.T) {
	ns := newNetns(t)
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "promiscuity 1"}, {[]string{"-p"}, "promiscuity 0"}} {
		out := filepath.Join(t.TempDir(), "p.pcap")
		p := startIbcap(t, ns, nil, append([]string{"-i", "vcap", "-w", out}, tc.args...)...)
		if got := promiscuity(t, ns); got != tc.want {
			t.Errorf("ibcap %v: vcap has %s, want %s", tc.args, got, tc.want)
		}
		stopIbcap(t, p)
	}
	if got := promiscuity(t, ns); got != "promiscuity 0" {
		t.Errorf("after ibcap: vcap has %s, want promiscuity 0", got)
	}
}

// promiscuity is what ip -d link says of vcap's promiscuity count.
func promiscuity(t *testing.T, ns *testnetns.NS) string {
	t.Helper()
	out, err := ns.Command("ip", "-d", "link", "show", "vcap").Output()
	if err != nil {
		t.Fatalf("ip -d link show vcap: %v", err)
	}
	f := strings.Fields(string(out))
	for i := range f[:len(f)-1] {
		if f[i] == "promiscuity" {
			return "promiscuity " + f[i+1]
		}
	}
	testenv.SkipOrFail(t, "ip -d link does not say the promiscuity count:\n%s", out)
	return ""
}

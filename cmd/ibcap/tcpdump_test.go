package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// ibcapOut runs the ibcap binary and returns its stdout, stderr and an
// error for an exit status not 0.
func ibcapOut(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	stdout, stderr, code := runIbcap(t, nil, args...)
	if code != 0 {
		return stdout, stderr, fmt.Errorf("exit status %d", code)
	}
	return stdout, stderr, nil
}

// summaryTail is a frame's summary line without its number and time
// columns, which a live capture gives its own.
func summaryTail(t *testing.T, linkType int, data []byte) string {
	t.Helper()
	var f decode.Frame
	d := decode.Decoder{LinkType: linkType, CheckCRC: true}
	f.CapLen, f.WireLen = len(data), len(data)
	msg := ""
	if err := d.Decode(data, &f); err != nil {
		msg = err.Error()
	}
	return lineTail(string(f.AppendSummary(nil, msg)))
}

// lineTail is a printed line without its number and time columns.
func lineTail(l string) string {
	fields := strings.SplitN(strings.TrimLeft(l, " "), " ", 3)
	if len(fields) < 3 {
		return l
	}
	return strings.TrimRight(fields[2], "\n")
}

// ibcap -r FILE prints one line per packet, as tcpdump -r: as many as
// tshark reads, each the frame's decoded summary, numbered from 1.
func TestReadPrints(t *testing.T) {
	out, stderr, err := ibcapOut(t, "-r", bundled)
	if err != nil {
		t.Fatalf("ibcap -r: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if n := tsharkCount(t, bundled); len(lines) != n {
		t.Fatalf("ibcap -r printed %d lines; tshark reads %d frames", len(lines), n)
	}
	all, err := readRecords(t, bundled)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), strconv.Itoa(i+1)+" ") {
			t.Fatalf("line %d: %q is not numbered %d", i+1, l, i+1)
		}
		if all, want := lineTail(l), summaryTail(t, decode.LinkTypeEthernet, all[i]); all != want && !strings.Contains(l, "not InfiniBand or RoCE") {
			t.Fatalf("line %d: %q, want %q", i+1, all, want)
		}
	}
	if !strings.Contains(stderr, "packets read from "+bundled) {
		t.Errorf("no report of what was read on stderr:\n%s", stderr)
	}
	// -v adds the IP header's fields, -e the Ethernet addresses; -n is
	// accepted.
	out, stderr, err = ibcapOut(t, "-r", bundled, "-v", "-e", "-n", "-c", "1", "-q")
	if err != nil || !strings.Contains(out, "(dscp ") || !strings.Contains(out, " > ") || strings.Count(out, "\n") != 1 {
		t.Errorf("ibcap -r -v -e -n -c 1: %v: %q\n%s", err, out, stderr)
	}
	// --format says how -w writes: printing, it changes nothing (-y
	// chooses the link type printed from; with -r it is refused).
	one, stderr, err := ibcapOut(t, "-r", bundled, "-c", "1", "-q")
	if err != nil {
		t.Fatalf("ibcap -r -c 1: %v\n%s", err, stderr)
	}
	if out, stderr, err = ibcapOut(t, "-r", bundled, "--format", "ib247", "-c", "1", "-q"); err != nil || out != one {
		t.Errorf("ibcap -r --format ib247 -c 1: %v: %q, want %q as without --format\n%s", err, out, one, stderr)
	}
}

// ibcap -r IN -w OUT copies what the filters keep: tshark finds in OUT
// exactly the frames of IN its own display filter picks, and an ERF file
// copies record for record.
func TestReadCopies(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "qp.pcapng")
	if _, stderr, err := ibcapOut(t, "-r", bundled, "--qp", "0x12", "-w", out); err != nil {
		t.Fatalf("ibcap -r --qp -w: %v\n%s", err, stderr)
	}
	want := tsharkFields(t, bundled, "infiniband.bth.destqp == 0x12", "frame.len", "frame.time_epoch")
	if got := tsharkFields(t, out, "", "frame.len", "frame.time_epoch"); got != want || want == "" {
		t.Errorf("ibcap -r --qp 0x12 -w: tshark reads\n%s\nwant what tshark picks from the original:\n%s", got, want)
	}

	// A filter expression from a file (-F) keeps what -f keeps (libpcap's
	// ip6, as tcpdump's, sees no VLAN-tagged frame).
	exprFile := filepath.Join(dir, "filter")
	if err := os.WriteFile(exprFile, []byte("# RoCEv2 over IPv6\nip6 and\n  udp port 4791\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	byFile, byFlag := filepath.Join(dir, "f.pcap"), filepath.Join(dir, "flag.pcap")
	for _, args := range [][]string{{"-F", exprFile, "-w", byFile}, {"-f", "ip6 and udp port 4791", "-w", byFlag}} {
		if _, stderr, err := ibcapOut(t, append([]string{"-r", bundled}, args...)...); err != nil {
			t.Fatalf("ibcap -r %v: %v\n%s", args, err, stderr)
		}
	}
	a, b := tsharkFields(t, byFile, "", "frame.len", "ipv6.dst"), tsharkFields(t, byFlag, "", "frame.len", "ipv6.dst")
	if a != b || a == "" || a != tsharkFields(t, bundled, "ipv6 and udp.port == 4791 and not vlan", "frame.len", "ipv6.dst") {
		t.Errorf("-F gives\n%s\n-f gives\n%s", a, b)
	}

	// From standard input, cut to a snap length: tshark finds every frame
	// with its length on the wire and at most 64 bytes of it.
	cut := filepath.Join(dir, "cut.pcap")
	cmd := exec.Command(ibcapBin, "-r", "-", "-s", "64", "-w", cut)
	in, err := os.Open(bundled)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd.Stdin = in
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ibcap -r - -s 64: %v\n%s", err, msg)
	}
	lens := tsharkFields(t, cut, "", "frame.len", "frame.cap_len")
	if want := tsharkFields(t, bundled, "", "frame.len"); strings.Count(lens, "\n") != strings.Count(want, "\n") {
		t.Errorf("ibcap -r - -s 64: %d frames, want %d", strings.Count(lens, "\n"), strings.Count(want, "\n"))
	}
	for _, l := range strings.Split(strings.TrimSpace(lens), "\n") {
		var wire, kept int
		if _, err := fmt.Sscanf(l, "%d\t%d", &wire, &kept); err != nil || kept != min(wire, 64) {
			t.Fatalf("ibcap -r - -s 64: frame of %q (frame.len, frame.cap_len)", l)
		}
	}

	erf := "../../testdata/pcaps/ib_native_erf.pcap"
	copied := filepath.Join(dir, "erf.pcap")
	if _, stderr, err := ibcapOut(t, "-r", erf, "-w", copied); err != nil {
		t.Fatalf("ibcap -r ERF -w: %v\n%s", err, stderr)
	}
	fields := []string{"frame.len", "frame.time_epoch", "erf.types.type", "infiniband.lrh.dlid", "infiniband.bth.psn"}
	if got, want := tsharkFields(t, copied, "", fields...), tsharkFields(t, erf, "", fields...); got != want {
		t.Errorf("ERF copy: tshark reads\n%s\nwant\n%s", got, want)
	}
}

// tsharkFields is what tshark prints of a file's frames (those filter
// keeps): the fields, a line per frame.
func tsharkFields(t *testing.T, path, filter string, fields ...string) string {
	t.Helper()
	testenv.MustHaveTool(t, "tshark")
	args := []string{"-r", path, "-T", "fields"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	return string(out)
}

// -z runs its command on each file rotation closes, as tcpdump's: with
// -G 1 over packets a second apart, every file but the last, each whole
// when the command sees it.
func TestPostRotateCommand(t *testing.T) {
	dir := t.TempDir()
	var frames []testcap.Frame
	for i, f := range bundledRoCE(t)[:5] {
		frames = append(frames, testcap.Frame{TsNs: int64(i+1) * 1e9, B: f})
	}
	in := testcap.WriteFrames(t, "seconds.pcap", frames)
	log := filepath.Join(dir, "closed.log")
	script := filepath.Join(dir, "post.sh")
	// The command counts the file's records as it finds it.
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $(tshark -r \"$1\" 2>/dev/null | wc -l)\" >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.MustHaveTool(t, "tshark")
	out := filepath.Join(dir, "r.pcap")
	if _, stderr, err := ibcapOut(t, "-r", in, "-G", "1", "-z", script, "-w", out); err != nil {
		t.Fatalf("ibcap -r -G 1 -z: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for i := range 4 {
		want += filepath.Join(dir, "r-0000"+strconv.Itoa(i)+".pcap") + " 1\n"
	}
	// The commands run side by side, as tcpdump's: in any order.
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	sort.Strings(got)
	if strings.Join(got, "\n")+"\n" != want {
		t.Errorf("-z ran on:\n%s\nwant every file but the last, each with its packet:\n%s", b, want)
	}
}

// -L lists a device's link types as tcpdump -L; -y picks one of them.
func TestLinkTypes(t *testing.T) {
	netdev := aNetdev(t)
	out, stderr, err := ibcapOut(t, "-L", "-i", netdev)
	if want := "Data link types for " + netdev + " (use option -y to set):\n  EN10MB (Ethernet)\n"; err != nil || out != want {
		t.Errorf("ibcap -L -i %s: %v: %q, want %q\n%s", netdev, err, out, want, stderr)
	}
	out, stderr, err = ibcapOut(t, "-L", "-i", "any")
	if err != nil || !strings.Contains(out, "LINUX_SLL2 (Linux cooked v2)") {
		t.Errorf("ibcap -L -i any: %v: %q\n%s", err, out, stderr)
	}
	_, stderr, err = ibcapOut(t, "-i", netdev, "-y", "INFINIBAND", "-w", filepath.Join(t.TempDir(), "x.pcap"))
	if err == nil || !strings.Contains(stderr, "offers EN10MB") {
		t.Errorf("-y INFINIBAND on %s: %v, want a refusal naming EN10MB:\n%s", netdev, err, stderr)
	}
}

// What cannot be is refused, naming what to do; ibdump's flags map to
// ibcap's or name its way.
func TestTcpdumpAndIbdumpMistakes(t *testing.T) {
	netdev := aNetdev(t)
	x := filepath.Join(t.TempDir(), "x.pcap")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-r", bundled, "-i", netdev}, "read a file or capture on a device; give one"},
		{[]string{"-r", bundled, "-Q", "in"}, "chosen by direction only live"},
		{[]string{"-r", bundled, "-y", "INFINIBAND"}, "a file's packets are in the link type it holds"},
		{[]string{"-i", netdev, "-Q", "sideways", "-w", x}, `-Q "sideways": want in, out or inout`},
		{[]string{"-r", bundled, "-z", "gzip", "-w", x}, "give -C or -G too"},
		{[]string{"-r", bundled, "-C", "1"}, "-C and -G start new files of -w FILE: give -w"},
		{[]string{"-i", netdev, "-G", "1"}, "-C and -G start new files of -w FILE: give -w"},
		{[]string{"-r", bundled, "-F", "/nonexistent/filter"}, "-F: open /nonexistent/filter"},
		{[]string{"-r", bundled, "-F", bundled, "udp"}, "and a filter expression"},
		{[]string{"-i", netdev, "-b", "12", "-w", x}, "4096 slots are -B 16384"},
		{[]string{"-i", netdev, "--mem-mode", "1000000", "-w", x}, "there is no memory mode"},
		{[]string{"-i", netdev, "--writer-thread", "1000", "-w", x}, "a goroutine of its own"},
		{[]string{"-i", netdev, "-o", x, "-w", x + "2"}, "-o is ibdump's alias of -w"},
		// Flags ibcap does not take say what it does instead.
		{[]string{"-i", netdev, "-w", x, "-s"}, "ibdump's -s, silent, is -q"},
		{[]string{"-i", netdev, "-w", x, "-j"}, "ibdump's -j, jumbo MTU, is not needed"},
		{[]string{"-i", netdev, "-w", x, "-I", "rx"}, "ibdump's -I (direction) is -Q"},
		{[]string{"-i", netdev, "-w", x, "--decap"}, "does not strip port-mirroring"},
		{[]string{"-i", netdev, "-w", x, "--erf", "1"}, "--format erf-pcap"},
		{[]string{"-i", netdev, "-w", x, "--ib-port", "2"}, "--port N"},
		{[]string{"-r", bundled, "-X"}, "tshark -x -r x.pcap"},
	} {
		_, stderr, err := ibcapOut(t, tc.args...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("ibcap %s: %v, want an error saying %q:\n%s", strings.Join(tc.args, " "), err, tc.want, stderr)
		}
	}
	// -w naming -r's file (here through a hard link) is refused before it
	// is truncated: the input is whole afterwards.
	in := filepath.Join(t.TempDir(), "in.pcap")
	orig, err := os.ReadFile(bundled)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	link := in + ".link"
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{in, link} {
		_, stderr, err := ibcapOut(t, "-r", in, "-w", w)
		if err == nil || !strings.Contains(stderr, "are the same file") {
			t.Errorf("ibcap -r %s -w %s: %v, want an error saying they are the same file:\n%s", in, w, err, stderr)
		}
		if b, _ := os.ReadFile(in); !bytes.Equal(b, orig) {
			t.Errorf("ibcap -r %s -w %s changed the input (%d bytes, was %d)", in, w, len(b), len(orig))
		}
	}
	// ibdump's -o is -w, and says so.
	out := filepath.Join(t.TempDir(), "o.pcap")
	_, stderr, err := ibcapOut(t, "-r", bundled, "-o", out)
	if err != nil || !strings.Contains(stderr, "-o "+out+" is ibcap -w "+out) || tsharkCount(t, out) != tsharkCount(t, bundled) {
		t.Errorf("ibcap -r -o: %v\n%s", err, stderr)
	}
}

// On an InfiniBand port -L lists ERF, the default, and INFINIBAND, which
// -y picks as --format ib247; the extcap dialog of the device offers its
// ports, its time stamp type and --lid.
func TestInfiniBandPortChoices(t *testing.T) {
	env := []string{capture.EnvSysfs + "=" + writeSysfs(t)}
	out, stderr, code := runIbcap(t, env, "-L", "-i", "mlx5_0")
	want := "Data link types for mlx5_0 (use option -y to set):\n  ERF (InfiniBand in ERF records, what Wireshark opens)\n  INFINIBAND (InfiniBand, LRH first (LINKTYPE_INFINIBAND 247))\n"
	if code != 0 || out != want {
		t.Errorf("ibcap -L -i mlx5_0: exit %d: %q, want %q\n%s", code, out, want, stderr)
	}
	ib := capture.Target{Name: "mlx5_0", Backend: capture.BackendVerbs, Port: capture.RDMAPort{Num: 1, LinkLayer: "InfiniBand"}}
	for _, tc := range []struct {
		y      string
		format capture.Format
		want   capture.Format
		err    string
	}{
		{"INFINIBAND", capture.FormatAuto, capture.FormatIB247, ""},
		{"erf", capture.FormatPcapNG, capture.FormatPcapNG, ""},
		{"INFINIBAND", capture.FormatPcapNG, 0, "-y INFINIBAND is --format ib247"},
		{"EN10MB", capture.FormatAuto, 0, "mlx5_0 offers ERF, INFINIBAND"},
	} {
		got, err := linkTypeFormat(&flags{linkType: tc.y}, ib, tc.format)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("-y %s with %v: %v, want %q", tc.y, tc.format, err, tc.err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("-y %s with %v: %v, %v; want %v", tc.y, tc.format, got, err, tc.want)
		}
	}

	out, stderr, code = runIbcap(t, env, "--extcap-config", "--extcap-interface", "ibcap-mlx5_0")
	for _, want := range []string{
		"arg {number=0}{call=--port}{display=RDMA port}{type=selector}",
		"value {arg=0}{value=1}{display=1: InfiniBand, ACTIVE, 100 Gb/sec (4X EDR)}{default=true}",
		"value {arg=2}{value=adapter}{display=adapter: the device's completion timestamps, converted to the host's clock}{default=true}",
		"{call=--filter}",
		"{call=--lid}",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--extcap-config of ibcap-mlx5_0: exit %d, no %q in:\n%s%s", code, want, out, stderr)
		}
	}
	if strings.Contains(out, "--no-promiscuous-mode") || strings.Contains(out, "--all") {
		t.Errorf("--extcap-config of an InfiniBand port offers Ethernet's options:\n%s", out)
	}
}

// -l, as tcpdump -l: reading a file (here a pipe still being written),
// each packet's line comes out as the packet is read, not in blocks at
// the end; live, that is the default.
func TestLineBuffered(t *testing.T) {
	b, err := os.ReadFile(bundled)
	if err != nil {
		t.Fatal(err)
	}
	// The file header and the first three records (little-endian pcap).
	const records = 3
	end := 24
	for range records {
		end += 16 + int(uint32(b[end+8])|uint32(b[end+9])<<8|uint32(b[end+10])<<16|uint32(b[end+11])<<24)
	}
	cmd := exec.Command(ibcapBin, "-r", "-", "-l", "-q")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := in.Write(b[:end]); err != nil {
		t.Fatal(err)
	}
	// The first lines go to the test, the rest nowhere.
	lines := make(chan string, records)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for n := 0; n < records && sc.Scan(); n++ {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	// The rest of the file stays unwritten until the three lines came.
	for i := 1; i <= records; i++ {
		select {
		case l, ok := <-lines:
			if !ok || !strings.HasPrefix(strings.TrimLeft(l, " "), strconv.Itoa(i)+" ") {
				t.Fatalf("line %d: %q (ok %v)", i, l, ok)
			}
		case <-time.After(testenv.WaitDeadline):
			t.Fatalf("ibcap -r - -l: no line %d while the pipe is open, %d packets written to it", i, records)
		}
	}
	if _, err := in.Write(b[end:]); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("ibcap -r - -l: %v", err)
	}
}

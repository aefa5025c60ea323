package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// These tests run the built ibcap on the fake RDMA devices of the
// libibverbs test double (internal/fakeverbs): IBSCOPE_LIBIBVERBS names the
// double, IBSCOPE_SYSFS its sysfs tree. The double feeds the sniffer QP
// with a pcap's frames and knows when each arrived, so the files can be
// checked byte for byte and to the ns.

// verbsCase is a double configured with a feed of packets.
type verbsCase struct {
	env  *fakeverbs.Env
	want [][]byte // the frames fed, in order
	ts   []int64  // their pcap timestamps
}

func newVerbsCase(t *testing.T, n, payload int, native bool, cfg fakeverbs.Config) *verbsCase {
	t.Helper()
	return newVerbsCaseGap(t, n, payload, native, 10_000_000, cfg)
}

// newVerbsCaseGap is newVerbsCase with packets gapNs apart.
func newVerbsCaseGap(t *testing.T, n, payload int, native bool, gapNs int64, cfg fakeverbs.Config) *verbsCase {
	t.Helper()
	pkts := testcap.Stream(n, 1, 2, 0x11, 100, payload, testcap.BaseNs, func(int) int64 { return gapNs })
	cfg.Feed = testcap.Write(t, "feed.pcap", native, pkts)
	v := &verbsCase{env: fakeverbs.New(t, cfg)}
	var frames []decode.Frame
	var err error
	if v.want, frames, err = testcap.FileRecords(cfg.Feed); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		v.ts = append(v.ts, f.TsNs)
	}
	requireVerbsIbcap(t, v.env)
	return v
}

// requireVerbsIbcap skips (fails under CI=true) when ibcap does not take
// its RDMA devices from IBSCOPE_SYSFS, so the double cannot be reached.
// The first test asks ibcap -D; the others reuse its answer.
func requireVerbsIbcap(t *testing.T, env *fakeverbs.Env) {
	t.Helper()
	sysfsProbe.Do(func() {
		cmd := exec.Command(ibcapBin, "-D")
		cmd.Env = env.Environ()
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), "fake_0:1") {
			sysfsProbe.why = "ibcap -D does not list the fake devices of IBSCOPE_SYSFS:\n" + string(out)
		}
	})
	if sysfsProbe.why == "" {
		return
	}
	testenv.SkipOrFail(t, "%s", sysfsProbe.why)
}

var sysfsProbe struct {
	sync.Once
	why string
}

func (v *verbsCase) command(args ...string) *exec.Cmd {
	cmd := exec.Command(ibcapBin, args...)
	cmd.Env = v.env.Environ()
	return cmd
}

// start starts ibcap and waits until it is capturing.
func (v *verbsCase) start(t *testing.T, args ...string) *ibcapProc {
	t.Helper()
	return startCmd(t, v.command(args...))
}

// run runs ibcap to its end and returns its stderr and error.
func (v *verbsCase) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := v.command(args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stderr.String(), err
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("ibcap %v did not exit:\n%s", args, stderr.String())
		return "", nil
	}
}

// check reads the capture at path and compares it with the frames fed but
// those at the indexes in dropped: bytes, order, wire lengths (snap bytes
// kept when snap > 0) and timestamps (the double's truth, see
// internal/fakeverbs/c/fakeverbs.c).
func (v *verbsCase) check(t *testing.T, path string, snap int, dropped []int) {
	t.Helper()
	recs, frames := readPackets(t, path)
	v.checkRecords(t, recs, frames, 0, snap, dropped)
}

// readPackets reads the packets of the capture at path: the records, but
// for ERF records (native IB) the packet inside.
func readPackets(t *testing.T, path string) ([][]byte, []decode.Frame) {
	t.Helper()
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, frames, err := testcap.Records(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.LinkType() == decode.LinkTypeERF {
		for i, rec := range recs {
			// A 16-byte ERF header (wire length in bytes 14-15), the packet,
			// padding to 8 bytes (these tests do not cut IB packets with -s).
			if len(rec) < 16 {
				t.Fatalf("%s: ERF record %d of %d bytes", path, i, len(rec))
			}
			wlen := int(binary.BigEndian.Uint16(rec[14:16]))
			if len(rec) < 16+wlen {
				t.Fatalf("%s: ERF record %d of %d bytes holds no %d-byte packet", path, i, len(rec), wlen)
			}
			recs[i] = rec[16 : 16+wlen]
			frames[i].CapLen, frames[i].WireLen = wlen, wlen
		}
	}
	return recs, frames
}

// checkRecords compares records with the frames fed from index first on.
func (v *verbsCase) checkRecords(t *testing.T, recs [][]byte, frames []decode.Frame, first, snap int, dropped []int) {
	t.Helper()
	skip := map[int]bool{}
	for _, d := range dropped {
		skip[d] = true
	}
	log := v.env.ReadLog(t)
	j, i0 := 0, first // i0: the frame fed that record 0 holds
	for i := first; i < len(v.want) && j < len(recs); i++ {
		if skip[i] {
			continue
		}
		want := v.want[i]
		if snap > 0 && len(want) > snap {
			want = want[:snap]
		}
		if string(recs[j]) != string(want) || frames[j].WireLen != len(v.want[i]) {
			t.Fatalf("record %d (frame %d fed): %d of %d bytes\n got %x\nwant %x", j, i, len(recs[j]), frames[j].WireLen, recs[j], want)
		}
		// Truth: the feed started at FeedStartNs, frame i arrived ts[i]-ts[0]
		// later. The spacing is exact (ERF's 2^-32 s fractions add 1 ns);
		// the offset is the clock anchor's error.
		truth := log.FeedStartNs + v.ts[i] - v.ts[0]
		if j == 0 {
			i0 = i
			if off := frames[0].TsNs - truth; off > 20e6 || off < -20e6 {
				t.Errorf("record 0 at %d, the device stamped it at %d", frames[0].TsNs, truth)
			}
		} else if d := (frames[j].TsNs - frames[0].TsNs) - (v.ts[i] - v.ts[i0]); d > 1 || d < -1 {
			t.Fatalf("record %d is %d ns after record 0, the device says %d", j, frames[j].TsNs-frames[0].TsNs, v.ts[i]-v.ts[i0])
		}
		j++
	}
	if j != len(recs) {
		t.Fatalf("%d records, only %d of the frames fed from %d on match", len(recs), j, first)
	}
}

// The RoCE port and the native IB port, stopped by SIGINT or SIGTERM right
// away: the drain brings every frame fed into the file, with the device's
// timestamps, also in pcapng and with -s.
func TestIbcapVerbsCapture(t *testing.T) {
	for _, c := range []struct {
		name   string
		dev    string
		native bool
		sig    os.Signal
		args   []string
		snap   int
	}{
		{"RoCE SIGINT", "fake_1", false, os.Interrupt, nil, 0},
		{"RoCE SIGTERM pcapng -s 64", "fake_1", false, syscall.SIGTERM, []string{"--format", "pcapng", "-s", "64"}, 64},
		{"IB SIGINT", "fake_0", true, os.Interrupt, nil, 0},
		{"IB pcapng", "fake_0", true, syscall.SIGTERM, []string{"--format", "pcapng"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The 48-bit device clock wraps 600 ms after the open, within
			// the 990 ms the feed spans.
			v := newVerbsCase(t, 100, 200, c.native, fakeverbs.Config{MaskBits: 48, ClockOrigin: 1<<48 - 600_000_000})
			out := filepath.Join(t.TempDir(), "out.cap")
			p := v.start(t, append([]string{"-i", c.dev, "-w", out}, c.args...)...)
			p.cmd.Process.Signal(c.sig)
			if err := p.wait(t); err != nil {
				t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
			}
			v.check(t, out, c.snap, nil)
			if !strings.Contains(p.stderr.String(), fmt.Sprintf("%d packets written", len(v.want))) ||
				!strings.Contains(p.stderr.String(), "0 packets dropped by the device (out_of_buffer)") {
				t.Errorf("report:\n%s", p.stderr.String())
			}
			v.env.NoViolations(t)
			if n := tsharkCount(t, out); n != len(v.want) {
				t.Errorf("tshark reads %d frames, want %d", n, len(v.want))
			}
		})
	}
}

// -c stops after the count; -C and -W rotate through a ring of files that
// keeps the newest frames, contiguous and in order.
func TestIbcapVerbsCountAndRotation(t *testing.T) {
	v := newVerbsCase(t, 600, 4000, false, fakeverbs.Config{})
	dir := t.TempDir()
	msg, err := v.run(t, "-i", "fake_1", "-w", filepath.Join(dir, "count.pcap"), "-c", "10")
	if err != nil {
		t.Fatalf("-c 10: %v\n%s", err, msg)
	}
	recs, frames := readPackets(t, filepath.Join(dir, "count.pcap"))
	if len(recs) != 10 {
		t.Fatalf("-c 10 wrote %d records", len(recs))
	}
	v.checkRecords(t, recs, frames, 0, 0, nil)

	base := filepath.Join(dir, "ring.pcap")
	p := v.start(t, "-i", "fake_1", "-w", base, "-C", "1", "-W", "2")
	stopIbcap(t, p)
	files, _ := filepath.Glob(filepath.Join(dir, "ring-*.pcap"))
	if len(files) != 2 {
		t.Fatalf("-W 2 left %v\n%s", files, p.stderr.String())
	}
	// The names are reused in a ring: the older file is the one whose
	// first packet is older.
	r0, f0 := readPackets(t, files[0])
	r1, f1 := readPackets(t, files[1])
	if len(f0) == 0 || len(f1) == 0 {
		t.Fatalf("an empty file: %d and %d records", len(f0), len(f1))
	}
	if f1[0].TsNs < f0[0].TsNs {
		r0, f0, r1, f1 = r1, f1, r0, f0
	}
	all, allFrames := append(r0, r1...), append(f0, f1...)
	// The kept files end with the last frame fed.
	v.checkRecords(t, all, allFrames, len(v.want)-len(all), 0, nil)
	v.env.NoViolations(t)
}

// SIGKILL while frames arrive (paced, 2 ms apart over 5 s) leaves a file of whole
// records: the frames fed first, in order, as far as the periodic flush
// brought them to disk.
func TestIbcapVerbsSIGKILL(t *testing.T) {
	v := newVerbsCaseGap(t, 2500, 200, false, 2_000_000, fakeverbs.Config{Pace: true})
	out := filepath.Join(t.TempDir(), "out.pcap")
	p := v.start(t, "-i", "fake_1", "-w", out)
	waitRecords(t, out, 1) // killed while the feed runs, whenever that is
	p.cmd.Process.Kill()
	p.wait(t)
	recs, frames := readPackets(t, out)
	if len(recs) == 0 {
		t.Error("no frame in the file")
	} else if len(recs) == len(v.want) {
		t.Logf("all %d frames in the file: this slow machine killed ibcap after the feed ended", len(recs))
	}
	v.checkRecords(t, recs, frames, 0, 0, nil)
}

// --telemetry samples the fake port's sysfs counters beside the capture.
func TestIbcapVerbsTelemetry(t *testing.T) {
	v := newVerbsCase(t, 20, 200, false, fakeverbs.Config{})
	out := filepath.Join(t.TempDir(), "out.pcap")
	p := v.start(t, "-i", "fake_1", "-w", out, "--telemetry", "50ms")
	testenv.WaitFor(t, 0, "two telemetry samples", func() bool {
		b, _ := os.ReadFile(out + capture.TelemetrySuffix)
		return bytes.Count(b, []byte("\n1,")) > 0 && bytes.Count(b, []byte("\n2,")) > 0
	})
	stopIbcap(t, p)
	v.check(t, out, 0, nil)
	tel, err := os.ReadFile(out + capture.TelemetrySuffix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tel), "out_of_buffer") || !strings.Contains(string(tel), "port_xmit_wait") {
		t.Errorf("telemetry lacks the port's counters:\n%.600s", tel)
	}
}

// A burst the ring cannot hold: the device drops the excess and counts it
// in out_of_buffer; ibcap reports exactly that many device drops and the
// file holds every other frame.
func TestIbcapVerbsBurstDrops(t *testing.T) {
	v := newVerbsCase(t, 700, 200, false, fakeverbs.Config{MaxQPWR: 256, Faults: []string{"burst_at 10 500"}})
	out := filepath.Join(t.TempDir(), "out.pcap")
	p := v.start(t, "-i", "fake_1", "-w", out)
	stopIbcap(t, p)
	drops := v.env.ReadLog(t).Drops
	if len(drops) == 0 {
		t.Fatal("the burst dropped nothing")
	}
	v.check(t, out, 0, drops)
	if want := fmt.Sprintf("%d packets dropped by the device (out_of_buffer)", len(drops)); !strings.Contains(p.stderr.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, p.stderr.String())
	}
	v.env.NoViolations(t)
}

// The same burst in a pcapng file: its closing Interface Statistics Block
// holds the device's drops in isb_ifdrop, as many as the report gives.
// capinfos cannot show them: of a statistics block it prints only "Number
// of stat entries" (Wireshark 4.0's wtap_get_debug_if_descr, and still so
// upstream); tshark's pcapng file dissector (-X read_format:"MIME Files
// Format") reads every option, as Wireshark's Capture File Properties do.
func TestIbcapVerbsDropsInStatisticsBlock(t *testing.T) {
	v := newVerbsCase(t, 700, 200, false, fakeverbs.Config{MaxQPWR: 256, Faults: []string{"burst_at 10 500"}})
	out := filepath.Join(t.TempDir(), "out.pcapng")
	p := v.start(t, "-i", "fake_1", "-w", out)
	stopIbcap(t, p)
	drops := len(v.env.ReadLog(t).Drops)
	if drops == 0 {
		t.Fatal("the burst dropped nothing")
	}
	if want := fmt.Sprintf("%d packets dropped by the device (out_of_buffer)", drops); !strings.Contains(p.stderr.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, p.stderr.String())
	}
	isb := statisticsBlocks(t, out)
	// The interface is described from sysfs: the device, port and link layer.
	if info, err := exec.Command("capinfos", out).CombinedOutput(); err != nil || !strings.Contains(string(info), "Description = RDMA device fake_1 port 1, Ethernet link layer") {
		t.Errorf("capinfos %s: %v\n%s", out, err, info)
	}
	if len(isb) != 1 {
		t.Fatalf("%d statistics blocks, want the one at close: %q", len(isb), isb)
	}
	// received, interface drops, OS drops, delivered to ibcap.
	recvd, ifDrop, osDrop, deliv := isb[0][0], isb[0][1], isb[0][2], isb[0][3]
	if ifDrop != fmt.Sprint(drops) || osDrop != "0" || deliv != fmt.Sprint(700-drops) || recvd != deliv {
		t.Errorf("statistics block: received %s, interface drops %s, OS drops %s, delivered %s; want %d, %d, 0, %d",
			recvd, ifDrop, osDrop, deliv, 700-drops, drops, 700-drops)
	}
}

// statisticsBlocks are the counts of each Interface Statistics Block in
// the pcapng file at path, as tshark's pcapng file dissector reads them:
// isb_ifrecv, isb_ifdrop, isb_osdrop and isb_usrdeliv, "" when absent.
func statisticsBlocks(t *testing.T, path string) [][4]string {
	t.Helper()
	testenv.MustHaveTool(t, "tshark")
	out, err := exec.Command("tshark", "-r", path, "-X", "read_format:MIME Files Format", "-T", "fields", "-E", "occurrence=a", "-E", "separator=/t",
		"-e", "pcapng.options.option.data.interface.received", "-e", "pcapng.options.option.data.interface.dropped",
		"-e", "pcapng.options.option.data.interface.dropped_by_os", "-e", "pcapng.options.option.data.interface.delivered_to_user").Output()
	if err != nil {
		t.Fatalf("tshark -r %s as a pcapng file: %v", path, err)
	}
	// The whole file is one "frame"; each field lists its values, one
	// per block, comma-separated.
	var cols [4][]string
	for i, f := range strings.Split(strings.TrimRight(string(out), "\n"), "\t") {
		if i < 4 && f != "" {
			cols[i] = strings.Split(f, ",")
		}
	}
	var blocks [][4]string
	for i := range cols[0] {
		var b [4]string
		for c := range cols {
			if i < len(cols[c]) {
				b[c] = cols[c][i]
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// Each fault ends the capture with one line naming it and a non-zero exit;
// the file is flushed and holds the frames that came before.
func TestIbcapVerbsFaults(t *testing.T) {
	for _, c := range fakeverbs.CaptureFaults {
		t.Run(c.Fault, func(t *testing.T) {
			v := newVerbsCase(t, 20, 200, false, fakeverbs.Config{Faults: []string{c.Fault}})
			out := filepath.Join(t.TempDir(), "out.pcap")
			msg, err := v.run(t, "-i", "fake_1", "-w", out)
			if err == nil {
				t.Fatalf("ibcap exited 0:\n%s", msg)
			}
			if n := strings.Count(msg, c.Says); n != 1 {
				t.Errorf("%q said %d times:\n%s", c.Says, n, msg)
			}
			recs, frames := readPackets(t, out)
			if len(recs) != c.Before {
				t.Fatalf("the file holds %d records, want the %d before the fault", len(recs), c.Before)
			}
			v.checkRecords(t, recs, frames, 0, 0, nil)
			v.env.NoViolations(t)
		})
	}
}

// Errors of the library and the device reach the user in one line.
func TestIbcapVerbsOpenErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault string
		dev   string
		env   string
		says  string
	}{
		{"no library", "", "fake_1", "IBSCOPE_LIBIBVERBS=/nonexistent/libibverbs.so.1", "libibverbs"},
		{"no port", "", "fake_1:2", "", "no port 2 (ports: 1)"},
		{"no flow permission", "fail create_flow 1", "fake_1", "", "needs CAP_NET_RAW and CAP_NET_ADMIN"},
		{"no memory", "fail reg_mr 12", "fake_0", "", "register ring memory: cannot allocate memory"},
		{"missing function", "", "fake_1", "", "ibv_wc_status_str"},
		{"device without provider", "", "fake_9", "", "libibverbs does not list it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := fakeverbs.Config{}
			switch c.name {
			case "missing function":
				cfg.MissingSymbol = "ibv_wc_status_str"
			case "device without provider":
				cfg.Devices = append(fakeverbs.DefaultDevices(), fakeverbs.Device{Name: "fake_9", NotInLibrary: true,
					Ports: fakeverbs.DefaultDevices()[1].Ports})
			}
			if c.fault != "" {
				cfg.Faults = []string{c.fault}
			}
			v := newVerbsCase(t, 3, 64, false, cfg)
			out := filepath.Join(t.TempDir(), "out.pcap")
			cmd := v.command("-i", c.dev, "-w", out)
			if c.env != "" {
				cmd.Env = append(cmd.Env, c.env)
			}
			msg, err := cmd.CombinedOutput()
			t.Logf("%s", msg)
			if err == nil || !strings.Contains(string(msg), c.says) {
				t.Errorf("%v, want %q:\n%s", err, c.says, msg)
			}
			if strings.Count(strings.TrimSpace(string(msg)), "\n") != 0 {
				t.Errorf("more than one line:\n%s", msg)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a capture file was created")
			}
			v.env.NoViolations(t)
		})
	}
}

// -D lists the fake devices' ports from IBSCOPE_SYSFS.
func TestIbcapVerbsListDevices(t *testing.T) {
	v := newVerbsCase(t, 1, 64, false, fakeverbs.Config{})
	out, err := v.command("-D").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"fake_0:1", "InfiniBand", "ACTIVE", "100 Gb/sec (4X EDR)", "0x1a", "fake_1:1", "Ethernet", "fakeeth1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-D lacks %q:\n%s", want, out)
		}
	}
}

// An Ethernet port's sniffer flow has no kernel filter: ibcap keeps the
// RoCE frames of the bundled mixed capture and counts the others as not
// RoCE, or keeps every frame with --all.
func TestIbcapVerbsRoCEOnly(t *testing.T) {
	all, err := readRecords(t, bundled)
	if err != nil {
		t.Fatal(err)
	}
	env := fakeverbs.New(t, fakeverbs.Config{Feed: bundled})
	requireVerbsIbcap(t, env)
	for _, c := range []struct {
		args []string
		want [][]byte
	}{
		{nil, bundledRoCE(t)},
		{[]string{"--all"}, all},
	} {
		out := filepath.Join(t.TempDir(), "out.pcap")
		cmd := exec.Command(ibcapBin, append([]string{"-i", "fake_1", "-w", out}, c.args...)...)
		cmd.Env = env.Environ()
		p := startCmd(t, cmd)
		p.cmd.Process.Signal(os.Interrupt)
		if err := p.wait(t); err != nil {
			t.Fatalf("ibcap %v: %v\n%s", c.args, err, p.stderr.String())
		}
		got, err := readRecords(t, out)
		if err != nil {
			t.Fatal(err)
		}
		sameFrames(t, got, c.want)
	}
	env.NoViolations(t)
}

// -y is honoured when printing too, as tcpdump's: the packets reach the
// printer in the link type it picks, which the first line names, and the
// lines are the packets' either way.
func TestIbcapVerbsPrintLinkType(t *testing.T) {
	v := newVerbsCase(t, 10, 200, true, fakeverbs.Config{})
	var lines []string
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "ibcap: capturing on fake_0 port 1, link type 197 (ERF), printing each packet"},
		{[]string{"-y", "INFINIBAND"}, "ibcap: capturing on fake_0 port 1, link type 247 (INFINIBAND), printing each packet"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.WaitDeadline)
		cmd := exec.CommandContext(ctx, ibcapBin, append([]string{"-i", "fake_0", "-c", "10"}, tc.args...)...)
		cmd.Env = v.env.Environ()
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("ibcap %q: %v, want %q on stderr:\n%s", tc.args, err, tc.want, stderr.String())
		}
		if n := strings.Count(stdout.String(), "RC_RDMA_WRITE"); n != 10 {
			t.Errorf("ibcap %q: %d packets printed, want 10:\n%s", tc.args, n, stdout.String())
		}
		// The times are the device's clock at each run: the rest must agree.
		lines = append(lines, regexp.MustCompile(`(?m)^( +\d+) \S+`).ReplaceAllString(stdout.String(), "$1"))
	}
	if lines[0] != lines[1] {
		t.Errorf("the lines differ with -y INFINIBAND:\n%s\nwithout:\n%s", lines[1], lines[0])
	}
}

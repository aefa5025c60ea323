package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
	"github.com/ibscope/ibscope/internal/txring"
)

// TestLiveCaptureRates is the benchmark bench/capture.sh runs: ibcap and
// tcpdump capture side by side on one veth (snap length 128, RoCE filter)
// while ibscope's transmit ring sends RoCE frames at increasing rates; for
// each rate it prints frames sent, captured and lost by each, and their CPU
// time per packet. It prints figures, it asserts none.
func TestLiveCaptureRates(t *testing.T) {
	if os.Getenv("IBSCOPE_LIVE_BENCH") == "" {
		t.Skip("a benchmark, not a test: set IBSCOPE_LIVE_BENCH=1 (bench/capture.sh does)")
	}
	ns := newNetns(t)
	testenv.MustHaveTool(t, "tcpdump")
	var frames [][]byte
	for _, f := range bundledRoCE(t) {
		// Untagged frames only: tcpdump's filter and ours then agree exactly
		// on what to keep, whatever the kernel does with VLAN tags.
		if f[12] != 0x81 {
			frames = append(frames, f)
		}
	}
	tx := ns.OpenTx(t)
	defer tx.Close()
	// Measure the sender alone first: no rate above it can be asked for.
	if _, err := tx.Send(frames, 50_000, 0); err != nil { // warm up
		t.Fatal(err)
	}
	maxRate, err := tx.Send(frames, 200_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("bench capture sender_max_pps %.0f\n", maxRate)
	// What each costs with no traffic (ring set-up and teardown, idle
	// polls), for reading the per-packet figures below, which include it:
	// a single idle sample on a shared machine is too noisy to subtract.
	ibIdle, tdIdle := idleCPU(t, ns)
	fmt.Printf("bench capture idle_cpu_ms ibcap %.1f tcpdump %.1f (start, 1.5 s without traffic, stop)\n",
		float64(ibIdle)/1e6, float64(tdIdle)/1e6)
	ibcapBest, tcpdumpBest := 0.0, 0.0
	ibcapFirstLoss, tcpdumpFirstLoss := 0.0, 0.0
	for _, rate := range []float64{50_000, 100_000, 200_000, 400_000, 600_000, 800_000, 0} {
		n := max(100_000, int(rate*2))
		dir := t.TempDir()
		ib, td := startBoth(t, ns, dir)
		dropped0 := ns.RxDropped(t)
		ibRun0, tdRun0 := runNs(ib.cmd.Process.Pid), runNs(td.cmd.Process.Pid)
		achieved, err := tx.Send(frames, n, rate)
		if err != nil {
			t.Fatal(err)
		}
		// Longer than libpcap's 1 s TPACKET_V3 block timeout, so tcpdump's
		// last partial block reaches it before the signal: what it loses is
		// then what its ring could not hold, not what it leaves at exit.
		time.Sleep(1500 * time.Millisecond)
		ibRun, tdRun := runNs(ib.cmd.Process.Pid)-ibRun0, runNs(td.cmd.Process.Pid)-tdRun0
		stopBoth(t, ib, td)
		ibGot, _ := readRecords(t, filepath.Join(dir, "ibcap.pcap"))
		tdGot, _ := readRecords(t, filepath.Join(dir, "tcpdump.pcap"))
		// Frames the kernel dropped on the veth's receive backlog never
		// reached either capture: they are the path's loss, not theirs.
		pathLost := ns.RxDropped(t) - dropped0
		ibCPU, ibUser := cpuNs(ib.cmd.ProcessState)
		tdCPU, tdUser := cpuNs(td.cmd.ProcessState)
		label := fmt.Sprintf("%.0f", rate)
		if rate == 0 {
			label = "max"
		}
		fmt.Printf("bench capture rate_pps %s achieved_pps %.0f sent %d dropped_before_capture %d ibcap_captured %d ibcap_lost %d ibcap_cpu_ns_per_pkt %.0f (user %.0f, traffic %.0f) tcpdump_captured %d tcpdump_lost %d tcpdump_cpu_ns_per_pkt %.0f (user %.0f, traffic %.0f)\n",
			label, achieved, n, pathLost, len(ibGot), n-len(ibGot), perPkt(ibCPU, len(ibGot)), perPkt(ibUser, len(ibGot)), perPkt(ibRun, len(ibGot)),
			len(tdGot), n-len(tdGot), perPkt(tdCPU, len(tdGot)), perPkt(tdUser, len(tdGot)), perPkt(tdRun, len(tdGot)))
		maxRate = max(maxRate, achieved)
		// Loss-free means nothing lost at this rate and at every lower one;
		// a run where the path itself dropped frames says nothing either way.
		if pathLost > 0 {
			continue
		}
		if len(ibGot) == n && ibcapFirstLoss == 0 {
			ibcapBest = max(ibcapBest, achieved)
		} else if len(ibGot) != n && ibcapFirstLoss == 0 {
			ibcapFirstLoss = achieved
		}
		if len(tdGot) == n && tcpdumpFirstLoss == 0 {
			tcpdumpBest = max(tcpdumpBest, achieved)
		} else if len(tdGot) != n && tcpdumpFirstLoss == 0 {
			tcpdumpFirstLoss = achieved
		}
	}
	exitLoss(t, ns, tx, frames)
	fmt.Printf("bench capture ibcap_lossfree_pps %.0f tcpdump_lossfree_pps %.0f (highest achieved rate with nothing lost there and below; the sender tops out at %.0f)\n",
		ibcapBest, tcpdumpBest, maxRate)
	fmt.Printf("bench capture ibcap_first_loss_pps %.0f tcpdump_first_loss_pps %.0f (0: lost nothing at any rate)\n", ibcapFirstLoss, tcpdumpFirstLoss)
}

// cpuNs is a finished process's CPU time in ns: user plus system, and user.
func cpuNs(ps *os.ProcessState) (total, user int64) {
	if ps == nil {
		return 0, 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), ru.Utime.Nano()
}

func perPkt(ns int64, pkts int) float64 { return float64(ns) / float64(max(1, pkts)) }

// runNs is the time process pid's threads have run so far, ns (the first
// field of each thread's schedstat), 0 when it cannot be read. Taken around
// the traffic alone, it leaves out the start (ibcap's ring, 64 MB by
// default, is allocated and cleared then) and the stop, which the whole
// process's CPU time per packet includes.
func runNs(pid int) int64 {
	paths, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	return sum
}

// idleCPU runs each capture for 1.5 s without traffic and returns its CPU time.
func idleCPU(t *testing.T, ns *testnetns.NS) (ibcap, tcpdump int64) {
	dir := t.TempDir()
	ib, td := startBoth(t, ns, dir)
	time.Sleep(1500 * time.Millisecond)
	stopBoth(t, ib, td)
	ibcap, _ = cpuNs(ib.cmd.ProcessState)
	tcpdump, _ = cpuNs(td.cmd.ProcessState)
	return ibcap, tcpdump
}

// exitLoss stops both captures 100 ms after the last frame, as a user's
// Ctrl-C might: what each has not written by then is lost at exit.
func exitLoss(t *testing.T, ns *testnetns.NS, tx *txring.Ring, frames [][]byte) {
	const n, rate = 50_000, 100_000
	dir := t.TempDir()
	ib, td := startBoth(t, ns, dir)
	if _, err := tx.Send(frames, n, rate); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	stopBoth(t, ib, td)
	ibGot, _ := readRecords(t, filepath.Join(dir, "ibcap.pcap"))
	tdGot, _ := readRecords(t, filepath.Join(dir, "tcpdump.pcap"))
	fmt.Printf("bench capture sigint_100ms_after_last sent %d ibcap_captured %d ibcap_lost %d tcpdump_captured %d tcpdump_lost %d\n",
		n, len(ibGot), n-len(ibGot), len(tdGot), n-len(tdGot))
}

package capture

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testcap"
)

// BenchmarkRunVerbsPcap is the verbs sniffer's receive loop at full speed:
// the libibverbs test double (internal/fakeverbs) fills posted buffers with
// 128-byte RoCE frames as fast as they are posted and polled, and Run
// writes them, snap length 128, to pcap files on tmpfs (/dev/shm; two of
// 64 MB in a ring, -C 64 -W 2, so memory stays bounded). What it measures
// includes the double's own work (a 128-byte copy and a completion per
// packet), which a real device does in hardware.
func BenchmarkRunVerbsPcap(b *testing.B) { benchVerbs(b, true) }

//
// Besides ns per packet (the wall clock), it reports the CPU time per
// packet of the receive loop (loop-cpu-ns/pkt: the thread Run runs on,
// which the benchmark locks) and of the whole process (cpu-ns/pkt: the
// loop, the writer's goroutine, which does the file system's work, and the
// runtime). The loop sustains the rate when its CPU time per packet is
// below the ns per packet it is asked for, 100 for 10 M packets/s, and the
// writer's goroutine keeps up on a second core.

// BenchmarkRunVerbsDiscard is the same loop writing to io.Discard: the
// receive path without the file system.
func BenchmarkRunVerbsDiscard(b *testing.B) { benchVerbs(b, false) }

func benchVerbs(b *testing.B, toFile bool) {
	pkts := testcap.Stream(1000, 1, 2, 0x11, 100, 70, testcap.BaseNs, func(int) int64 { return 100 })
	env := fakeverbs.New(b, fakeverbs.Config{Feed: testcap.Write(b, "feed.pcap", false, pkts), FeedLoops: -1})
	env.Setenv(b)
	src, err := Open("fake_1", &Config{SysfsRoot: env.Sysfs, SnapLenBytes: 128})
	if err != nil {
		env.RequireLoaded(b)
		b.Fatal(err)
	}
	defer src.Close()
	wc := WriterConfig{Path: "-", Stdout: io.Discard, Format: FormatPcap, LinkType: src.LinkType(), SnapLenBytes: 128}
	if toFile {
		dir := "/dev/shm"
		if _, err := os.Stat(dir); err != nil {
			dir = b.TempDir()
		}
		if dir, err = os.MkdirTemp(dir, "ibscope-bench-"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		wc.Path, wc.RotateBytes, wc.MaxFiles = filepath.Join(dir, "verbs.pcap"), 64_000_000, 2
	}
	w, err := NewWriter(wc)
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	loop0, all0 := cpuNs(b, unix.RUSAGE_THREAD), cpuNs(b, unix.RUSAGE_SELF)
	rep, err := Run(context.Background(), src, w, RunOptions{Count: uint64(b.N)})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	loop, all := cpuNs(b, unix.RUSAGE_THREAD)-loop0, cpuNs(b, unix.RUSAGE_SELF)-all0
	b.StopTimer()
	b.ReportMetric(float64(rep.Written)/b.Elapsed().Seconds(), "pkt/s")
	b.ReportMetric(float64(loop)/float64(rep.Written), "loop-cpu-ns/pkt")
	b.ReportMetric(float64(all)/float64(rep.Written), "cpu-ns/pkt")
	env.NoViolations(b)
}

// cpuNs is the user and system CPU time of who (RUSAGE_SELF or
// RUSAGE_THREAD) in ns.
func cpuNs(b *testing.B, who int) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

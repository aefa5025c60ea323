package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/capfile"
	"github.com/spf13/pflag"
)

// jobs is -j/--jobs: how many cores read a capture. A regular file's
// frames are decoded (CRCs checked) on that many goroutines ahead of the
// analysis, which takes them in the capture's order: the results are the
// same whatever N (capfile.StreamOptions.Workers). -j 1 keeps one core;
// without -j, one core where reading ahead does not pay, else the cores
// not already busy (workers). Only the commands
// that read captures take it (addJobsFlag), not the fleet view's (status,
// nics, links); given before the command's name, as "ibanalyze -j 1
// flows", it is still the command's.
var jobs jobsFlag

// jobsFlag is -j's value: n once given.
type jobsFlag struct {
	n   int
	set bool
}

func (j *jobsFlag) String() string { return strconv.Itoa(j.n) }
func (j *jobsFlag) Type() string   { return "int" }

func (j *jobsFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	j.n, j.set = int(max(math.MinInt32, min(n, math.MaxInt32))), true
	return nil
}

// maxJobs bounds -j: more goroutines than this only cost memory (each
// file being read holds up to 4N+4 batches, 64 at most, of 256 frames, 0.5 to 1.5 MB each, or
// cut in pieces of the records that start in 128 KiB, up to about 4 MB each).
const maxJobs = 256

// addJobsFlag adds -j to the flags of a command that reads captures.
func addJobsFlag(f *pflag.FlagSet) {
	f.VarP(&jobs, "jobs", "j",
		"decode on `N` cores (default: the cores not busy, GOMAXPROCS less the 1-minute load average or the tasks running if fewer, at least 1, for decode's lines, the exports but Parquet, and the analyses and decode --summary of a pcap or pcapng file of 8 MB or more, which is read in pieces on every core, or of gzip, bzip2 or zstd captures over 1 MB, each decompressed on a core of its own; else 1, as for correlate and a Parquet export); the output is the same")
}

// readAheadPays reports whether reading paths ahead pays on the cores not
// busy: one of them is cut in pieces (capfile.CutInPieces) or decompressed
// on a core of its own (capfile.DecompressedAhead). The analyses and decode
// --summary then take those cores by default.
func readAheadPays(paths []string) bool {
	for _, p := range paths {
		if capfile.CutInPieces(p) || capfile.DecompressedAhead(p) {
			return true
		}
	}
	return false
}

// workers is -j, checked. Without -j it is the cores not busy where
// reading ahead pays (pays), else one. It pays where most of the work
// per frame can leave the caller's goroutine: decode's lines are
// formatted on the workers (bench/cores.sh, 2M frames, 2 idle cores: -j 2
// took 0.66x the wall time of -j 1 at 1.2x its CPU); and a large pcap or
// pcapng file is cut in pieces on every core, and a compressed capture is
// decompressed on a core of its own (readAheadPays): -j 2 took 0.60x to
// 0.75x the wall time of -j 1 for flows, ipd and decode --summary at 1.10x
// to 1.33x the CPU, and 0.69x to 0.87x on the same capture's .gz or .zst
// (1.2x to 1.4x the CPU; 0.75x for flows on it cut in 8 gzipped files).
// Where the one cut is most of the work (smaller files, standard input)
// -j 2 took 0.95x to 1.0x the wall time at 1.5x to 1.7x the CPU: one core
// does as well for less.
func workers(pays bool) (int, error) {
	if !jobs.set {
		if !pays {
			return 1, nil
		}
		return idleCores(runtime.GOMAXPROCS(0), busyCores()), nil
	}
	if jobs.n < 1 || jobs.n > maxJobs {
		return 0, fmt.Errorf("-j %d: want 1 to %d cores", jobs.n, maxJobs)
	}
	return jobs.n, nil
}

// idleCores is how many of cores are not busy when busy are, rounded, at
// least 1. Reading ahead on several cores costs CPU (1.1x to 1.5x that of
// one core, on two: bench/cores.sh): it pays in wall time where cores are
// idle, and costs it where the others' work already fills them (-j 2 took
// 1.1x to 1.4x the wall time of -j 1 at load 7 on 2 cores).
func idleCores(cores int, busy float64) int {
	idle := math.Round(float64(cores) - busy)
	return int(max(1, min(idle, float64(cores))))
}

// busyCores is how many cores the other processes keep busy: the
// 1-minute load average, or the tasks running now (but this one) when
// fewer, as after an ibanalyze that just ran on every core, whose load
// the average still holds. 0 where /proc/loadavg cannot be read.
func busyCores() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	return parseBusy(string(b))
}

// parseBusy reads /proc/loadavg's "0.52 0.40 0.35 2/180 1234": the
// 1-minute load average and the tasks running; 0 for what it cannot read.
func parseBusy(loadavg string) float64 {
	f := strings.Fields(loadavg)
	if len(f) < 4 {
		return 0
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || !(load >= 0) || math.IsInf(load, 0) {
		return 0
	}
	running, _, _ := strings.Cut(f[3], "/")
	if n, err := strconv.Atoi(running); err == nil && n >= 1 {
		load = min(load, float64(n-1)) // this process is one of them
	}
	return load
}

package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// jobs is -j/--jobs: how many cores read a capture. A regular file's
// frames are decoded (CRCs checked) on that many goroutines ahead of the
// analysis, which takes them in the capture's order: the results are the
// same whatever N (capfile.StreamOptions.Workers). -j 1 keeps one core;
// without -j, the cores not already busy (idleCores). Only the commands
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
// file being read holds up to 4N+4 batches, 64 at most, of 256 frames, 0.5 to 1.5 MB each).
const maxJobs = 256

// addJobsFlag adds -j to the flags of a command that reads captures.
func addJobsFlag(f *pflag.FlagSet) {
	f.VarP(&jobs, "jobs", "j",
		"decode on `N` cores (default: those not busy, GOMAXPROCS less the 1-minute load average, at least 1); 1 keeps one; the output is the same")
}

// workers is -j, checked, or without -j the cores not busy.
func workers() (int, error) {
	if !jobs.set {
		return idleCores(runtime.GOMAXPROCS(0), loadAverage()), nil
	}
	if jobs.n < 1 || jobs.n > maxJobs {
		return 0, fmt.Errorf("-j %d: want 1 to %d cores", jobs.n, maxJobs)
	}
	return jobs.n, nil
}

// idleCores is how many of cores are not busy at a load average of load,
// rounded, at least 1. Reading ahead on several cores costs CPU (1.3x to
// 1.5x that of one core, on two: bench/cores.sh): it pays in wall time
// where cores are idle, and costs it where the others' work already fills
// them (-j 2 took 1.1x to 1.4x the wall time of -j 1 at load 7 on 2 cores).
func idleCores(cores int, load float64) int {
	idle := math.Round(float64(cores) - load)
	return int(max(1, min(idle, float64(cores))))
}

// loadAverage is the 1-minute load average (/proc/loadavg), 0 where it
// cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), " ")
	load, err := strconv.ParseFloat(first, 64)
	if err != nil || load < 0 || math.IsNaN(load) || math.IsInf(load, 0) {
		return 0
	}
	return load
}

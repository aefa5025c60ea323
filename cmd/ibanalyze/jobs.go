package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"
)

// jobs is -j/--jobs: how many cores read a capture. A regular file's
// frames are decoded (CRCs checked) on that many goroutines ahead of the
// analysis, which takes them in the capture's order: the results are the
// same whatever N (capfile.StreamOptions.Workers). -j 1 keeps one core.
// Only the commands that read captures take it (addJobsFlag), not the
// fleet view's (status, nics, links); given before the command's name,
// as "ibanalyze -j 1 flows", it is still the command's.
var jobs = runtime.GOMAXPROCS(0)

// maxJobs bounds -j: more goroutines than this only cost memory (each
// file being read holds up to 4N+4 batches, 64 at most, of 256 frames, 0.5 to 1.5 MB each).
const maxJobs = 256

// addJobsFlag adds -j to the flags of a command that reads captures.
func addJobsFlag(f *pflag.FlagSet) {
	f.IntVarP(&jobs, "jobs", "j", jobs,
		"decode on `N` cores (default: all, as GOMAXPROCS); 1 keeps one; the output is the same")
}

// workers is -j, checked.
func workers() (int, error) {
	if jobs < 1 || jobs > maxJobs {
		return 0, fmt.Errorf("-j %d: want 1 to %d cores", jobs, maxJobs)
	}
	return jobs, nil
}

package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/ibscope/ibscope/internal/outfile"
)

// cpuProfileEnv names the file a run writes its CPU profile to, when set:
// scripts/pgo.sh (make pgo) merges the profiles of the commands the
// benchmarks time into default.pgo, with which go build optimises
// ibanalyze (profile-guided optimisation: the hot calls inlined, the
// analysis' Add called directly).
const cpuProfileEnv = "IBANALYZE_CPUPROFILE"

// startCPUProfile starts the profile if cpuProfileEnv asks for one and
// returns what stops it (nothing to stop otherwise). The file is written
// by outfile's rule, as every output: under a temporary name until the
// profile is whole, never through a symbolic link.
func startCPUProfile() (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := outfile.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Abort()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ibanalyze: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			fmt.Fprintf(os.Stderr, "ibanalyze: %s: %v\n", cpuProfileEnv, err)
		}
	}
}

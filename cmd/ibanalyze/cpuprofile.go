package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names the file a run writes its CPU profile to, when set:
// scripts/pgo.sh (make pgo) merges the profiles of the commands the
// benchmarks time into default.pgo, with which go build optimises
// ibanalyze (profile-guided optimisation: the hot calls inlined, the
// analysis' Add called directly).
const cpuProfileEnv = "IBANALYZE_CPUPROFILE"

// startCPUProfile starts the profile if cpuProfileEnv asks for one and
// returns what stops it (nothing to stop otherwise).
func startCPUProfile() (stop func()) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ibanalyze: %s: %v\n", cpuProfileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

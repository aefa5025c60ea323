package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// The garbage collector's first cycle comes at a heap of 4 MB, the
// runtime's minimum goal, which flows and ipd reach within their first
// milliseconds (the 1 MB read buffer, the start-up's 1.8 MB), and it was
// most of what they paid for collecting at all: 4 to 6 ms of CPU on a
// 500,000-frame capture (a tenth of flows'), for starting the mark workers'
// threads and scanning the globals, 5 MB of them gopacket/layers' enum
// tables, mostly pages never written and first touched by that scan. A
// short run then never collects again. So the first goal is
// startGCPercent/100 times the minimum (32 MB), and once that first cycle
// has run the collector goes back to the default (GOGC=100): a run that
// grows past 32 MB is collected as before, and the most the start adds to
// any run's memory is those 28 MB.
const startGCPercent = 800

// startGC sets the first cycle's goal, unless GOGC says what the user
// wants.
func startGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(startGCPercent)
	// The sentinel is unreachable from the start: the first cycle finds it
	// and queues its finalizer. It holds a pointer, so that it is not one
	// of the tiny allocations the runtime packs together (whose finalizers
	// may never run).
	s := &gcSentinel{}
	runtime.SetFinalizer(s, func(*gcSentinel) { debug.SetGCPercent(100) })
}

type gcSentinel struct{ _ *byte }

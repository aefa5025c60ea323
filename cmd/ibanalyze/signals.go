package main

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/outfile"
)

// SIGINT and SIGTERM. In a command that reads through an analysis (ipd,
// flows, credits with --rate, buffer, tick) the first one stops the
// reading, as tcpdump -r does: the packets read are analysed, the totals
// printed, and the exit status is what it would be had the input ended
// there (0 when all went well). A second signal, or the first in a command
// that cannot stop early (decode, export, correlate, ipd --compare, credits
// inferring the byte time), ends the process at once with status 128+signal
// (130 for SIGINT), removing the partial outputs first.
var (
	// readingStopped is set by stopReading: analyze.Run reads no more
	// (RunOptions.Stop).
	readingStopped = new(atomic.Bool)
	stopOnce       sync.Once
	// stopsEarly says the running command reports on what it read when a
	// signal stops the reading (stopOnSignal).
	stopsEarly atomic.Bool
	// stdinPipe is the write end of the pipe that stands in for standard
	// input (stdinThroughPipe); stopReading closes it.
	stdinPipe atomic.Pointer[os.File]
)

// handleSignals handles SIGINT and SIGTERM until stop is called.
func handleSignals() (stop func()) {
	c := make(chan os.Signal, 2)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var sig os.Signal
		select {
		case sig = <-c:
		case <-done:
			return
		}
		if stopsEarly.Load() {
			printWarning(fmt.Sprintf("%v: reading stopped; the report on what was read follows (again to quit at once)", sig))
			stopReading()
			select {
			case sig = <-c:
			case <-done:
				return
			}
		}
		removeTemporaries()
		if outfile.RemovePending() > 0 {
			printWarning(fmt.Sprintf("%v: stopped; partial output removed", sig))
		} else {
			printWarning(fmt.Sprintf("%v: stopped", sig))
		}
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}

// stopReading ends the reading of the command's input: on the first signal,
// or when the output fails (nothing more would be seen of it).
func stopReading() {
	stopOnce.Do(func() {
		readingStopped.Store(true)
		if w := stdinPipe.Load(); w != nil {
			w.Close() // a read waiting for more of standard input ends
		}
	})
}

// stopOnSignal makes the first SIGINT or SIGTERM stop the reading of paths
// rather than the process (stopReading). Call it before opening them: when
// standard input is among them, it is read through a pipe that the signal
// closes, so that the totals come out even while no more data arrives.
func stopOnSignal(paths ...[]string) error {
	stopsEarly.Store(true)
	for _, p := range paths {
		if slices.Contains(p, capfile.Stdin) {
			return stdinThroughPipe()
		}
	}
	return nil
}

// stdinThroughPipe puts the read end of a pipe in os.Stdin (where the
// decoder opens "-") and copies standard input into it. A read of a pipe,
// socket or terminal waits for data and no signal ends it; closing our
// pipe does: the decoder then sees the end of its input after the last
// record copied. A regular file is read as it is.
func stdinThroughPipe() error {
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	in := os.Stdin
	os.Stdin = r
	stdinPipe.Store(w)
	go func() {
		copyStdin(w, in) // to the end of standard input, or until the signal closes w
		w.Close()
	}()
	return nil
}

package outfile

import (
	"os"
	"os/signal"
	"syscall"
)

// RemoveOnSignal makes SIGINT and SIGTERM remove the temporary files of the
// outputs being written (RemovePending), tell report what was removed, and
// exit with the usual 128+signal status, so that an interrupted command
// leaves no partial file behind. Commands set it in main; the returned
// function undoes it.
func RemoveOnSignal(report func(sig os.Signal, removedFiles int)) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-c:
			report(sig, RemovePending())
			os.Exit(128 + int(sig.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}

// AwaitSignalExit returns unless RemovePending has run: a signal handler is
// then ending the process with 128+signal, and AwaitSignalExit waits for
// that. A command calls it once its work has returned, before it reports
// an error or exits: its own exit raced the handler's, and a run the signal
// stopped, its next Create failing with "interrupted", printed that error
// and could end with status 1 instead of 130 (an ibsim run on a loaded CI
// machine did).
func AwaitSignalExit() {
	pending.Lock()
	stopped := pending.stopped
	pending.Unlock()
	if stopped {
		handlerExits()
	}
}

// handlerExits waits for the signal handler's exit; a test replaces it.
var handlerExits = func() { select {} }

package testenv

import (
	"testing"
	"time"
)

// WaitDeadline is how long a test waits for something that takes a
// moment on an idle machine: generous, so that a loaded machine (two
// cores shared by several builds) does not fail the test; a test that
// passes never waits for it all.
const WaitDeadline = 60 * time.Second

// WaitFor polls cond until it is true, and fails the test saying what it
// waited for if it is still false after timeout (WaitDeadline when 0).
// It returns as soon as cond holds: never a fixed sleep.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		if timeout == 0 {
			timeout = WaitDeadline
		}
		t.Fatalf("waited %v for %s", timeout, what)
	}
}

// Poll polls cond until it is true or timeout (WaitDeadline when 0) has
// passed, and reports whether it became true.
func Poll(timeout time.Duration, cond func() bool) bool {
	if timeout == 0 {
		timeout = WaitDeadline
	}
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
	return true
}

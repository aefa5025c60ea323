// Package testenv holds, in one place, the rules for what a test needs from
// the machine it runs on: root, a command, a small file system that fills
// up, and what happens without them. A test that cannot run here skips,
// saying why; under CI (CI=true) it fails instead, because CI installs
// everything (make deps) and runs as root, so a skip there would hide a
// test that never ran. It also waits for conditions, since no test may
// depend on how busy the machine is.
//
// It imports nothing of ibscope, so that every package's tests, decode's
// included, can use it.
package testenv

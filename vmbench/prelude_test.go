package vmbench

import "fmt"

// scriptPrelude opens every case's guest script: it makes and enters the
// case's folder dir ($D), and defines what the cases share: fail, which
// ends the script with the kernel's last words; waitfor, which retries a
// condition; counters, which saves rxe's hw_counters to a file.
func scriptPrelude(dir string) string {
	return fmt.Sprintf(`set -u
D=%s
mkdir -p $D && cd $D
fail() { echo "FAIL: $*"; echo "kernel log:"; dmesg | tail -20; exit 1; }
# Whatever way the script ends, nothing it started outlives it.
trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
waitfor() { # waitfor WHAT COMMAND...: retry up to 60 s
  what=$1; shift
  for i in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "timed out waiting for $what"
}
counters() { grep -H . /sys/class/infiniband/rxe[01]/ports/1/hw_counters/* > $1; }
`, dir)
}

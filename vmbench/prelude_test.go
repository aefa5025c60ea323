package vmbench

import "fmt"

// scriptPrelude opens every case's guest script: it makes and enters the
// case's folder dir ($D), and defines what the cases share: fail, which
// ends the script with the kernel's last words; waitfor, which retries a
// condition; counters, which saves rxe's hw_counters to a file; gid, which
// finds a device's GID index by its value.
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
gid() { # gid DEV PATTERN: the index of the device's RoCE v2 GID matching PATTERN, read now
  for i in $(seq 0 15); do
    read -r v < /sys/class/infiniband/$1/ports/1/gids/$i || continue
    case $v in $2) echo $i; return 0;; esac
  done
  echo "no GID $2 on $1:"; grep -H . /sys/class/infiniband/$1/ports/1/gids/[0-9] >&2
  return 1
}
`, dir)
}

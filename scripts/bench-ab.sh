#!/usr/bin/env bash
# bench-ab.sh REF: a paired speed comparison of ibanalyze at REF (A) against the work tree (B:
# HEAD, plus any uncommitted change, which the header says). It builds both as `make build` does
# (bench/lib/build.bash), then runs each command of the list below on a generated RoCEv2 capture
# ALTERNATELY, A, B, A, B..., so that a change in the machine's load falls on both sides alike,
# and prints per command the medians of CPU time (user+sys) and of wall time for A and B, the
# ratio B/A of the medians and the spread of the per-pair ratios (min-max over the pairs). On a
# shared machine wall time is noise; CPU time is the figure to read. Each run is one
# `hyperfine -N --runs 1` (bench/lib/timeone.bash).
#
#	make bench-ab REF=a7c6421
#	BENCH_RUNS=5 BENCH_ONLY=decode scripts/bench-ab.sh HEAD~1
#
# Settings (environment):
#	BENCH_RUNS     runs of each side per command (9)
#	BENCH_FRAMES   frames in the capture (500000), written once by testdata/gen into BENCH_DIR
#	BENCH_DIR      where the capture is cached (/tmp/ibscope-bench)
#	BENCH_ONLY     an extended regexp: only the commands whose name matches
#	BENCH_ARGS     ibanalyze arguments put before each command's ("-j 1" when unset: one core,
#	               whose CPU time is steadier than that of the hand-over between cores, which
#	               the default -j brings to a file this large; BENCH_ARGS= for the commands'
#	               own defaults); both builds must know them
#	BENCH_GO=1     also the Go benchmarks of BENCH_GO_PKGS (./decode/ ./capfile/) matching
#	               BENCH_GO_BENCH (.), each test binary run once per round, A and B alternately,
#	               BENCH_GO_COUNT rounds (6), compared by benchstat
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${1:?usage: scripts/bench-ab.sh REF (a commit to compare the work tree against)}
GO=${GO:-go}
RUNS=${BENCH_RUNS:-9}
N=${BENCH_FRAMES:-500000}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
ONLY=${BENCH_ONLY:-}
ARGS=${BENCH_ARGS--j 1}
GO_PKGS=${BENCH_GO_PKGS:-./decode/ ./capfile/}
GO_BENCH=${BENCH_GO_BENCH:-.}
GO_COUNT=${BENCH_GO_COUNT:-6}
# benchstat at the version the module proxy serves here.
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
for v in "$RUNS" "$N" "$GO_COUNT"; do
  [[ $v =~ ^[1-9][0-9]{0,7}$ ]] || { echo "bench-ab: $v: want a whole number from 1 to 99999999" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "bench-ab: needs hyperfine (apt-get install hyperfine; make bench-ab installs it)" >&2; exit 2; }
refsha=$(git rev-parse --verify --short "$REF^{commit}") || { echo "bench-ab: $REF: not a commit" >&2; exit 2; }
headsha=$(git rev-parse --short HEAD)
dirty=""
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=" + uncommitted changes"

tmp=$(mktemp -d /tmp/bench-ab.XXXXXX)
trap 'git worktree remove --force "$tmp/a" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/a" "$refsha" >/dev/null 2>&1
echo "bench-ab: building A = $REF ($refsha) and B = HEAD ($headsha)$dirty"
source bench/lib/build.bash
(cd "$tmp/a" && build_ibanalyze "$tmp/A/")
build_ibanalyze "$tmp/B/"

mkdir -p "$dir"
f=$dir/rocev2-$N.pcap
# Written aside and renamed: another run (or bench/*.sh) may be reading the same cache.
if [ ! -s "$f" ]; then
  $GO run ./testdata/gen -bench-rocev2 "$N" -o "$tmp/gen.pcap"
  mv "$tmp/gen.pcap" "$f"
fi
cat "$f" >/dev/null # into the page cache before the first run

# The commands, as name and ibanalyze's arguments; OUT is a file in the run's own folder.
cmds=(
  "flows" "flows $f"
  "ipd" "ipd $f"
  "decode-summary" "decode --summary $f"
  "decode-summary-no-crc" "decode --summary --no-crc $f"
  "export-parquet" "export $f -o OUT.parquet"
)

source bench/lib/timeone.bash

# once SIDE ARGS: runs side SIDE's ibanalyze once and prints "wall cpu" in seconds.
once() {
  local side=$1 args=${2//OUT/$tmp/out/$1}
  rm -rf "$tmp/out/$side" && mkdir -p "$tmp/out/$side"
  # shellcheck disable=SC2086 # args are words without spaces
  time_one "$tmp/$side/ibanalyze" $ARGS $args
}

echo "bench-ab: $N frames ($(stat -c %s "$f") bytes, $f), $RUNS runs a side, A and B alternating${ARGS:+, ibanalyze $ARGS}; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %10s %10s %8s %15s   %9s %9s %7s %15s\n' command "A cpu s" "B cpu s" "B/A" "pairs min-max" "A wall s" "B wall s" "B/A" "pairs min-max"
for ((c = 0; c < ${#cmds[@]}; c += 2)); do
  name=${cmds[c]}
  [ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || continue
  : >"$tmp/pairs"
  for ((i = 0; i < RUNS; i++)); do
    a=$(once A "${cmds[c + 1]}")
    b=$(once B "${cmds[c + 1]}")
    echo "$a $b" >>"$tmp/pairs"
  done
  # Columns of pairs: A wall, A cpu, B wall, B cpu.
  awk -v name="$name" '
    function median(v, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
      return n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2
    }
    {
      n++; aw[n] = $1; ac[n] = $2; bw[n] = $3; bc[n] = $4
      rc = $2 > 0 ? $4 / $2 : 0; rw = $1 > 0 ? $3 / $1 : 0
      if (n == 1 || rc < rcmin) rcmin = rc; if (n == 1 || rc > rcmax) rcmax = rc
      if (n == 1 || rw < rwmin) rwmin = rw; if (n == 1 || rw > rwmax) rwmax = rw
    }
    END {
      mac = median(ac, n); mbc = median(bc, n); maw = median(aw, n); mbw = median(bw, n)
      printf "%-22s %10.3f %10.3f %7.3fx %7.3f-%-7.3f   %9.3f %9.3f %6.3fx %7.3f-%-7.3f\n", name, mac, mbc, (mac > 0 ? mbc / mac : 0), rcmin, rcmax, maw, mbw, (maw > 0 ? mbw / maw : 0), rwmin, rwmax
    }' "$tmp/pairs"
done
echo "bench-ab: load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

[ "${BENCH_GO:-}" = 1 ] || exit 0
# The Go benchmarks: one test binary per package and side, built once, run from the package's
# folder (its testdata) one round at a time, A then B.
pkgs=()
for p in $GO_PKGS; do
  if [ -d "$tmp/a/$p" ] && [ -d "$p" ]; then
    pkgs+=("$p")
  else
    echo "bench-ab: $p is not in both trees, left out"
  fi
done
for p in "${pkgs[@]}"; do
  t=${p//[^A-Za-z0-9]/_}
  (cd "$tmp/a" && $GO test -c -o "$tmp/A/$t.test" "$p")
  $GO test -c -o "$tmp/B/$t.test" "$p"
done
: >"$tmp/A.bench"
: >"$tmp/B.bench"
for ((i = 0; i < GO_COUNT; i++)); do
  for p in "${pkgs[@]}"; do
    t=${p//[^A-Za-z0-9]/_}
    (cd "$tmp/a/$p" && "$tmp/A/$t.test" -test.run '^$' -test.bench "$GO_BENCH" -test.benchmem) >>"$tmp/A.bench"
    (cd "$p" && "$tmp/B/$t.test" -test.run '^$' -test.bench "$GO_BENCH" -test.benchmem) >>"$tmp/B.bench"
  done
done
echo "bench-ab: Go benchmarks, $GO_COUNT rounds, A = $REF ($refsha), B = HEAD ($headsha)$dirty"
(cd "$tmp" && $GO run "$BENCHSTAT" A=A.bench B=B.bench)

#!/usr/bin/env bash
# A rotated capture against the one file it was cut from: the 2-million-frame RoCEv2 capture
# analyze.sh writes, cut by editcap into 8 files (as `ibcap -C` leaves them), the same 8 gzipped
# (`ibcap -C ... -z gzip`), into 200 files of 10000 frames (1.8 MB: under the 8 MB a file needs to be
# cut in pieces) and into 1000 files of 2000 frames (`ibcap -G` over a long run).
# ibanalyze flows on each at -j 1 and -j N (N: every core, nproc), BENCH_RUNS runs a side (default
# 5), alternating: the median wall and CPU (user+sys) seconds and the largest peak RSS. A set read
# file after file should cost what the one file costs; memory should not grow with the files.
# BENCH_BIN names an ibanalyze built elsewhere (another commit's) to measure instead of the tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
timesbyj=$(cat bench/lib/timesbyj.awk)
N=2000000
RUNS=${BENCH_RUNS:-5}
J=${BENCH_JOBS:-$(nproc)}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
bin=${BENCH_BIN:-bin/ibanalyze}
source bench/lib/build.bash
[ -n "${BENCH_BIN:-}" ] || build_ibanalyze bin/
f="$dir/rocev2-$N.pcap"
[ -s "$f" ] || go run ./testdata/gen -bench-rocev2 "$N" -o "$f"
# cut_set NAME FRAMES: the capture cut in files of FRAMES frames under $dir/NAME, written once.
cut_set() {
  local d="$dir/$1"
  if [ ! -f "$d/done" ]; then
    rm -rf "$d" && mkdir -p "$d"
    editcap -F nsecpcap -c "$2" "$f" "$d/r.pcap"
    touch "$d/done"
  fi
}
cut_set rotated8 250000
cut_set rotated200 10000
cut_set rotated1000 2000
if [ ! -f "$dir/rotated8gz/done" ]; then
  rm -rf "$dir/rotated8gz" && mkdir -p "$dir/rotated8gz"
  for p in "$dir"/rotated8/r_*.pcap; do gzip -1 -c "$p" >"$dir/rotated8gz/$(basename "$p").gz"; done
  touch "$dir/rotated8gz/done"
fi

echo "rotated: $bin on $f, cut in 8 files, the 8 gzipped, cut in 200 and in 1000 files; ibanalyze flows, -j 1 and -j $J, $RUNS runs each alternating; load average $(cut -d' ' -f1-3 /proc/loadavg)"
times="$dir/rotated-times"
for set in one rotated8 rotated8gz rotated200 rotated1000; do
  if [ "$set" = one ]; then
    files=("$f")
  else
    files=("$dir/$set"/r_*)
  fi
  : >"$times"
  for _ in $(seq "$RUNS"); do
    for j in 1 "$J"; do
      if ! /usr/bin/time -f "$j %e %U %S %M" -o "$dir/time" "$bin" -j "$j" flows "${files[@]}" >/dev/null 2>"$dir/err"; then
        echo "rotated: ibanalyze -j $j flows ($set) failed:" >&2
        cat "$dir/err" >&2
        exit 1
      fi
      cat "$dir/time" >>"$times"
    done
  done
  awk -v set="$set" -v n="${#files[@]}" -v j="$J" "$timesbyj"'
    END {
      printf "rotated: flows %-11s %4d files: -j 1: %.2f s wall, %.2f s CPU, %d KiB; -j %d: %.2f s wall, %.2f s CPU, %d KiB\n",
        set, n, median(wall[1]), median(cpu[1]), rss[1], j, median(wall[j]), median(cpu[j]), rss[j]
    }' "$times"
done
echo "rotated: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

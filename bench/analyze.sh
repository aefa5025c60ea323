#!/usr/bin/env bash
# ibanalyze ipd and flows against tshark on a 2-million-frame RoCEv2 capture (RC RDMA WRITE,
# 128-byte packets, ACKs, CNPs; written by testdata/gen). Prints frames/s, peak RSS and the
# wall-time ratio against `tshark -T fields -e frame.time_epoch -e infiniband.bth.destqp
# -e infiniband.bth.psn`; then peak RSS on a 100x smaller capture of the same traffic, to
# show memory does not grow with packets. Go benchmarks (BenchmarkIPD, BenchmarkFlows)
# run under `make bench` too.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_FRAMES:-2000000}
SMALL=$((N / 100))
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
source bench/lib/build.bash
build_ibanalyze bin/
for n in "$N" "$SMALL"; do
  f="$dir/rocev2-$n.pcap"
  [ -s "$f" ] || go run ./testdata/gen -bench-rocev2 "$n" -o "$f"
done
big="$dir/rocev2-$N.pcap"
small="$dir/rocev2-$SMALL.pcap"

# wall seconds (best of 3), CPU seconds (user+sys, least of 3) and peak RSS (KiB, largest
# of 3) of a command. CPU time is steadier than wall time on a shared machine.
measure() {
  local best="" cpu="" rss=0
  for _ in 1 2 3; do
    if ! /usr/bin/time -f '%e %U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err"; then
      echo "analyze: $* failed:" >&2
      cat "$dir/err" >&2
      echo fail
      return
    fi
    read -r s u k m < "$dir/time"
    c=$(awk "BEGIN{print $u + $k}")
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
    if [ -z "$cpu" ] || awk "BEGIN{exit !($c < $cpu)}"; then cpu=$c; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$best $cpu $rss"
}

/usr/bin/time -f '%e %U %S' -o "$dir/time" tshark -r "$big" -T fields -e frame.time_epoch -e infiniband.bth.destqp -e infiniband.bth.psn >/dev/null 2>&1
read -r ts tu tk < "$dir/time"
tc=$(awk "BEGIN{print $tu + $tk}")
mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$big")/1e6}")
awk -v f="$big" -v n="$N" -v mb="$mb" -v t="$ts" -v c="$tc" 'BEGIN{
  printf "analyze: capture %s: %d frames, %s MB; tshark -T fields (time, destqp, psn): %.1f s wall = %.3f Mframes/s, %.1f s CPU\n", f, n, mb, t, n/t/1e6, c
}'

for args in "ipd" "ipd --phases" "ipd --by link" "flows" "flows --no-crc"; do
  # shellcheck disable=SC2086
  read -r sec cpu rss < <(measure bin/ibanalyze $args "$big")
  # shellcheck disable=SC2086
  read -r small_sec _ rss_small < <(measure bin/ibanalyze $args "$small")
  [ "$sec" != fail ] && [ "$small_sec" != fail ] || exit 1
  awk -v a="$args" -v n="$N" -v s="$sec" -v c="$cpu" -v r="$rss" -v t="$ts" -v tc="$tc" -v rs="$rss_small" -v sm="$SMALL" 'BEGIN{
    printf "analyze: ibanalyze %-15s %.2f s wall = %.2f Mframes/s, %.0fx tshark; %.2f s CPU = %.2f Mframes/s, %.0fx tshark; peak RSS %d KiB (%d KiB on %d frames)\n", a, s, n/s/1e6, t/s, c, n/c/1e6, tc/c, r, rs, sm
  }'
done

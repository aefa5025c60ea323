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
go build -o bin/ ./cmd/ibanalyze
for n in "$N" "$SMALL"; do
  f="$dir/rocev2-$n.pcap"
  [ -s "$f" ] || go run ./testdata/gen -bench-rocev2 "$n" -o "$f"
done
big="$dir/rocev2-$N.pcap"
small="$dir/rocev2-$SMALL.pcap"

# seconds (best of 3) and peak RSS (KiB, largest of 3) of a command
measure() {
  local best="" rss=0
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>&1 || true
    read -r s m < "$dir/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$best $rss"
}

t0=$(date +%s.%N)
tshark -r "$big" -T fields -e frame.time_epoch -e infiniband.bth.destqp -e infiniband.bth.psn >/dev/null 2>&1
ts=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$big")/1e6}")
echo "analyze: capture $big: $N frames, $mb MB; tshark -T fields (time, destqp, psn): $ts s = $(awk "BEGIN{printf \"%.3f\", $N/$ts/1e6}") Mframes/s"

for args in "ipd" "ipd --phases" "ipd --by link" "flows" "flows --no-crc"; do
  # shellcheck disable=SC2086
  read -r sec rss < <(measure bin/ibanalyze $args "$big")
  # shellcheck disable=SC2086
  read -r _ rss_small < <(measure bin/ibanalyze $args "$small")
  awk -v a="$args" -v n="$N" -v s="$sec" -v r="$rss" -v t="$ts" -v rs="$rss_small" -v sm="$SMALL" 'BEGIN{
    printf "analyze: ibanalyze %-15s %.2f s = %.2f Mframes/s, %.0fx tshark; peak RSS %d KiB (%d KiB on %d frames)\n", a, s, n/s/1e6, t/s, r, rs, sm
  }'
done

#!/usr/bin/env bash
# Decode fast path against tshark on the same files: a 2-million-frame RoCEv2 capture and a
# 2-million-frame native IB (ERF) capture. Prints frames/s, MB/s, peak RSS and the wall-time
# ratio against `tshark -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn`.
# Allocations per frame come from the Go benchmarks (BenchmarkDecode*, BenchmarkReadFile).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_FRAMES:-2000000}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
go build -o bin/ ./cmd/ibanalyze
for kind in rocev2 ib; do
  f="$dir/$kind-$N.pcap"
  [ -s "$f" ] || go run ./testdata/gen -bench-$kind "$N" -o "$f"
done

# seconds and peak RSS (KiB) of a command, best of 3 for the wall time
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

for kind in rocev2 ib; do
  f="$dir/$kind-$N.pcap"
  mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$f")/1e6}")
  read -r fast rss_fast < <(measure bin/ibanalyze decode --summary --no-crc "$f")
  read -r crc rss_crc < <(measure bin/ibanalyze decode --summary "$f")
  t0=$(date +%s.%N)
  tshark -r "$f" -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn >/dev/null 2>&1
  ts=$(awk "BEGIN{print $(date +%s.%N) - $t0}")
  awk -v k="$kind" -v n="$N" -v mb="$mb" -v a="$fast" -v b="$crc" -v t="$ts" -v r1="$rss_fast" -v r2="$rss_crc" 'BEGIN{
    printf "decode %-6s %d frames, %s MB: fast path %.2f s = %.2f Mframes/s, %.0f MB/s, peak RSS %d KiB\n", k, n, mb, a, n/a/1e6, mb/a, r1
    printf "decode %-6s with ICRC/VCRC checks: %.2f s = %.2f Mframes/s, peak RSS %d KiB\n", k, b, n/b/1e6, r2
    printf "decode %-6s tshark -T fields (opcode, destqp, psn): %.1f s = %.3f Mframes/s; ibscope is %.0fx faster (%.0fx with CRC checks)\n", k, t, n/t/1e6, t/a, t/b
  }'
done

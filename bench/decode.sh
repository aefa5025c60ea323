#!/usr/bin/env bash
# Decode fast path against tshark on the same files: a 2-million-frame RoCEv2 capture and a
# 2-million-frame native IB (ERF) capture. Prints frames/s and MB/s on one core, peak RSS, allocations per frame and the wall-time
# ratio against `tshark -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn`.
# Allocations per frame: BenchmarkReadFile (capfile package) reading the same file, one iteration per frame.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_FRAMES:-2000000}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
source bench/lib/build.bash
build_ibanalyze bin/
for kind in rocev2 ib; do
  f="$dir/$kind-$N.pcap"
  [ -s "$f" ] || go run ./testdata/gen -bench-$kind "$N" -o "$f"
done

# measure CMD...: sets secs (best wall time of 3, from bash's microsecond clock) and rss (peak
# KiB); a failing command stops the script.
measure() {
  local t0 s m
  secs="" rss=0
  for _ in 1 2 3; do
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$dir/time" "$@" >/dev/null 2>"$dir/stderr" || { cat "$dir/stderr" >&2; echo "failed: $*" >&2; exit 1; }
    s=$(awk "BEGIN{print $EPOCHREALTIME - $t0}")
    read -r m < "$dir/time"
    if [ -z "$secs" ] || awk "BEGIN{exit !($s < $secs)}"; then secs=$s; fi
    if [ "$m" -gt "$rss" ]; then rss=$m; fi
  done
}

for kind in rocev2 ib; do
  f="$dir/$kind-$N.pcap"
  mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$f")/1e6}")
  # One core: the decoder runs on one goroutine; GOMAXPROCS=1 keeps the runtime on one too.
  measure env GOMAXPROCS=1 bin/ibanalyze decode --summary --no-crc "$f"; fast=$secs rss_fast=$rss
  measure env GOMAXPROCS=1 bin/ibanalyze decode --summary "$f"; crc=$secs rss_crc=$rss
  # Allocations per frame over the whole file: one benchmark iteration is one frame.
  allocs=$(IBSCOPE_BENCH_FILE="$f" go test -run '^$' -bench '^BenchmarkReadFile$/^crc=on$' -benchmem -benchtime="${N}x" ./capfile/ |
    awk '/allocs\/op/{for (i = 2; i <= NF; i++) if ($i == "allocs/op") print $(i-1)}')
  t0=$EPOCHREALTIME
  tshark -r "$f" -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn >/dev/null 2>&1
  ts=$(awk "BEGIN{print $EPOCHREALTIME - $t0}")
  awk -v k="$kind" -v n="$N" -v mb="$mb" -v a="$fast" -v b="$crc" -v t="$ts" -v r1="$rss_fast" -v r2="$rss_crc" -v al="$allocs" 'BEGIN{
    printf "decode %-6s %d frames, %s MB: fast path on one core %.3f s = %.2f Mframes/s, %.0f MB/s, peak RSS %d KiB\n", k, n, mb, a, n/a/1e6, mb/a, r1
    printf "decode %-6s with ICRC/VCRC checks: %.3f s = %.2f Mframes/s, %.0f MB/s, peak RSS %d KiB, %s allocs/frame\n", k, b, n/b/1e6, mb/b, r2, al
    printf "decode %-6s tshark -T fields (opcode, destqp, psn): %.1f s = %.3f Mframes/s; ibscope is %.0fx faster (%.0fx with CRC checks)\n", k, t, n/t/1e6, t/a, t/b
  }'
done

#!/usr/bin/env bash
# Export and correlate at scale: a 2-million-frame RoCEv2 capture exported to Parquet, Arrow,
# CSV and JSON Lines (one row per frame; the text files, 0.6 and 1.1 GB, removed after), and correlated with 100,000 telemetry samples (an ibscope sidecar
# on a NIC free-running clock whose port_xmit_data follows the capture). Prints seconds, rows/s
# and peak RSS per run (best wall time of 3), and CPU seconds (user+sys), which say more than
# wall time on a busy machine. Offset estimation is timed too; the benchmark capture's rate is
# nearly constant, so its estimate is weak by design and the timed joins give --offset.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_FRAMES:-2000000}
S=${BENCH_SAMPLES:-100000}
BEHIND=2500000000123 # ns the benchtel NIC clock runs behind the capture's
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
source bench/lib/build.bash
build_ibanalyze bin/
cap="$dir/rocev2-$N.pcap"
tel="$dir/telemetry-$N-$S.csv"
[ -s "$cap" ] || go run ./testdata/gen -bench-rocev2 "$N" -o "$cap"
[ -s "$tel" ] || go run ./correlate/testdata/benchtel -capture "$cap" -samples "$S" -behind "$BEHIND" -o "$tel"

# best wall seconds of 3, then the largest peak RSS (KiB) and the CPU seconds of the best run
measure() {
  local best="" rss=0 cpu=""
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M %U %S' -o "$dir/time" "$@" >"$dir/out" 2>&1 || { cat "$dir/out" >&2; exit 1; }
    read -r s m u y < "$dir/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; cpu=$(awk "BEGIN{print $u + $y}"); fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$best $rss $cpu"
}

for run in parquet arrow csv jsonl parquet-no-crc; do
  fmt=${run%%-*}
  flags=()
  [ "$run" = parquet-no-crc ] && flags=(--no-crc)
  out="$dir/packets.$fmt"
  read -r s rss cpu < <(measure bin/ibanalyze export -q "${flags[@]}" "$cap" -o "$out")
  mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$out")/1e6}")
  awk -v f="$run" -v n="$N" -v s="$s" -v r="$rss" -v c="$cpu" -v mb="$mb" 'BEGIN{
    printf "export %-14s %d rows: %.2f s = %.2f M rows/s, %.2f CPU s, peak RSS %d KiB, file %s MB\n", f, n, s, n/s/1e6, c, r, mb }'
  case $fmt in csv | jsonl) rm -f "$out" ;; esac
done

out="$dir/joined.parquet"
read -r s rss cpu < <(measure bin/ibanalyze correlate -q "$cap" --telemetry "$tel" --offset "$BEHIND" --local 192.168.7.1 -o "$out")
awk -v n="$N" -v m="$S" -v s="$s" -v r="$rss" -v c="$cpu" 'BEGIN{
  printf "correlate %d frames x %d samples, --offset given: %.2f s = %.2f M frames/s, %.2f CPU s, peak RSS %d KiB\n", n, m, s, n/s/1e6, c, r }'
read -r s rss cpu < <(measure bin/ibanalyze correlate -q "$cap" --telemetry "$tel" --row-span 1ms --offset "$BEHIND" -o "$dir/windows.arrow")
awk -v n="$N" -v s="$s" -v r="$rss" -v c="$cpu" 'BEGIN{
  printf "correlate %d frames, --row-span 1ms, Arrow: %.2f s, %.2f CPU s, peak RSS %d KiB\n", n, s, c, r }'
read -r s rss cpu < <(measure bin/ibanalyze correlate -q "$cap" --telemetry "$tel" -o "$out")
est=$(grep -o 'offset [^ ]* estimated, confidence r = [0-9.]*' "$dir/out" || true)
awk -v n="$N" -v s="$s" -v r="$rss" -v c="$cpu" -v e="$est" 'BEGIN{
  printf "correlate %d frames, offset estimated: %.2f s, %.2f CPU s, peak RSS %d KiB (%s; true offset +41m40.000000123s)\n", n, s, c, r, e }'

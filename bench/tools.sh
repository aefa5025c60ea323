#!/usr/bin/env bash
# ibanalyze against the tools people would pick instead (issue 23), on a 500,000-frame and a
# 2-million-frame RoCEv2 capture (page cache warm). Each pair runs alternately, 9 runs a side
# (BENCH_RUNS), tshark 3 (BENCH_TSHARK_RUNS), and the medians are compared:
#   decode --summary, CPU (user+sys), against `cat F` (the copy limit), with and without --no-crc
#   flows, CPU, against `tcpdump -r F -w /dev/null` (libpcap's own read and write)
#   ipd, wall, against `tshark -r F -T fields -e frame.time_epoch -e infiniband.bth.destqp`
#   export to Parquet: rows per wall second and per CPU second
# and, as the floor under them, what ibanalyze's start alone costs (ibanalyze --version).
# ns/frame figures are a command's whole CPU time over the frames, start-up included.
# The figures are printed, never checked: the machine's load is printed beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/timeone.bash
source bench/lib/build.bash
RUNS=${BENCH_RUNS:-9}
NJ=$(nproc) # every core
TSHARK_RUNS=${BENCH_TSHARK_RUNS:-3}
SIZES=${BENCH_TOOLS_FRAMES:-500000 2000000}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
build_ibanalyze bin/
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# rounds NAME CMD... -- NAME CMD... --: runs the commands in turn, RUNS rounds, and leaves each
# one's "wall cpu" lines in $work/NAME.
rounds() {
  local -a names=() cmds=()
  local name="" cmd=""
  while [ $# -gt 0 ]; do
    name=$1 cmd=""
    shift
    while [ "$1" != -- ]; do cmd+="$(printf '%q ' "$1")"; shift; done
    shift
    names+=("$name") cmds+=("$cmd")
    : >"$work/$name"
  done
  for ((r = 0; r < RUNS; r++)); do
    for i in "${!names[@]}"; do
      eval "time_one ${cmds[i]}" >>"$work/${names[i]}"
    done
  done
}
wall() { awk '{print $1}' "$work/$1" | median; }
cpu() { awk '{print $2}' "$work/$1" | median; }

for n in $SIZES; do
  f=$dir/rocev2-$n.pcap
  if [ ! -s "$f" ]; then
    go run ./testdata/gen -bench-rocev2 "$n" -o "$work/gen.pcap"
    mv "$work/gen.pcap" "$f"
  fi
  cat "$f" >/dev/null
  mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$f")/1e6}")
  echo "tools: $f, $n frames, $mb MB, $RUNS runs a side alternating (tshark $TSHARK_RUNS); load $(cut -d' ' -f1-3 /proc/loadavg)"

  # decode on every core (-j nproc; the default takes only the cores the load average leaves
  # idle) and on one (-j 1): the CPU time of the first includes the hand-over between the cores.
  rounds cat cat "$f" -- summary bin/ibanalyze decode -j "$NJ" --summary "$f" -- \
    nocrc bin/ibanalyze decode -j "$NJ" --summary --no-crc "$f" -- \
    summary1 bin/ibanalyze decode -j 1 --summary "$f" -- \
    nocrc1 bin/ibanalyze decode -j 1 --summary --no-crc "$f" --
  # The floor under any ibanalyze command: its start (runtime, package initialisation, page faults).
  rounds start bin/ibanalyze --version --
  awk -v c="$(cpu cat)" -v s="$(cpu start)" 'BEGIN{
    printf "tools: ibanalyze --version (start-up alone) %.3f CPU s = %.2fx cat\n", s, s/c }'
  for j in "" 1; do
    awk -v c="$(cpu cat)" -v s="$(cpu summary$j)" -v x="$(cpu nocrc$j)" -v n="$n" -v j="${j:-$NJ}" -v w="$(wall summary$j)" 'BEGIN{
      printf "tools: decode --summary (-j %s) %.3f CPU s = %.2fx cat (%.3f s), %.0f ns/frame, %.3f s wall; --no-crc %.3f s = %.2fx cat, %.0f ns/frame (targets 3x, 2x)\n", j, s, s/c, c, s/n*1e9, w, x, x/c, x/n*1e9 }'
  done

  # flows and ipd on every core and on one (-j 1), as decode above.
  rounds tcpdump tcpdump -r "$f" -w /dev/null -- flows bin/ibanalyze flows -j "$NJ" "$f" -- flows1 bin/ibanalyze flows -j 1 "$f" --
  for j in "" 1; do
    awk -v t="$(cpu tcpdump)" -v fl="$(cpu flows$j)" -v n="$n" -v j="${j:-$NJ}" 'BEGIN{
      printf "tools: flows (-j %s) %.3f CPU s = %.2fx tcpdump -r F -w /dev/null (%.3f s), %.0f ns/frame (target 1.0x)\n", j, fl, fl/t, t, fl/n*1e9 }'
  done

  rounds ipd bin/ibanalyze ipd -j "$NJ" "$f" -- ipd1 bin/ibanalyze ipd -j 1 "$f" --
  RUNS=$TSHARK_RUNS rounds tshark tshark -r "$f" -T fields -e frame.time_epoch -e infiniband.bth.destqp --
  for j in "" 1; do
    awk -v i="$(wall ipd$j)" -v t="$(wall tshark)" -v ic="$(cpu ipd$j)" -v tc="$(cpu tshark)" -v n="$n" -v j="${j:-$NJ}" 'BEGIN{
      printf "tools: ipd (-j %s) %.3f s wall, tshark -T fields (time, destqp) %.2f s wall: %.0fx faster (CPU %.3f s vs %.2f s: %.0fx, %.0f ns/frame) (target 150x)\n", j, i, t, t/i, ic, tc, tc/ic, ic/n*1e9 }'
  done

  rounds export bin/ibanalyze export -q "$f" -o "$work/packets.parquet" --
  awk -v w="$(wall export)" -v c="$(cpu export)" -v n="$n" 'BEGIN{
    printf "tools: export to Parquet %.3f s wall = %.2f M rows/s, %.3f CPU s = %.2f M rows per CPU second (target 5 M rows/s)\n", w, n/w/1e6, c, n/c/1e6 }'
  rm -f "$work/packets.parquet"
done
echo "tools: load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

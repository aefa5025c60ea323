#!/usr/bin/env bash
# Memory in flows, not only in packets (issue 23 item 4): flows and ipd on a capture of
# BENCH_QPS (default 10,000,000) one-packet QPs (testdata/gen -bench-qps: a SEND ONLY each, every
# other asking for an ACK that never comes, 1.4 GB for 10 million), --max-flows as many, each
# command's peak RSS from /usr/bin/time and that over the QPs: the whole process's bytes per QP,
# start-up, read buffers and result included. The goal is under 3 GB for 10 million. The figures
# are printed, never checked; the capture stays in BENCH_DIR for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
QPS=${BENCH_QPS:-10000000}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
mkdir -p "$dir"
source bench/lib/build.bash
build_ibanalyze bin/
f=$dir/qps-$QPS.pcap
[ -s "$f" ] || go run ./testdata/gen -bench-qps "$QPS" -o "$f"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$QPS one-packet QPs ($(du -hL "$f" | cut -f1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
for cmd in flows ipd; do
  /usr/bin/time -f '%M %e %U %S' -o "$work/time" bin/ibanalyze "$cmd" --max-flows "$QPS" "$f" >"$work/out" 2>"$work/err" || {
    echo "$cmd failed:"; cat "$work/err"; exit 1; }
  read -r kb wall user sys <"$work/time"
  groups=$(grep -Eo '[0-9]+ flow' "$work/out" | awk 'NR == 1 { print $1 }')
  awk -v c="$cmd" -v kb="$kb" -v q="$QPS" -v w="$wall" -v u="$user" -v s="$sys" -v g="$groups" 'BEGIN {
    printf "%-5s peak RSS %6.2f GB (%d bytes a QP), %s flows; %.1f s wall, %.1f s CPU\n", c, kb*1024/1e9, kb*1024/q, g, w, u+s }'
done

#!/usr/bin/env bash
# ibanalyze -j 1 against -j N (N: every core, nproc) on the 2-million-frame RoCEv2 capture
# analyze.sh writes: flows, ipd, decode --summary and decode, and flows, ipd and decode --summary
# on the same capture compressed (.gz, .zst), each pair run alternately
# BENCH_RUNS times (default 9). Prints the median wall and CPU (user+sys) seconds of each side,
# wall(-j N)/wall(-j 1) (the gain from the cores) and CPU(-j N)/CPU(-j 1) (what handing the
# frames between goroutines costs), the largest peak RSS, and the load average before and
# after, and how many cores two busy processes got before and after (bench/lib/coresgiven.bash: a
# virtual machine's two cores may be one for a while, and -j 2 then gains nothing): on a shared
# machine the wall times are only as good as the cores the others leave.
# BENCH_RT=1 runs each command at a real-time priority (chrt -f 5, needs root), which keeps the
# other processes' time slices out of its wall time (on a busy machine a woken goroutine's thread
# otherwise waits for one, ~0.5 ms, at each hand-over), not what they take of the caches.
set -euo pipefail
cd "$(dirname "$0")/.."
timesbyj=$(cat bench/lib/timesbyj.awk)
source bench/lib/coresgiven.bash
source bench/lib/build.bash
N=${BENCH_FRAMES:-2000000}
RUNS=${BENCH_RUNS:-9}
J=${BENCH_JOBS:-$(nproc)}
dir=${BENCH_DIR:-/tmp/ibscope-bench}
rt=()
if [ "${BENCH_RT:-0}" = 1 ]; then
  rt=(chrt -f 5)
fi
mkdir -p "$dir"
build_ibanalyze bin/
f="$dir/rocev2-$N.pcap"
[ -s "$f" ] || go run ./testdata/gen -bench-rocev2 "$N" -o "$f"
# The same capture compressed, decompressed on a core of its own at -j 2 and more (capfile's
# prefetch): gzip -6 and zstd -3, each written once beside it.
[ -s "$f.gz" ] || { gzip -6 -c "$f" >"$f.gz.part" && mv "$f.gz.part" "$f.gz"; }
[ -s "$f.zst" ] || { zstd -q -3 -c "$f" >"$f.zst.part" && mv "$f.zst.part" "$f.zst"; }

echo "cores: $f (and .gz, .zst), -j 1 against -j $J, $RUNS runs each alternating${rt:+ at ${rt[*]}}; load average $(cut -d' ' -f1-3 /proc/loadavg); two busy processes got $(cores_given) cores"
for run in "flows:" "ipd:" "decode --summary:" "decode:" "flows:.gz" "ipd:.gz" "decode --summary:.gz" "flows:.zst" "ipd:.zst" "decode --summary:.zst"; do
  args=${run%%:*} in=$f${run#*:}
  : > "$dir/cores-times"
  for _ in $(seq "$RUNS"); do
    for j in 1 "$J"; do
      # shellcheck disable=SC2086
      if ! "${rt[@]}" /usr/bin/time -f "$j %e %U %S %M" -o "$dir/time" bin/ibanalyze -j "$j" $args "$in" >/dev/null 2>"$dir/err"; then
        echo "cores: ibanalyze -j $j $args $in failed:" >&2
        cat "$dir/err" >&2
        exit 1
      fi
      cat "$dir/time" >> "$dir/cores-times"
    done
  done
  awk -v a="$args${run#*:}" -v j="$J" "$timesbyj"'
    END {
      w1 = median(wall[1]); wj = median(wall[j]); c1 = median(cpu[1]); cj = median(cpu[j])
      printf "cores: ibanalyze %-21s -j 1: %.2f s wall, %.2f s CPU, %d KiB; -j %d: %.2f s wall, %.2f s CPU, %d KiB; wall %.2fx, CPU %.2fx\n",
        a, w1, c1, rss[1], j, wj, cj, rss[j], wj / w1, cj / c1
    }' "$dir/cores-times"
done
echo "cores: load average after: $(cut -d' ' -f1-3 /proc/loadavg); two busy processes got $(cores_given) cores"

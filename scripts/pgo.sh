#!/usr/bin/env bash
# pgo.sh: writes cmd/ibanalyze/default.pgo, the CPU profile go build optimises ibanalyze with
# (profile-guided optimisation; go build and go test pick the file up by themselves). It runs the
# commands bench/tools.sh times, on one core and (ipd, flows, decode --summary) on two, each
# PGO_RUNS (8) times on the 2-million-frame RoCEv2 capture of make bench (generated into
# BENCH_DIR when missing), export to Parquet 3 times, each writing its profile
# (IBANALYZE_CPUPROFILE), and merges them. Rerun it when the hot paths change much; a stale
# profile costs only missed optimisation, never a wrong result.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
RUNS=${PGO_RUNS:-8}
[[ $RUNS =~ ^[1-9][0-9]{0,2}$ ]] || { echo "pgo: PGO_RUNS=$RUNS: want 1 to 999" >&2; exit 2; }
dir=${BENCH_DIR:-/tmp/ibscope-bench}
f=$dir/rocev2-2000000.pcap
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dir"
if [ ! -s "$f" ]; then
  $GO run ./testdata/gen -bench-rocev2 2000000 -o "$work/gen.pcap"
  mv "$work/gen.pcap" "$f"
fi
# Built without a profile: what the profile shows is the code as it is before the optimisation.
source bench/lib/build.bash
build_ibanalyze "$work/" -pgo=off
n=0
profile() {
  n=$((n + 1))
  IBANALYZE_CPUPROFILE="$work/$n.pprof" "$work/ibanalyze" "$@" >/dev/null
}
for ((r = 0; r < RUNS; r++)); do
  profile -j 1 ipd "$f"
  profile -j 1 flows "$f"
  profile -j 1 decode --summary "$f"
  profile -j 1 decode --summary --no-crc "$f"
  # The pieces' path (capfile/split.go), which the default -j takes on an idle machine.
  profile -j 2 ipd "$f"
  profile -j 2 flows "$f"
  profile -j 2 decode --summary "$f"
done
for r in 1 2 3; do
  profile export -q "$f" -o "$work/packets.parquet"
done
$GO tool pprof -proto "$work"/*.pprof >"$work/default.pgo" # whole, or the old profile stays
mv "$work/default.pgo" cmd/ibanalyze/default.pgo
echo "pgo: cmd/ibanalyze/default.pgo from $n profiles ($(stat -c %s cmd/ibanalyze/default.pgo) bytes)"

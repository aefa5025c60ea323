#!/usr/bin/env bash
# same-output.sh REF: shows that a change of structure changed no output. It builds ibanalyze and
# ibsim at REF (a commit, default main) and from the work tree, runs both on the bundled captures
# (testdata/pcaps), on two generated 50,000-frame captures (GEN_FRAMES; RoCEv2 and native IB, as
# the benchmarks read) and on ibsim's presets, and compares byte for byte: ibsim's files, and every
# analysis' stdout, stderr and exit status (decode with --json and --summary, flows, ipd, credits,
# tick, buffer, pfc, hops, export and correlate as Parquet and Arrow files plus their --json
# summaries). The only thing ignored is the elapsed time some summaries report ("seconds", "in
# 0.03 s"). ibcap is not run: it needs a capture device (its file writing is capfile's Encoder,
# which ibsim's taps use too). Exit 0 when everything matches, 1 naming what differs.
# REF_ARGS and HEAD_ARGS go before each side's ibanalyze arguments: with the same code on both
# sides, REF_ARGS="-j 1" HEAD_ARGS="-j 4" shows that four cores give what one gives (but for the
# files of export and correlate, which hold their command line, and so differ by the -j in it).
#
#	scripts/same-output.sh a7c6421
#	REF_ARGS="-j 1" HEAD_ARGS="-j 2" scripts/same-output.sh HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${1:-main}
GO=${GO:-go}
PRESETS=${PRESETS:-incast-small incast-small-roce incast2015 incast2015-roce}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

git worktree add --detach "$tmp/src" "$REF" >/dev/null 2>&1
# -buildvcs=false: both builds then print the same version, which export writes into its files.
(cd "$tmp/src" && $GO build -buildvcs=false -o "$tmp/ref/" ./cmd/ibanalyze ./cmd/ibsim)
$GO build -buildvcs=false -o "$tmp/head/" ./cmd/ibanalyze ./cmd/ibsim

# elapsed FILE...: blanks the elapsed times a run reports, the one thing allowed to differ.
elapsed() {
  sed -i -E 's/"seconds": ?[0-9.e+-]+/"seconds":X/; s/ [0-9]+\.[0-9]+ s$/ X s/' "$@"
}

# Each case is a name and ibanalyze's arguments, run below with both builds in a directory of its
# own (files written with -o land there). The command line goes into export's files, so both
# builds run from the same path.
cases=()
run() {
  local name=$1
  shift
  cases+=("$name" "$(printf '%q ' "$@")")
}

pcaps=(testdata/pcaps/*.pcap testdata/pcaps/*.pcapng)
for f in "${pcaps[@]}"; do
  f=$PWD/$f
  b=$(basename "$f")
  run "decode-$b" decode "$f"
  run "decode-json-$b" decode --json "$f"
  run "flows-$b" flows "$f"
  run "ipd-$b" ipd "$f"
  run "credits-$b" credits "$f"
  run "pfc-$b" pfc "$f"
  run "hops-$b" hops "$f"
done
# Generated captures, as the benchmarks read (testdata/gen -bench-rocev2 and -bench-ib: RDMA
# WRITEs, ACKs and CNPs; native IB in ERF records), GEN_FRAMES frames each.
mkdir -p "$tmp/gen"
for kind in rocev2 ib; do
  g=$tmp/gen/bench-$kind.pcap
  $GO run ./testdata/gen -bench-$kind "${GEN_FRAMES:-50000}" -o "$g" >/dev/null
  run "gen-decode-$kind" decode "$g"
  run "gen-decode-json-$kind" decode --json "$g"
  run "gen-summary-$kind" decode --summary "$g"
  run "gen-summary-no-crc-$kind" decode --summary --no-crc "$g"
  run "gen-flows-$kind" flows "$g"
  run "gen-ipd-$kind" ipd "$g"
  run "gen-export-$kind" export "$g" -o packets.parquet --json
done
all=("${pcaps[@]/#/$PWD/}")
run summary decode --summary "${all[@]}"
run summary-json decode --summary --json "${all[@]}"
run flows-json flows --json "${all[@]}"
run ipd-json ipd --json "${all[@]}"
run ipd-qp ipd --by qp --exp --phases "${all[@]}"
run export-parquet export "${all[@]}" -o packets.parquet --json
run export-arrow export "${all[@]}" -o packets.arrow

differ=0
for p in $PRESETS; do
  for side in ref head; do
    mkdir -p "$tmp/sim/$side"
    (cd "$tmp/sim/$side" && "$tmp/$side/ibsim" -p "$p" -o "$p" >"$p.stdout" 2>&1)
    elapsed "$tmp/sim/$side/$p.stdout"
  done
  d=$tmp/sim/ref/$p
  caps=("$d"/*.pcap*)
  senders=()
  recv=""
  for c in "${caps[@]}"; do
    case $(basename "$c") in r.*) recv=$c ;; *) senders+=("$c") ;; esac
  done
  run "$p-summary" decode --summary --json "${caps[@]}"
  run "$p-decode-json" decode --json -c 20000 "$recv"
  run "$p-flows" flows "${caps[@]}"
  run "$p-flows-json" flows --json --interval 10us "${caps[@]}"
  run "$p-ipd" ipd --json --by link "${caps[@]}"
  run "$p-credits" credits --json "${caps[@]}"
  run "$p-tick" tick --json "$recv" --telemetry "$d/perfquery.txt"
  run "$p-buffer" buffer --json "${senders[@]}" "$recv"
  run "$p-pfc" pfc --json "${caps[@]}"
  run "$p-hops" hops --json "${caps[@]}"
  run "$p-export" export "${caps[@]}" -o packets.parquet --json
  run "$p-correlate" correlate "${caps[@]}" --telemetry "$d/perfquery.txt" -o corr.parquet --json
done

if ! diff -r "$tmp/sim/ref" "$tmp/sim/head" >"$tmp/diff" 2>&1; then
  echo "DIFFERS: ibsim"
  head -20 "$tmp/diff"
  differ=1
fi

mkdir -p "$tmp/bin"
for side in ref head; do
  cp "$tmp/$side/ibanalyze" "$tmp/bin/ibanalyze"
  sideArgs=${REF_ARGS:-}
  if [ "$side" = head ]; then
    sideArgs=${HEAD_ARGS:-}
  fi
  for ((i = 0; i < ${#cases[@]}; i += 2)); do
    dir=$tmp/out/$side/${cases[i]}
    mkdir -p "$dir"
    (cd "$dir" && set +e
      eval "\"$tmp/bin/ibanalyze\" $sideArgs ${cases[i + 1]}" >stdout 2>stderr
      echo $? >status
      elapsed stdout stderr)
  done
done
for ((i = 0; i < ${#cases[@]}; i += 2)); do
  if ! diff -r "$tmp/out/ref/${cases[i]}" "$tmp/out/head/${cases[i]}" >"$tmp/diff" 2>&1; then
    echo "DIFFERS: ibanalyze ${cases[i + 1]}(${cases[i]})"
    head -20 "$tmp/diff"
    differ=1
  fi
done
runs=$((${#cases[@]} / 2))

if [ "$differ" != 0 ]; then
  echo "same-output: outputs differ between $REF ${REF_ARGS:-} and the work tree ${HEAD_ARGS:-}"
  exit 1
fi
echo "same-output: $runs runs, every output byte-identical between $REF ${REF_ARGS:-} and the work tree ${HEAD_ARGS:-}"

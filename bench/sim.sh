#!/usr/bin/env bash
# Simulator speed: the 2015 incast (131,072 data packets, three taps, about
# 540 MB of captures, 51 MB with --snap 128; sizes in du -m megabytes)
# through ibsim, with whole packets, with --snap 128 (headers only) and
# without writing captures.
# Prints plain lines of figures.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/ibsim" ./cmd/ibsim
"$tmp/ibsim" --preset incast2015 --print > "$tmp/incast.yaml"
# The same scenario without taps: the simulation alone.
sed '/^taps:/,/^[a-z_]*:/{/^taps:/d;/^ /d;/^    /d;/^  -/d}' "$tmp/incast.yaml" > "$tmp/notaps.yaml"
# label|scenario|extra flags
for run in "with taps|$tmp/incast.yaml|" "with taps, --snap 128|$tmp/incast.yaml|--snap 128" "without taps|$tmp/notaps.yaml|"; do
  IFS='|' read -r label file flags <<<"$run"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # flags are words
  line=$("$tmp/ibsim" -o "$tmp/out" $flags "$file")
  line=${line%%$'\n'*}
  end=$(date +%s.%N)
  pkts=$(echo "$line" | sed 's/^[^:]*: \([0-9]*\) data packets.*/\1/')
  awk -v l="$label" -v p="$pkts" -v s="$start" -v e="$end" \
    'BEGIN { printf "ibsim incast2015 (%s): %d data packets in %.2f s wall, %.0f kpackets/s\n", l, p, e - s, p / (e - s) / 1000 }'
  [ "$file" = "$tmp/incast.yaml" ] && echo "ibsim incast2015 captures ($label): $(du -cm "$tmp"/out/*.pcapng | tail -1 | cut -f1) MB"
  rm -rf "$tmp/out"
done

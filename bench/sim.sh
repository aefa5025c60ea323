#!/usr/bin/env bash
# Simulator speed: the 2015 incast (131,072 data packets, three taps, about
# 560 MB of captures) through ibsim, with and without writing captures.
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
for run in "with taps:$tmp/incast.yaml" "without taps:$tmp/notaps.yaml"; do
  label=${run%%:*}; file=${run#*:}
  start=$(date +%s.%N)
  line=$("$tmp/ibsim" -o "$tmp/out" "$file")
  line=${line%%$'\n'*}
  end=$(date +%s.%N)
  pkts=$(echo "$line" | sed 's/^[^:]*: \([0-9]*\) data packets.*/\1/')
  awk -v l="$label" -v p="$pkts" -v s="$start" -v e="$end" \
    'BEGIN { printf "ibsim incast2015 (%s): %d data packets in %.2f s wall, %.0f kpackets/s\n", l, p, e - s, p / (e - s) / 1000 }'
  [ "$label" = "with taps" ] && echo "ibsim incast2015 captures: $(du -cm "$tmp"/out/*.pcap | tail -1 | cut -f1) MB"
  rm -rf "$tmp/out"
done

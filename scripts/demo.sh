#!/usr/bin/env bash
# make demo: the main jobs on bundled captures, no RDMA hardware needed.
# 1. decode every bundled capture (and the real ones in ../shared/pcaps when present);
# 2. analyse them (flows, ipd) when those commands are built;
# 3. the simulator's 2015 incast through ipd/credits/buffer/tick, next to the truth;
# 4. as root: a live RoCEv2 capture on a veth pair in a network namespace.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=bin
captures=(testdata/pcaps/*.pcap testdata/pcaps/*.pcapng)
[ -d ../shared/pcaps ] && captures+=(../shared/pcaps/*.pcap)
has() { "$bin/ibanalyze" "$1" --help >/dev/null 2>&1; }

echo "== decode: bundled captures"
for f in "${captures[@]}"; do
  [ -f "$f" ] || continue
  "$bin/ibanalyze" decode -q "$f" >/dev/null 2>&1; rc=$?
  "$bin/ibanalyze" decode "$f" 2>&1 >/dev/null | sed 's/^ibanalyze: //' | tail -1
  [ $rc -eq 0 ] || echo "   (exit $rc: some frames in $f are deliberately broken or undecodable)"
done
echo
echo "== decode: first frames of the real RoCEv2 and native IB captures"
for f in ../shared/pcaps/oferby-proxy_roce.pcap ../shared/pcaps/softroce-demo_infiniband.pcap; do
  [ -f "$f" ] && "$bin/ibanalyze" decode -q -c 30 "$f" | grep -v ' $' | head -4
done

if has flows; then
  echo; echo "== flows: ../shared/pcaps/oferby-proxy_roce.pcap"
  [ -f ../shared/pcaps/oferby-proxy_roce.pcap ] && "$bin/ibanalyze" flows ../shared/pcaps/oferby-proxy_roce.pcap
fi
if [ -x sim/demo.sh ] || [ -f sim/demo.sh ]; then
  echo; echo "== the 2015 incast, simulated and analysed"
  bash sim/demo.sh "$bin"
fi
if [ -f capture/demo.sh ]; then
  echo; echo "== live capture"
  bash capture/demo.sh "$bin"
fi

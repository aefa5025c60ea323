#!/usr/bin/env bash
# make demo: the main jobs on bundled captures, no RDMA hardware needed.
# 1. as root: a live RoCE capture with ibcap on a veth pair in a network namespace (otherwise the
#    bundled capture), decoded and analysed;
# 2. decode every bundled capture (and the real ones in ../shared/pcaps when present);
# 3. flows on a real RoCEv2 capture;
# 4. the simulator's 2015 incast through ipd/credits/buffer/tick, next to the truth
#    (ibsim --snap 128: the taps keep headers only, about 53 MB of captures in /tmp).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=bin
captures=(testdata/pcaps/*.pcap testdata/pcaps/*.pcapng)
[ -d ../shared/pcaps ] && captures+=(../shared/pcaps/*.pcap)

echo "== ibcap: live RoCE capture on a veth pair in a network namespace (as root)"
live=out/demo-live.pcap
bash scripts/demo-capture.sh "$live"
"$bin/ibanalyze" decode -q --summary "$live"
"$bin/ibanalyze" flows -q "$live" | head -12
echo

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

if [ -f ../shared/pcaps/oferby-proxy_roce.pcap ]; then
  echo; echo "== flows: ../shared/pcaps/oferby-proxy_roce.pcap"
  "$bin/ibanalyze" flows -q ../shared/pcaps/oferby-proxy_roce.pcap
fi
echo; echo "== the 2015 incast, simulated (ibsim --snap 128: headers only) and analysed"
bash scripts/demo-sim.sh "$bin"

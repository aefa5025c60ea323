#!/usr/bin/env bash
# bench/metrics.sh: what ibcap --metrics costs, one plain line each.
#
# As root, in a network namespace of its own with a veth pair (deleted
# afterwards), ibscope's transmit ring sends 1,000 RoCEv2 flows:
# 1. at the highest rate it reaches, ibcap captures them to a file without
#    --metrics, with it (sampling above --metrics-sample-pps) and with
#    --metrics-sample-pps 0 (every packet analysed), a scraper GETting
#    /metrics every second meanwhile as Prometheus would, five rounds each,
#    rotating: frames sent, captured and lost, captured packets/s and
#    ibcap's CPU time per packet (with --metrics, the sampling rate), their
#    medians and the differences in % (the aim: CPU within +30 %); before
#    that, the CPU time idle for 5 s without and with --metrics;
# 2. ibcap --metrics holds the 1,000 flows and one scrape of /metrics is
#    timed 20 times (median, max), gzip asked for as Prometheus does and
#    plain, with the default --metrics-flows and with --metrics-flows 1000
#    (every flow its own series).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "bench metrics: skipped (needs root to create a network namespace and a veth pair)"
	exit 0
fi
if ! command -v ip >/dev/null; then
	echo "bench metrics: skipped (needs ip)"
	exit 0
fi
# The whole output only when the run fails: it says why.
if ! out=$(IBSCOPE_LIVE_BENCH=1 go test -count=1 -timeout 20m -run '^TestLiveMetricsCost$' -v ./cmd/ibcap 2>&1); then
	printf '%s\n' "$out" | tail -n 40
	exit 1
fi
printf '%s\n' "$out" | grep '^bench metrics'

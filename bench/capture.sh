#!/usr/bin/env bash
# bench/capture.sh: ibcap's capture figures, one plain line each.
#
# 1. User-space cost per packet at snap length 128 (capture.Run and the
#    writer fed from memory): no root needed. BenchmarkRunVerbs* add the
#    verbs sniffer's receive loop (post, poll, ring accounting, clock
#    conversion) against the libibverbs test double feeding 128-byte frames
#    as fast as buffers are posted, writing to io.Discard or to pcap files
#    on tmpfs (/dev/shm); their figures include the double's own copy and
#    completion per packet, which a device does in hardware. They also give
#    the CPU time per packet of the receive loop alone (loop_cpu_ns_per_pkt,
#    the thread Run runs on) and of the whole process (cpu_ns_per_pkt: the
#    loop, the writer's goroutine, which makes the write(2) calls, and the
#    runtime); the loop keeps up with 10 M packets/s below 100 ns.
# 2. Live, as root: ibcap and tcpdump (same snap length, same RoCE filter)
#    capture side by side on a veth pair in a network namespace of their own
#    while ibscope's transmit ring sends RoCE frames at rising rates; frames
#    sent, captured and lost, CPU ns per packet (of the whole process, start
#    and stop included, and "traffic": the time its threads ran from just
#    before the first frame to 1.5 s after the last, from schedstat; ibcap's
#    start clears its 64 MB ring, tcpdump's 2 MB), and the highest loss-free
#    rate of each; and how fast one ibcap loop empties a full ring (its
#    ceiling, above what any sender here reaches). The namespace is deleted
#    afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

go test -run '^$' -bench '^BenchmarkRun' -benchtime 2000000x ./capture |
	awk '/^BenchmarkRun/ {
		sub(/-[0-9]+$/, "", $1)
		delete v
		for (i = 4; i <= NF; i += 2) v[$i] = $(i - 1)
		line = sprintf("bench capture %s ns_per_pkt %s pkt_per_s %s allocs_per_pkt %s", $1, $3, v["pkt/s"], v["allocs/op"])
		if ("loop-cpu-ns/pkt" in v) line = line sprintf(" loop_cpu_ns_per_pkt %s cpu_ns_per_pkt %s", v["loop-cpu-ns/pkt"], v["cpu-ns/pkt"])
		print line
	}'

if [ "$(id -u)" -ne 0 ]; then
	echo "bench capture live: skipped (needs root to create a network namespace and a veth pair)"
	exit 0
fi
for tool in ip tcpdump; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench capture live: skipped (needs $tool)"
		exit 0
	fi
done
IBSCOPE_LIVE_BENCH=1 go test -count=1 -run '^TestLiveDrainRate$' -v ./capture | grep '^bench capture' || true
IBSCOPE_LIVE_BENCH=1 go test -count=1 -run '^TestLiveCaptureRates$' -v ./cmd/ibcap | grep '^bench capture'

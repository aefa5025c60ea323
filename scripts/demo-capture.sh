#!/usr/bin/env bash
# scripts/demo-capture.sh [OUT]: the live-capture part of `make demo`.
#
# As root, with iproute2 and tcpreplay: makes a veth pair in a network
# namespace of its own, starts ibcap on one end, replays the bundled RoCE
# capture (RoCEv2 over IPv4 and IPv6, VLAN-tagged RoCEv2, RoCEv1, and frames
# that are not RoCE) into the other, stops ibcap with SIGINT and leaves the
# capture in OUT (default out/demo-live.pcap). Otherwise it says why and
# copies the bundled capture to OUT instead. The namespace is always deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo-live.pcap}
bundled=capture/testdata/rocev2_mixed.pcap
mkdir -p "$(dirname "$out")"

why=""
if [ "$(id -u)" -ne 0 ]; then
	why="not root"
else
	for tool in ip tcpreplay; do
		command -v "$tool" >/dev/null || why="no $tool"
	done
fi
if [ -z "$why" ]; then
	ns=ibscope-demo-$$
	ip netns add "$ns" 2>/dev/null || why="cannot create a network namespace"
fi
if [ -n "$why" ]; then
	echo "demo: live capture skipped ($why); using the bundled capture $bundled"
	cp "$bundled" "$out"
	echo "demo: $out"
	exit 0
fi

tmp=$(mktemp -d)
ibcap_pid=""
cleanup() {
	if [ -n "$ibcap_pid" ]; then kill "$ibcap_pid" 2>/dev/null || true; fi
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/ibcap" ./cmd/ibcap
ip -n "$ns" link add vsend type veth peer name vcap
ip -n "$ns" link set lo up
ip -n "$ns" link set vsend up
ip -n "$ns" link set vcap up
ip -n "$ns" addr add 10.199.0.1/24 dev vsend
ip -n "$ns" addr add 10.199.0.2/24 dev vcap

ip netns exec "$ns" "$tmp/ibcap" -i vcap -w "$out" 2>"$tmp/ibcap.err" &
ibcap_pid=$!
for _ in $(seq 300); do # up to 30 s: a loaded machine (make test runs the demo)
	grep -q "capturing on" "$tmp/ibcap.err" && break
	kill -0 "$ibcap_pid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "capturing on" "$tmp/ibcap.err"; then
	cat "$tmp/ibcap.err" >&2
	exit 1
fi
echo "demo: replaying $bundled on a veth pair in namespace $ns, ibcap capturing the other end"
ip netns exec "$ns" tcpreplay -q -i vsend -t "$bundled" >/dev/null
kill -INT "$ibcap_pid"
wait "$ibcap_pid"
ibcap_pid=""
sed 's/^/demo: /' "$tmp/ibcap.err"
echo "demo: $out"

#!/usr/bin/env bash
# scripts/demo-parquet.sh BINDIR SIMDIR OUTDIR: the correlate and export part of `make demo`.
# Joins the simulated incast's sender capture (SIMDIR/s1.pcapng, from demo-sim.sh) with the
# simulated perfquery counters (SIMDIR/perfquery.txt) into OUTDIR/joined.parquet (and its picture,
# OUTDIR/pictures/correlate-s1.png), exports the
# bundled rping capture into OUTDIR/packets.parquet, and reads both back with DuckDB through
# node (correlate/testdata/reader, the reader the tests use: no code shared with the Go writer).
# Without node or the reader's packages (make deps, or make demo as root, installs them) it says
# so and shows only what ibanalyze printed.
set -uo pipefail
bin=$1 sim=$2 out=$3
reader=correlate/testdata/reader

# duck FILE SQL: the query's rows over the Parquet FILE (as table t), as an aligned table.
duck() {
	node "$reader/read.mjs" sql "$1" "$2" | node -e '
let s = "";
process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const rows = JSON.parse(s).rows;
  if (!rows.length) return;
  const cols = Object.keys(rows[0]);
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (v) => "   " + v.map((x, i) => x.padStart(w[i])).join("  ");
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => r[c] ?? "")));
});'
}

why=""
if ! command -v node >/dev/null; then
	why="no node (Debian: nodejs)"
elif [ ! -d "$reader/node_modules" ]; then
	why="$reader has no node_modules (make deps installs them)"
fi

joined=$out/joined.parquet
picture=$out/pictures/correlate-s1.png
echo "-- ibanalyze correlate s1.pcapng --telemetry perfquery.txt -o $joined --plot $picture"
echo "   (the incast's sender, beside its port counters)"
"$bin/ibanalyze" correlate -q "$sim/s1.pcapng" --telemetry "$sim/perfquery.txt" -o "$joined" --plot "$picture" 2>&1 |
	sed "s|$sim/||g" | grep -v 'not joined' | sed '/./s/^/   /'
packets=$out/packets.parquet
echo "-- ibanalyze export testdata/pcaps/rocev2_rping.pcap -o $packets"
"$bin/ibanalyze" export -q testdata/pcaps/rocev2_rping.pcap -o "$packets" 2>&1 | sed '/./s/^/   /'
for f in "$joined" "$picture" "$packets"; do
	if [ ! -s "$f" ]; then
		echo "demo: $f was not written" >&2
		exit 1
	fi
done
if [ -n "$why" ]; then
	echo "demo: DuckDB read-back skipped ($why)"
	exit 0
fi

echo
echo "-- DuckDB over $joined: s1's port around 50 ms, when s2 starts sending to the same receiver"
echo "   (packets the capture saw leave, the counter's packets, the capture's median IPD, PortXmitWait ticks;"
echo "    the capture also holds the flow-control packets, which the counter leaves out)"
duck "$joined" "SELECT * FROM (
  SELECT (epoch_ns(start_ns) - min(epoch_ns(start_ns)) OVER ()) // 1000000 AS ms, cap_tx_packets,
    port_xmit_packets_delta AS xmit_packets, cap_tx_ipd_p50_ns AS ipd_p50_ns, port_xmit_wait_delta AS xmit_wait
  FROM t WHERE source = 'lid:1/1') WHERE ms BETWEEN 47 AND 52 ORDER BY ms" || exit 1
echo
echo "-- DuckDB over $packets: the busiest opcodes, per sender"
duck "$packets" "SELECT src, opcode_name, count(*) AS frames, sum(len) AS bytes
  FROM t GROUP BY ALL ORDER BY frames DESC, src, opcode_name LIMIT 6" || exit 1

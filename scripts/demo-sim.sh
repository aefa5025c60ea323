#!/usr/bin/env bash
# The 2015 incast through the simulator and ibanalyze, each finding printed
# next to the simulator's truth; then the same incast on RoCE (10 GbE
# through a PFC switch, IFA probes), its pauses and per-hop queueing against
# truth. Usage: scripts/demo-sim.sh [BINDIR] (default bin,
# holding ibsim and ibanalyze). The taps keep each packet's first 128 bytes
# (--snap 128: every header, the ERF wlen the wire length, which is all the
# analyses read), about 53 MB of captures instead of 565 MB. They go to a
# temporary directory that is removed afterwards, or to $IBSCOPE_DEMO_OUT if
# set (kept).
set -euo pipefail
bin=${1:-bin}
out=${IBSCOPE_DEMO_OUT:-}
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

# truth FILE PATTERN SED: a figure from the first line of ibsim's summary
# FILE that matches PATTERN, cut out by the sed expression SED.
truth() { grep -m1 "$2" "$1" | sed "$3"; }

echo "-- ibsim --preset incast2015 --snap 128 -o $out   (taps keep 128 bytes of each packet: the headers)"
"$bin/ibsim" --preset incast2015 --snap 128 -o "$out" | tee "$out/ibsim.txt" | sed '/./s/^/   /'
truth_buf=$(truth "$out/ibsim.txt" 'port sw/1 ' 's/.*\[\([0-9]*\)\].*/\1/')
truth_tick=$(truth "$out/ibsim.txt" 'PortXmitWait' 's/.*ticks of \([0-9.]*\) ns.*/\1/')
truth_pkt=$(truth "$out/ibsim.txt" '  link ' 's/.*every \([0-9.]*\) ns.*/\1/')
truth_wait=$(truth "$out/ibsim.txt" 'port s1/1 *PortXmitWait' 's/.*waited \([0-9]* ns in [0-9]* waits\).*/\1/')
truth_cong=$(truth "$out/ibsim.txt" 'port s1/1 *longest congestion' 's/.*episode \([0-9]* ns\).*/\1/')

echo
echo "-- ibanalyze ipd --phases s1.pcapng   (truth: one packet every $truth_pkt ns alone, twice that when two senders share)"
"$bin/ibanalyze" ipd -q --phases "$out/s1.pcapng" | sed -n '/phases:/,$p' | sed '/./s/^/   /'

echo
echo "-- ibanalyze credits s1.pcapng        (truth: switch input buffer $truth_buf bytes per VL; s1 waited for credits $truth_wait)"
"$bin/ibanalyze" credits -q "$out/s1.pcapng" | sed -n '3,7p' | sed '/./s/^/   /'

echo
echo "-- ibanalyze buffer s1.pcapng s2.pcapng r.pcapng   (truth: $truth_buf bytes per sender's input VL)"
"$bin/ibanalyze" buffer -q "$out/s1.pcapng" "$out/s2.pcapng" "$out/r.pcapng" | grep -E '^sender|plateau|buffer ' | sed '/./s/^/   /'

echo
echo "-- ibanalyze tick s1.pcapng --telemetry perfquery.txt   (truth: tick $truth_tick ns; s1 congested $truth_cong)"
"$bin/ibanalyze" tick -q "$out/s1.pcapng" --telemetry "$out/perfquery.txt" | grep -E 'congestion|telemetry|waited|tick|window' | sed '/./s/^/   /'

echo
roce="$out/roce"
echo "-- ibsim --preset incast2015-roce --snap 256 -o $roce   (the same incast on 10 GbE through a PFC switch; every 61st packet an IFA probe)"
"$bin/ibsim" --preset incast2015-roce --snap 256 -o "$roce" | tee "$out/roce.txt" | grep -E 'data packets|link  s1|port sw/1|paused|hop  ' | sed '/./s/^/   /'
truth_pause1=$(truth "$out/roce.txt" 'port s1/1 *paused' 's/.*paused \([0-9]* ns\) on priority 0 in \([0-9]*\) pauses.*/\1 in \2 pauses/')
truth_pause2=$(truth "$out/roce.txt" 'port s2/1 *paused' 's/.*paused \([0-9]* ns\) on priority 0 in \([0-9]*\) pauses.*/\1 in \2 pauses/')
truth_hop1=$(truth "$out/roce.txt" 'hop   sw/1 ' 's/.*mean residence \([0-9]* ns\).*/\1/')
truth_hop2=$(truth "$out/roce.txt" 'hop   sw/2 ' 's/.*mean residence \([0-9]* ns\).*/\1/')

echo
echo "-- ibanalyze pfc --rate 10G s1.pcapng s2.pcapng   (truth: s1 paused $truth_pause1 by sw/1, s2 $truth_pause2 by sw/2: each about half of the 124 ms both run, 30 % of the span)"
"$bin/ibanalyze" pfc -q --rate 10G "$roce/s1.pcapng" "$roce/s2.pcapng" | sed -n '/^pauses per link/,/^$/p' | sed '/./s/^/   /'

echo "-- ibanalyze hops r.pcapng   (truth, every packet through sw to r: from s1 $truth_hop1 mean residence, from s2 $truth_hop2)"
"$bin/ibanalyze" hops -q "$roce/r.pcapng" | sed -n '/^per switch egress/,/^$/p;/^per flow/,$p' | sed '/./s/^/   /'

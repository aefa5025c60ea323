package vmbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// disruptScript runs three ib_write_bw rounds under one ibcap -i va
// --telemetry capture: as set up; after rdma link del and add of rxe0
// (its counters restart at 0); after va is taken down and up. Each round's
// counters are read before and after it (c0..c5).
func (b *bench) disruptScript(name string, iters int) string {
	_, dir := b.caseDir(name)
	return scriptPrelude(dir) + fmt.Sprintf(`round() {
  ga=$(gid rxe0 '*:ffff:0a00:000?') || fail "$ga"; gb=$(gid rxe1 '*:ffff:0a00:000?') || fail "$gb"
  ib_write_bw -d rxe1 -x $gb -n %[2]d -F -s 4096 > server-$1.out 2>&1 & srv=$!
  waitfor "ib_write_bw to listen" sh -c "ss -Hltn | grep -q ':18515 '"
  ib_write_bw -d rxe0 -x $ga -n %[2]d -F -s 4096 %[3]s > client-$1.out 2>&1 || fail "client $1: $(cat client-$1.out)"
  wait $srv || fail "server $1: $(cat server-$1.out)"
}
# What goes with va when it goes down, put back as the set-up made it (the
# tests after this one use it): its routes, its static neighbours, and its
# IPv6 address (kept on down only with keep_addr_on_down).
relink() {
  mb=$(cat /sys/class/net/vb/address)
  ip -6 addr replace fd00::1/64 dev va nodad
  ip neigh replace 10.0.0.2 lladdr $mb dev va nud permanent
  ip -6 neigh replace fd00::2 lladdr $mb dev va nud permanent
  ip route replace 10.0.0.2 dev va src 10.0.0.1 table 10
  ip -6 route replace fd00::2 dev va src fd00::1 table 10
}
tc qdisc del dev va root 2>/dev/null; tc qdisc del dev vb root 2>/dev/null
%[1]s/ibcap -i va -w $D/va.pcap --telemetry 100ms 2>ibcap.err & cap=$!
waitfor "ibcap to start" grep -q 'capturing on' ibcap.err
counters c0; round 1; counters c1
rdma link del rxe0
waitfor "rxe0 to go" sh -c '! test -e /sys/class/infiniband/rxe0'
sleep 0.3 # a few telemetry samples without the device
rdma link add rxe0 type rxe netdev va
waitfor "rxe0's IPv4 GID" gid rxe0 '*:ffff:0a00:000?'
counters c2; round 2; counters c3
ip link set va down
waitfor "rxe0's port to go down" sh -c '! grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state'
ip link set va up
waitfor "rxe0's port to come up" grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state
relink
waitfor "rxe0's IPv4 GID" gid rxe0 '*:ffff:0a00:000?'
waitfor "rxe0's IPv6 GID" grep -q '^fd00:' /sys/class/infiniband/rxe0/ports/1/gids/[0-9]
counters c4; round 3; counters c5
kill -INT $cap; wait $cap; echo "ibcap exit $?" >> ibcap.err
true
`, b.bin, iters, ip4B)
}

// TestDeviceGoesAway: rxe0 deleted and re-added, and va taken down and
// up, during one capture. The capture holds every packet the three rounds'
// counters count (round 3 too: the capture waits for va to come back),
// and ibcap's exit status is 0.
func TestDeviceGoesAway(t *testing.T) {
	b := need(t)
	const name, iters = "rxe-readd-link-flap", 100
	host, _ := b.caseDir(name)
	out := b.run(t, b.disruptScript(name, iters), 4*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("case files kept in %s; guest script output:\n%s", host, out)
		}
	})
	c := func(n int) map[string]uint64 { return readCounters(t, filepath.Join(host, fmt.Sprintf("c%d", n))) }
	var sent, rcvd [3]uint64
	for i := range sent {
		d := delta(c(2*i), c(2*i+1))
		sent[i], rcvd[i] = d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"]
	}
	frames, err := tsharkRead(filepath.Join(host, "va.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var out4, in4 uint64
	for _, f := range frames {
		switch f.src() {
		case ip4A:
			out4++
		case ip4B:
			in4++
		}
	}
	errText, _ := os.ReadFile(filepath.Join(host, "ibcap.err"))
	if out4 != sent[0]+sent[1]+sent[2] || in4 != rcvd[0]+rcvd[1]+rcvd[2] || !strings.Contains(string(errText), "ibcap exit 0") {
		t.Errorf("capture holds %d packets from rxe0 and %d to it, want rxe0's counters' sums over the three rounds: sent_pkts %v, rcvd_pkts %v (rxe0 re-added before round 2, va down and up before round 3), and exit status 0\n%s", out4, in4, sent, rcvd, errText)
	}
	// ibcap said va went down and came back, and counts it in its report.
	for _, want := range []string{"capture on va: the interface went down; the capture waits for it to come back up",
		"capture on va: the interface is back up; capturing again", "the interface went down 1 time during"} {
		if !strings.Contains(string(errText), want) {
			t.Errorf("ibcap did not say %q:\n%s", want, errText)
		}
	}
	if strings.Contains(string(errText), "counter reads failed") && !strings.Contains(string(errText), "absent from sysfs") {
		t.Errorf("ibcap's telemetry warning does not say the device was absent:\n%s", errText)
	}
	t.Logf("three rounds: rxe0 sent %v rcvd %v; captured %d and %d; ibcap said:\n%s", sent, rcvd, out4, in4, errText)
}

package vmbench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// traffic is one case of the matrix: a perftest tool (or rping) run from
// rxe0 to rxe1 while ibcap captures on va, rxe0's netdev.
type traffic struct {
	name     string
	tool     string   // ib_write_bw, ib_send_bw, ..., rping, immwrite, or perftest-rdma-cm (perftest -R)
	perftest string   // the perftest tool of perftest-rdma-cm
	args     []string // perftest flags for both sides (-c UC, -s 64, -q 2, ...)
	iters    int      // perftest -n, rping -C
	ipv6     bool     // use the devices' IPv6 GIDs
	// netem qdiscs on va (rxe0's packets, before the tap) and vb (rxe1's
	// packets, before they reach va): tc netem arguments, or empty.
	netemA, netemB string
}

// caseDir is where a case's files are: on the host, and as the guest sees it.
func (b *bench) caseDir(name string) (host, guest string) {
	return filepath.Join(b.guest.Share, "cases", name), "/tmp/share/cases/" + name
}

// script is the guest side of a case: start ibcap on va, read the
// counters, run the traffic, wait until the qdiscs are empty, read the
// counters again, stop ibcap.
func (b *bench) script(c traffic) string {
	_, dir := b.caseDir(c.name)
	var s strings.Builder
	s.WriteString(scriptPrelude(dir))
	s.WriteString(`qdiscs() { tc -s qdisc show dev va > $1.va; tc -s qdisc show dev vb > $1.vb; }
drained() { ! tc -s qdisc show dev va dev vb | grep -q 'backlog [1-9]' && ! tc -s qdisc show dev vb | grep -q 'backlog [1-9]'; }
tc qdisc del dev va root 2>/dev/null; tc qdisc del dev vb root 2>/dev/null
`)
	if c.netemA != "" {
		fmt.Fprintf(&s, "tc qdisc add dev va root netem %s || fail netem va\n", c.netemA)
	}
	if c.netemB != "" {
		fmt.Fprintf(&s, "tc qdisc add dev vb root netem %s || fail netem vb\n", c.netemB)
	}
	fmt.Fprintf(&s, `%[1]s/ibcap -i va -w $D/va.pcap 2>ibcap.err & cap=$!
waitfor "ibcap to start" grep -q 'capturing on' ibcap.err
counters before; qdiscs before
`, b.bin)
	switch c.tool {
	case "rping":
		// -I binds the client to rxe0's address: without it rdma_cm
		// resolves rxe1's local address to rxe1 itself, and nothing
		// crosses the pair.
		fmt.Fprintf(&s, `rping -s -a %[1]s -C %[2]d -v > server.out 2>&1 & srv=$!
ok=0
for i in $(seq 100); do
  if rping -c -I %[3]s -a %[1]s -C %[2]d -v > client.out 2>&1; then ok=1; break; fi
  sleep 0.2
done
[ $ok = 1 ] || fail "rping client: $(cat client.out)"
`, ip4B, c.iters, ip4A)
	case "immwrite":
		// testdata/immwrite: RDMA WRITE with immediate over rdma_cm, the
		// client bound to rxe0's address (-b) as rping's -I. The server
		// says on its output when it listens.
		args := strings.Join(c.args, " ")
		fmt.Fprintf(&s, `%[1]s/immwrite -l %[2]s -n %[3]d %[4]s > server.out 2>&1 & srv=$!
waitfor "immwrite to listen" grep -q listening server.out
%[1]s/immwrite -c %[2]s -b %[5]s -n %[3]d %[4]s > client.out 2>&1 || fail "immwrite client: $(cat client.out)"
`, b.bin, ip4B, c.iters, args, ip4A)
	case "perftest-rdma-cm":
		// rdma_cm listens out of ss's sight: the client retries until the
		// server answers; --source_ip keeps it on rxe0 (as rping's -I).
		args := strings.Join(c.args, " ")
		fmt.Fprintf(&s, `%[1]s -d rxe1 -R -n %[2]d -F %[3]s > server.out 2>&1 & srv=$!
ok=0
for i in $(seq 100); do
  if %[1]s -d rxe0 -R --source_ip %[4]s -n %[2]d -F %[3]s %[5]s > client.out 2>&1; then ok=1; break; fi
  sleep 0.2
done
[ $ok = 1 ] || fail "%[1]s client: $(cat client.out)"
`, c.perftest, c.iters, args, ip4A, ip4B)
	default:
		args := strings.Join(c.args, " ")
		// The GID indices are read as the case starts: the table is the
		// kernel's to change when addresses come and go.
		pat := "*:ffff:0a00:000?"
		if c.ipv6 {
			pat = "fd00:*"
		}
		fmt.Fprintf(&s, `ga=$(gid rxe0 '%[5]s') || fail "$ga"; gb=$(gid rxe1 '%[5]s') || fail "$gb"
%[1]s -d rxe1 -x $gb -n %[2]d -F %[3]s > server.out 2>&1 & srv=$!
waitfor "%[1]s to listen" sh -c "ss -Hltn | grep -q ':18515 '"
%[1]s -d rxe0 -x $ga -n %[2]d -F %[3]s %[4]s > client.out 2>&1 || fail "%[1]s client (GIDs $ga, $gb): $(cat client.out; ip -6 neigh; ip -6 route show table 10; grep -H . /sys/class/infiniband/rxe[01]/ports/1/gids/[0-9])"
`, c.tool, c.iters, args, ip4B, pat)
	}
	fmt.Fprintf(&s, `wait $srv || fail "server: $(cat server.out)"
waitfor "the qdiscs to drain" drained
counters after; qdiscs after
kill -INT $cap; wait $cap; echo "ibcap exit $?" >> ibcap.err
tc qdisc del dev va root 2>/dev/null; tc qdisc del dev vb root 2>/dev/null
true
`)
	return s.String()
}

// counters reads a "path:value" listing of both devices' hw_counters into
// "rxe0/sent_pkts" → value.
func readCounters(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("counters: %v", err)
	}
	defer f.Close()
	m := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		parts := strings.Split(p, "/")
		if len(parts) < 8 {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			t.Fatalf("counters %s: %q: %v", path, sc.Text(), err)
		}
		m[parts[4]+"/"+parts[len(parts)-1]] = n
	}
	return m
}

func delta(before, after map[string]uint64) map[string]uint64 {
	d := map[string]uint64{}
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

// runCase runs a case in the guest and returns its host folder and the
// counters' deltas.
func (b *bench) runCase(t *testing.T, c traffic) (string, map[string]uint64) {
	t.Helper()
	host, _ := b.caseDir(c.name)
	out := b.run(t, b.script(c), 5*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("case files kept in %s; guest script output:\n%s", host, out)
		}
	})
	before := readCounters(t, filepath.Join(host, "before"))
	after := readCounters(t, filepath.Join(host, "after"))
	return host, delta(before, after)
}

package vmbench

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The two ends: rxe0 on va, rxe1 on vb, a veth pair in the guest's one
// network namespace (rdma_rxe 6.1 listens only in the initial one).
const (
	ip4A, ip4B = "10.0.0.1", "10.0.0.2"
	ip6A, ip6B = "fd00::1", "fd00::2"
)

// setupScript makes the veth pair and the two rxe devices. Both addresses
// are local to the one namespace, so the local table would loop packets
// between them through lo: rules ahead of it (for locally sent packets
// only, iif lo) route rxe0's address to rxe1's out of va and back out of vb,
// with static neighbours (no ARP/ND noise in the captures), accept_local
// and no reverse-path filter, so that every RDMA packet really crosses the
// pair. IPv6 has no autoconfiguration or DAD, for the same quiet.
const setupScript = `set -eu
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
sysctl -qw net.ipv6.conf.default.accept_ra=0 net.ipv6.conf.default.autoconf=0 net.ipv6.conf.default.accept_dad=0
ip link set lo up
ip link add va type veth peer name vb
for d in va vb; do
  sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
  ip link set $d up
done
ip addr add 10.0.0.1/24 dev va
ip addr add 10.0.0.2/24 dev vb
ip -6 addr add fd00::1/64 dev va nodad
ip -6 addr add fd00::2/64 dev vb nodad
ma=$(cat /sys/class/net/va/address); mb=$(cat /sys/class/net/vb/address)
ip neigh replace 10.0.0.2 lladdr $mb dev va nud permanent
ip neigh replace 10.0.0.1 lladdr $ma dev vb nud permanent
ip -6 neigh replace fd00::2 lladdr $mb dev va nud permanent
ip -6 neigh replace fd00::1 lladdr $ma dev vb nud permanent
for f in "" -6; do
  ip $f rule add pref 100 table local
  ip $f rule del pref 0 table local
done
ip rule add pref 10 iif lo from 10.0.0.1 to 10.0.0.2 table 10
ip route add 10.0.0.2 dev va src 10.0.0.1 table 10
ip rule add pref 11 iif lo from 10.0.0.2 to 10.0.0.1 table 11
ip route add 10.0.0.1 dev vb src 10.0.0.2 table 11
ip -6 rule add pref 10 iif lo from fd00::1 to fd00::2 table 10
ip -6 route add fd00::2 dev va src fd00::1 table 10
ip -6 rule add pref 11 iif lo from fd00::2 to fd00::1 table 11
ip -6 route add fd00::1 dev vb src fd00::2 table 11
rdma link add rxe0 type rxe netdev va
rdma link add rxe1 type rxe netdev vb
# The GID table fills in from the addresses asynchronously.
for i in $(seq 200); do
  n=$(grep -lE '0a00:000[12]$|^fd00' /sys/class/infiniband/rxe[01]/ports/1/gids/[0-9] 2>/dev/null | wc -l)
  [ "$n" -ge 4 ] && break
  sleep 0.1
done
# rxe has 1024 GID entries; the addresses take the first few.
for d in rxe0 rxe1; do
  for i in $(seq 0 15); do
    read -r v < /sys/class/infiniband/$d/ports/1/gids/$i || continue
    [ "$v" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
    read -r ty < /sys/class/infiniband/$d/ports/1/gid_attrs/types/$i || ty=
    echo "gid $d $i $v $ty"
  done
done
rdma link show
ibv_devices
`

// setup runs setupScript and finds each device's GID index of its IPv4
// (RoCE v2, ::ffff:10.0.0.x) and IPv6 (fd00::x) address.
func (b *bench) setup() error {
	r, err := b.guest.Run(setupScript, 2*time.Minute)
	if err != nil {
		return err
	}
	if r.Code != 0 {
		return fmt.Errorf("guest network and rxe set-up exited %d:\n%s", r.Code, r.Out)
	}
	fmt.Printf("vmbench: set-up took %v\n", r.Took.Round(time.Millisecond))
	sc := bufio.NewScanner(strings.NewReader(r.Out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "gid" || !strings.Contains(strings.Join(f[4:], " "), "v2") {
			continue
		}
		i, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(f[3], ":ffff:0a00:0001") || strings.HasSuffix(f[3], ":ffff:0a00:0002"):
			b.gid[f[1]+"/4"] = i
		case strings.HasPrefix(f[3], "fd00:"):
			b.gid[f[1]+"/6"] = i
		}
	}
	for _, k := range []string{"rxe0/4", "rxe1/4", "rxe0/6", "rxe1/6"} {
		if _, ok := b.gid[k]; !ok {
			return fmt.Errorf("no RoCE v2 GID %s after set-up:\n%s", k, r.Out)
		}
	}
	return nil
}

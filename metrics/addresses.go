package metrics

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/telemetry"
)

// descAddress says which addresses the capturing host owns, so that a
// fleet view can map the flows' src and dst labels to hosts.
var descAddress = prometheus.NewDesc("ibscope_address_info",
	"An address the captured port owns (the netdev's IPs, the RDMA port's GIDs, its LID as lid:N): always 1.",
	[]string{"host", "device", "address"}, nil)

// maxAddresses bounds ibscope_address_info's series: a netdev's IPs and a
// GID table (up to 256 entries, most of them empty) fit.
const maxAddresses = 256

// addrRefresh is how long the addresses read are served before they are
// read again: a GID table is up to 256 sysfs files.
const addrRefresh = 10 * time.Second

// AddressLabel is how the flow series' src and dst labels and
// ibscope_address_info's address label write an address: an IP or GID in
// netip's form with IPv4-mapped GIDs (::ffff:a.b.c.d, RoCEv2 over IPv4)
// written as the IPv4 address they carry, and a native IB LID as "lid:N".
// "" when a is not valid.
func AddressLabel(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.Unmap().String()
}

// LIDLabel is AddressLabel for a LID.
func LIDLabel(lid uint16) string { return "lid:" + strconv.Itoa(int(lid)) }

// keyAddresses gives the src and dst labels of a flow's key: LIDs for
// native IB, addresses (or GIDs) for RoCE; "" for analyze's "other" flow.
func keyAddresses(k *analyze.GroupKey) (src, dst string) {
	if k.SLID != nil && k.DLID != nil {
		return LIDLabel(*k.SLID), LIDLabel(*k.DLID)
	}
	label := func(s string) string {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return ""
		}
		return AddressLabel(a)
	}
	return label(k.Src), label(k.Dst)
}

// readAddresses lists what the capture's port owns: the IPs of the
// netdev (Config.Netdev), the valid GIDs of the RDMA port and its LID,
// deduplicated and sorted, at most maxAddresses. ok is false when one of
// them could not be read (what was read is still returned).
func readAddresses(cfg *Config) (addrs []string, ok bool) {
	ok = true
	if cfg.Netdev != "" {
		ifc, err := net.InterfaceByName(cfg.Netdev)
		var ias []net.Addr
		if err == nil {
			ias, err = ifc.Addrs()
		}
		if err != nil {
			ok = false
		}
		for _, ia := range ias {
			if n, isNet := ia.(*net.IPNet); isNet {
				if a, valid := netip.AddrFromSlice(n.IP); valid {
					addrs = append(addrs, AddressLabel(a))
				}
			}
		}
	}
	if cfg.PortDevice != "" {
		dir := telemetry.SysfsPortDir(cfg.SysfsRoot, cfg.PortDevice, cfg.Port)
		gids, err := os.ReadDir(filepath.Join(dir, "gids"))
		if err != nil && !os.IsNotExist(err) {
			ok = false
		}
		for _, g := range gids {
			if len(addrs) >= maxAddresses {
				break
			}
			b, err := os.ReadFile(filepath.Join(dir, "gids", g.Name()))
			if err != nil {
				continue // an unset GID's file may not read (EINVAL on some kernels)
			}
			if a, err := netip.ParseAddr(strings.TrimSpace(string(b))); err == nil && !a.IsUnspecified() {
				addrs = append(addrs, AddressLabel(a))
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "lid")); err == nil {
			if lid, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "0x"), 16, 16); err == nil && lid != 0 {
				addrs = append(addrs, LIDLabel(uint16(lid)))
			}
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	if len(addrs) > maxAddresses {
		addrs = addrs[:maxAddresses]
	}
	return addrs, ok
}

// collectAddresses sends ibscope_address_info, reading the addresses again
// when those read are older than addrRefresh.
func (l *Live) collectAddresses(ch chan<- prometheus.Metric) {
	l.addrMu.Lock()
	if now := time.Now(); l.addrsRead.IsZero() || now.Sub(l.addrsRead) >= addrRefresh {
		var ok bool
		l.addrs, ok = readAddresses(&l.cfg)
		l.addrsRead = now
		if !ok {
			l.nicErrors.Add(1)
		}
	}
	addrs := l.addrs
	l.addrMu.Unlock()
	for _, a := range addrs {
		ch <- prometheus.MustNewConstMetric(descAddress, prometheus.GaugeValue, 1, l.cfg.Host, l.cfg.Device, a)
	}
}

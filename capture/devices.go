package capture

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/telemetry"
)

// DefaultSysfsRoot is where sysfs is mounted. RDMA devices are listed
// under its class/infiniband; capture, telemetry and metrics all take this
// mount point as their sysfs root.
const DefaultSysfsRoot = telemetry.DefaultSysfs

// Environment variables that point ibscope at other files than the
// system's; tests use them for a fake sysfs tree and a test double of
// libibverbs.
const (
	// EnvSysfs names a directory that replaces DefaultSysfsRoot, shaped as
	// /sys: RDMA devices, their ports and their counters are read under its
	// class/infiniband.
	EnvSysfs = "IBSCOPE_SYSFS"
	// EnvLibibverbs names the libibverbs the verbs sniffer loads instead of
	// defaultLibibverbs: a file, or a name dlopen looks up.
	EnvLibibverbs = "IBSCOPE_LIBIBVERBS"
)

// defaultLibibverbs is rdma-core's libibverbs, found along LD_LIBRARY_PATH
// and the system's library path.
const defaultLibibverbs = "libibverbs.so.1"

// SysfsRoot is the sysfs mount point ibscope reads, RDMA devices under its
// class/infiniband: $IBSCOPE_SYSFS, or DefaultSysfsRoot.
func SysfsRoot() string {
	if root := os.Getenv(EnvSysfs); root != "" {
		return root
	}
	return DefaultSysfsRoot
}

// libibverbsPath is the libibverbs to load: $IBSCOPE_LIBIBVERBS, or
// defaultLibibverbs.
func libibverbsPath() string {
	if p := os.Getenv(EnvLibibverbs); p != "" {
		return p
	}
	return defaultLibibverbs
}

// RDMADevice is an RDMA device as sysfs describes it.
type RDMADevice struct {
	Name string // device name, e.g. "mlx5_0"
	// SoftRoCE is set for a software RoCE device (rdma_rxe): the kernel runs
	// its RoCE over the netdev Parent names, so every packet it sends or
	// receives passes through that netdev, where AF_PACKET sees it. It has
	// no sniffer flow and no completion timestamps, so it is captured there.
	SoftRoCE bool
	Parent   string     // the netdev a software RoCE device is bound to
	Ports    []RDMAPort // in port-number order
}

// RDMAPort is one port of an RDMA device.
type RDMAPort struct {
	Num       int    // port number, from 1
	LinkLayer string // "InfiniBand" or "Ethernet"
	State     string // logical state, e.g. "ACTIVE", "DOWN"
	PhysState string // physical state, e.g. "LinkUp", "Disabled"
	Rate      string // as sysfs words it, e.g. "100 Gb/sec (4X EDR)"
	LID       uint16 // base LID (InfiniBand link layer), 0 when unassigned
	Netdev    string // the Ethernet netdev of a RoCE port, "" if none
}

// ListRDMADevices reads the RDMA devices under sysfs, a sysfs mount point
// (SysfsRoot() on a live system). A missing class/infiniband means no
// devices, not an error: most machines have none.
func ListRDMADevices(sysfs string) ([]RDMADevice, error) {
	class := telemetry.SysfsClassDir(sysfs)
	ents, err := os.ReadDir(class)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list RDMA devices: %w", err)
	}
	var devs []RDMADevice
	for _, e := range ents {
		dir := filepath.Join(class, e.Name())
		d := RDMADevice{Name: e.Name()}
		// Software RoCE by telemetry's rule, which gives such a
		// device's hw_counters 64 bits: one rule for both.
		if parent := telemetry.SoftRoCEParent(sysfs, e.Name()); parent != "" {
			d.SoftRoCE, d.Parent = true, parent
		}
		ports, _ := os.ReadDir(filepath.Join(dir, "ports"))
		for _, p := range ports {
			n, err := strconv.Atoi(p.Name())
			if err != nil {
				continue
			}
			p := readPort(dir, n)
			if p.Netdev == "" && d.SoftRoCE {
				p.Netdev = d.Parent // a GID table not filled in yet
			}
			d.Ports = append(d.Ports, p)
		}
		sort.Slice(d.Ports, func(i, j int) bool { return d.Ports[i].Num < d.Ports[j].Num })
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Name < devs[j].Name })
	return devs, nil
}

func readPort(devDir string, num int) RDMAPort {
	pdir := filepath.Join(devDir, "ports", strconv.Itoa(num))
	p := RDMAPort{
		Num:       num,
		LinkLayer: readSysfs(pdir, "link_layer"),
		State:     stateName(readSysfs(pdir, "state")),
		PhysState: stateName(readSysfs(pdir, "phys_state")),
		Rate:      readSysfs(pdir, "rate"),
	}
	if lid, err := strconv.ParseUint(strings.TrimPrefix(readSysfs(pdir, "lid"), "0x"), 16, 16); err == nil {
		p.LID = uint16(lid)
	}
	// A RoCE port names its netdev per GID; the first GID's is the port's.
	p.Netdev = readSysfs(pdir, "gid_attrs/ndevs/0")
	if p.Netdev == "" && p.LinkLayer == "Ethernet" {
		// Older kernels: the PCI function's netdevs, one per port in order.
		if nets, _ := os.ReadDir(filepath.Join(devDir, "device", "net")); len(nets) >= num {
			p.Netdev = nets[num-1].Name()
		}
	}
	return p
}

// stateName turns sysfs's "4: ACTIVE" into "ACTIVE".
func stateName(s string) string {
	if _, after, ok := strings.Cut(s, ": "); ok {
		return after
	}
	return s
}

func readSysfs(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func findRDMA(devs []RDMADevice, name string) *RDMADevice {
	for i := range devs {
		if devs[i].Name == name {
			return &devs[i]
		}
	}
	return nil
}

// portOfNetdev finds the RDMA port whose RoCE netdev is netdev.
func portOfNetdev(devs []RDMADevice, netdev string) (*RDMADevice, RDMAPort, bool) {
	for i, d := range devs {
		for _, p := range d.Ports {
			if p.Netdev != "" && p.Netdev == netdev {
				return &devs[i], p, true
			}
		}
	}
	return nil, RDMAPort{}, false
}

// parseRDMAName splits "mlx5_0:2" into the device and port 2; a name without
// a port suffix gives port 0, meaning the first port.
func parseRDMAName(s string) (name string, port int, err error) {
	name, ps, ok := strings.Cut(s, ":")
	if !ok {
		return s, 0, nil
	}
	port, err = strconv.Atoi(ps)
	if err != nil || port < 1 || port > 255 {
		return "", 0, fmt.Errorf("device %q: port %q after the colon is not a number from 1 to 255", s, ps)
	}
	return name, port, nil
}

// Netdev is a network interface AF_PACKET can capture on.
type Netdev struct {
	Name  string // interface name
	Up    bool   // administratively up
	MTU   int    // bytes
	Index int    // ifindex
}

// ListNetdevs returns the network interfaces of the current network
// namespace.
func ListNetdevs() []Netdev {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]Netdev, 0, len(ifs))
	for _, i := range ifs {
		out = append(out, Netdev{Name: i.Name, Up: i.Flags&net.FlagUp != 0, MTU: i.MTU, Index: i.Index})
	}
	return out
}

func netdevExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

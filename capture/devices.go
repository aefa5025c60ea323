package capture

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultSysfsRoot is where Linux lists RDMA devices.
const DefaultSysfsRoot = "/sys/class/infiniband"

// Environment variables that point ibscope at other files than the
// system's; tests use them for a fake sysfs tree and a test double of
// libibverbs.
const (
	// EnvSysfs names a directory that replaces DefaultSysfsRoot: RDMA
	// devices, their ports and their counters are read there.
	EnvSysfs = "IBSCOPE_SYSFS"
	// EnvLibibverbs names the libibverbs the verbs sniffer loads instead of
	// defaultLibibverbs: a file, or a name dlopen looks up.
	EnvLibibverbs = "IBSCOPE_LIBIBVERBS"
)

// defaultLibibverbs is rdma-core's libibverbs, found along LD_LIBRARY_PATH
// and the system's library path.
const defaultLibibverbs = "libibverbs.so.1"

// SysfsRoot is where RDMA devices are listed: $IBSCOPE_SYSFS, or
// DefaultSysfsRoot.
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
	Name  string     // device name, e.g. "mlx5_0"
	Ports []RDMAPort // in port-number order
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

// ListRDMADevices reads the RDMA devices under root (SysfsRoot() on a live
// system). A missing root means no devices, not an error: most
// machines have none.
func ListRDMADevices(root string) ([]RDMADevice, error) {
	ents, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list RDMA devices: %w", err)
	}
	var devs []RDMADevice
	for _, e := range ents {
		d := RDMADevice{Name: e.Name()}
		dir := filepath.Join(root, e.Name())
		ports, _ := os.ReadDir(filepath.Join(dir, "ports"))
		for _, p := range ports {
			n, err := strconv.Atoi(p.Name())
			if err != nil {
				continue
			}
			d.Ports = append(d.Ports, readPort(dir, n))
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

// FindRDMAPort finds the RDMA device and port that device names ("mlx5_0"
// for its first port, "mlx5_0:2") under cfg's SysfsRoot (nil: the
// defaults), as Open picks them.
func FindRDMAPort(device string, cfg *Config) (RDMADevice, RDMAPort, error) {
	name, port, err := ParseRDMAName(device)
	if err != nil {
		return RDMADevice{}, RDMAPort{}, err
	}
	c := cfg.withDefaults()
	devs, err := ListRDMADevices(c.SysfsRoot)
	if err != nil {
		return RDMADevice{}, RDMAPort{}, err
	}
	d := findRDMA(devs, name)
	if d == nil {
		return RDMADevice{}, RDMAPort{}, fmt.Errorf("no RDMA device %s under %s", name, c.SysfsRoot)
	}
	p, err := selectPort(*d, port)
	return *d, p, err
}

func findRDMA(devs []RDMADevice, name string) *RDMADevice {
	for i := range devs {
		if devs[i].Name == name {
			return &devs[i]
		}
	}
	return nil
}

// RDMAPortOfNetdev finds the RDMA port whose RoCE netdev is netdev (ok
// false when none is). RoCE traffic such a port handles in hardware never
// passes through the kernel, so an AF_PACKET capture on the netdev misses
// it: the verbs sniffer on the port sees it.
func RDMAPortOfNetdev(netdev string, cfg *Config) (dev string, port int, ok bool) {
	c := cfg.withDefaults()
	devs, err := ListRDMADevices(c.SysfsRoot)
	if err != nil {
		return "", 0, false
	}
	return portOfNetdev(devs, netdev)
}

func portOfNetdev(devs []RDMADevice, netdev string) (string, int, bool) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if p.Netdev != "" && p.Netdev == netdev {
				return d.Name, p.Num, true
			}
		}
	}
	return "", 0, false
}

// ParseRDMAName splits "mlx5_0:2" into the device and port 2; a name without
// a port suffix gives port 0, meaning the first port.
func ParseRDMAName(s string) (name string, port int, err error) {
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

package capture

import (
	"fmt"
	"strings"

	"github.com/ibscope/ibscope/telemetry"
)

// Backend is how a Target's packets are taken off the machine.
type Backend int

const (
	// BackendAFPacket is an AF_PACKET ring on a netdev (Target.Netdev), or
	// on every netdev for AnyDevice.
	BackendAFPacket Backend = iota
	// BackendVerbs is a verbs sniffer QP on an RDMA port.
	BackendVerbs
)

// Target is a capture device name resolved once, for every lookup that
// needs it: Open, TimestampTypes, the telemetry sampler, ibcap's notes and
// its pcapng interface description.
type Target struct {
	// Name is the name as given: "mlx5_0:2", "rxe0", "eth2", "any".
	Name    string
	Backend Backend
	// Device and Port are the RDMA port the name is, or the RDMA port
	// whose RoCE netdev it is; Device.Name is "" when there is none.
	Device RDMADevice
	Port   RDMAPort
	// Netdev is the network interface the AF_PACKET backend binds: the
	// name itself, or the netdev of a software RoCE device; "" for the
	// verbs backend and for AnyDevice.
	Netdev string
	// Sysfs is the sysfs mount point the device was looked up under.
	Sysfs string
}

// HasRDMAPort says whether the target is, or carries, an RDMA port: one
// whose counters describe its traffic.
func (t Target) HasRDMAPort() bool { return t.Device.Name != "" }

// PortDir is the sysfs directory of the target's RDMA port.
func (t Target) PortDir() string {
	return telemetry.SysfsPortDir(t.Sysfs, t.Device.Name, t.Port.Num)
}

// Describe says what the capture reads, for messages and for a pcapng
// file's interface description.
func (t Target) Describe() string {
	switch {
	case t.Backend == BackendVerbs:
		return fmt.Sprintf("%s port %d", t.Device.Name, t.Port.Num)
	case t.Name == AnyDevice:
		return AnyDevice
	case t.Device.SoftRoCE && t.Name != t.Netdev:
		return fmt.Sprintf("%s port %d (software RoCE) on %s", t.Device.Name, t.Port.Num, t.Netdev)
	}
	return t.Netdev
}

// BypassesKernel says whether RoCE traffic of the target's netdev may pass
// the kernel by: true for a netdev whose RDMA port is a hardware one, where
// the device handles RoCE itself and AF_PACKET sees only what the kernel
// sends or receives; false for software RoCE, which the kernel carries.
func (t Target) BypassesKernel() bool {
	return t.Backend == BackendAFPacket && t.HasRDMAPort() && !t.Device.SoftRoCE
}

// Resolve finds what name captures, under sysfs (a sysfs mount point; ""
// means SysfsRoot()). An RDMA device listed there (mlx5_0, or mlx5_0:2
// for port 2) is captured by the verbs sniffer, except a software RoCE
// device (rdma_rxe), which is captured by AF_PACKET on the netdev it is
// bound to; a network interface, or AnyDevice, by AF_PACKET. An unknown
// name returns an error that lists the devices there are.
func Resolve(name, sysfs string) (Target, error) {
	if sysfs == "" {
		sysfs = SysfsRoot()
	}
	devs, err := ListRDMADevices(sysfs)
	if err != nil {
		return Target{}, err
	}
	t := Target{Name: name, Sysfs: sysfs}
	if devName, port, err := parseRDMAName(name); err == nil {
		if d := findRDMA(devs, devName); d != nil {
			p, err := selectPort(*d, port)
			if err != nil {
				return Target{}, err
			}
			t.Device, t.Port = *d, p
			if !d.SoftRoCE {
				t.Backend = BackendVerbs
				return t, nil
			}
			if p.Netdev == "" {
				return Target{}, fmt.Errorf("%s is software RoCE, captured on its netdev, but sysfs names no netdev for port %d", d.Name, p.Num)
			}
			t.Backend, t.Netdev = BackendAFPacket, p.Netdev
			return t, nil
		}
	}
	if name == AnyDevice {
		return t, nil
	}
	if !netdevExists(name) {
		return Target{}, unknownDeviceError(name, devs)
	}
	t.Netdev = name
	if d, p, ok := portOfNetdev(devs, name); ok {
		t.Device, t.Port = *d, p
	}
	return t, nil
}

func unknownDeviceError(device string, devs []RDMADevice) error {
	var rdma, nets []string
	for _, d := range devs {
		rdma = append(rdma, d.Name)
	}
	for _, n := range ListNetdevs() {
		nets = append(nets, n.Name)
	}
	return fmt.Errorf("no capture device %q: RDMA devices: %s; network interfaces: %s", device, namesOrNone(rdma), namesOrNone(nets))
}

// namesOrNone lists names for a message, "none" when there are none.
func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

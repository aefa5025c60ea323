package main

import (
	"fmt"
	"net"
	"strconv"

	"github.com/ibscope/ibscope/capture"
)

// captureTargets lists what -D numbers, in its order: the RDMA ports
// (as -i takes them, mlx5_0:1), then the network interfaces, then any.
func captureTargets(devs []capture.RDMADevice, nets []capture.Netdev) []string {
	var out []string
	for _, d := range devs {
		for _, p := range d.Ports {
			out = append(out, fmt.Sprintf("%s:%d", d.Name, p.Num))
		}
	}
	for _, n := range nets {
		out = append(out, n.Name)
	}
	return append(out, capture.AnyDevice)
}

// interfaceByNumber turns "-i 2" into the second line -D lists, as tcpdump
// and dumpcap take the numbers their -D prints. A network interface that
// is named by a number keeps its name.
func interfaceByNumber(f *flags) error {
	n, err := strconv.Atoi(f.device)
	if err != nil {
		return nil
	}
	if _, err := net.InterfaceByName(f.device); err == nil {
		return nil
	}
	devs, err := capture.ListRDMADevices(capture.SysfsRoot())
	if err != nil {
		return err
	}
	targets := captureTargets(devs, capture.ListNetdevs())
	if n < 1 || n > len(targets) {
		return fmt.Errorf("-i %d: ibcap -D numbers %d interfaces, 1 to %d", n, len(targets), len(targets))
	}
	f.device = targets[n-1]
	return nil
}

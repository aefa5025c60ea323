package main

import (
	"fmt"
	"strings"

	"github.com/ibscope/ibscope/capture"
)

// portFlag takes --port N, the RDMA port of -i DEVICE (what Wireshark's
// extcap dialog passes): -i mlx5_0 --port 2 is -i mlx5_0:2.
func portFlag(f *flags) error {
	if f.port == 0 {
		return nil
	}
	if f.port < 1 || f.port > 255 {
		return fmt.Errorf("--port %d: RDMA ports are numbered 1 to 255", f.port)
	}
	if f.ibdumpDev != "" {
		return fmt.Errorf("--port %d and -d %s: with -d, -i is the port; give one of them", f.port, f.ibdumpDev)
	}
	if strings.Contains(f.device, ":") {
		return fmt.Errorf("--port %d and -i %s: the port is named twice; give one", f.port, f.device)
	}
	devs, err := capture.ListRDMADevices(capture.SysfsRoot())
	if err != nil {
		return err
	}
	for _, d := range devs {
		if d.Name == f.device {
			f.device = fmt.Sprintf("%s:%d", f.device, f.port)
			return nil
		}
	}
	return fmt.Errorf("--port %d: -i %q is not an RDMA device (ibcap -D lists them); a network interface has no RDMA port to choose", f.port, f.device)
}

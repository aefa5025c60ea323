package main

import (
	"strconv"
	"testing"

	"github.com/ibscope/ibscope/capture"
)

// -D numbers RDMA ports first, then network interfaces, then any; -i N
// takes the N-th, and a number beyond the list is refused.
func TestInterfaceByNumber(t *testing.T) {
	devs := []capture.RDMADevice{{Name: "mlx5_0", Ports: []capture.RDMAPort{{Num: 1}, {Num: 2}}}}
	nets := []capture.Netdev{{Name: "eth2"}}
	if got := captureTargets(devs, nets); len(got) != 4 || got[0] != "mlx5_0:1" || got[1] != "mlx5_0:2" || got[2] != "eth2" || got[3] != "any" {
		t.Errorf("targets %q", got)
	}

	t.Setenv(capture.EnvSysfs, t.TempDir()) // no RDMA devices
	nets = capture.ListNetdevs()
	if len(nets) == 0 {
		t.Skip("no network interfaces")
	}
	f := flags{device: "1"}
	if err := interfaceByNumber(&f); err != nil || f.device != nets[0].Name {
		t.Errorf("-i 1: %q, %v; want %q", f.device, err, nets[0].Name)
	}
	f = flags{device: strconv.Itoa(len(nets) + 1)}
	if err := interfaceByNumber(&f); err != nil || f.device != capture.AnyDevice {
		t.Errorf("-i %d, the last -D lists: %q, %v; want any", len(nets)+1, f.device, err)
	}
	f = flags{device: "1000"}
	if err := interfaceByNumber(&f); err == nil {
		t.Errorf("-i 1000 accepted as %q", f.device)
	}
	f = flags{device: "eth2"}
	if err := interfaceByNumber(&f); err != nil || f.device != "eth2" {
		t.Errorf("a name: %q, %v", f.device, err)
	}
}

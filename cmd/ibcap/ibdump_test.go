package main

import (
	"strings"
	"testing"
)

// ibdump -d mlx5_0 -i 2 is ibcap -i mlx5_0:2; -d alone is port 1.
func TestIbdumpDevice(t *testing.T) {
	for _, c := range []struct{ dev, port, want string }{
		{"mlx5_0", "", "mlx5_0:1"},
		{"mlx5_0", "2", "mlx5_0:2"},
		{"", "eth2", "eth2"},
	} {
		f := flags{ibdumpDev: c.dev, device: c.port, quiet: true}
		if err := ibdumpDevice(&f); err != nil || f.device != c.want {
			t.Errorf("-d %q -i %q: %q, %v; want %q", c.dev, c.port, f.device, err, c.want)
		}
	}
	for _, c := range []struct{ dev, port string }{{"mlx5_0", "eth2"}, {"mlx5_0", "0"}, {"mlx5_0:2", ""}} {
		f := flags{ibdumpDev: c.dev, device: c.port, quiet: true}
		if err := ibdumpDevice(&f); err == nil {
			t.Errorf("-d %q -i %q accepted as %q", c.dev, c.port, f.device)
		}
	}
}

// ibdump's -s is "silent": ibcap's answer says so.
func TestIbdumpSilentFlag(t *testing.T) {
	_, stderr, code := runIbcap(t, nil, "-d", "mlx5_0", "-s", "-w", "x.pcap")
	if code != 1 || !strings.Contains(stderr, "ibdump's -s, silent, is -q") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

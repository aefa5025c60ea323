package capture

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/telemetry"
)

// fakeSysfs builds a sysfs tree and returns its mount point: under
// class/infiniband, mlx5_0 with an IB port, mlx5_1 with two RoCE ports,
// and rxe0, software RoCE (rdma_rxe) on softNetdev.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, "class", "infiniband", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mlx5_0/ports/1/link_layer", "InfiniBand")
	write("mlx5_0/ports/1/state", "4: ACTIVE")
	write("mlx5_0/ports/1/phys_state", "5: LinkUp")
	write("mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)")
	write("mlx5_0/ports/1/lid", "0x1a")
	write("mlx5_0/ports/1/hw_counters/out_of_buffer", "1000")
	for _, p := range []string{"1", "2"} {
		write("mlx5_1/ports/"+p+"/link_layer", "Ethernet")
		write("mlx5_1/ports/"+p+"/state", "1: DOWN")
		write("mlx5_1/ports/"+p+"/phys_state", "3: Disabled")
		write("mlx5_1/ports/"+p+"/rate", "40 Gb/sec (4X QDR)")
		write("mlx5_1/ports/"+p+"/lid", "0x0")
	}
	write("mlx5_1/ports/1/gid_attrs/ndevs/0", "eth2")
	write("mlx5_1/ports/1/counters/port_xmit_data", "1000")
	write("mlx5_1/ports/1/counters/port_xmit_wait", "7")
	write("mlx5_1/ports/1/hw_counters/np_cnp_sent", "3")
	// Port 2 has no GID netdev: the older kernels' device/net listing names it.
	for _, n := range []string{"eth2", "eth3"} {
		if err := os.MkdirAll(filepath.Join(root, "class", "infiniband", "mlx5_1/device/net", n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// As rdma_rxe shows a device: a parent attribute naming the netdev,
	// no device link, one Ethernet port whose GIDs name the netdev, and
	// 64-bit software counters in hw_counters.
	write("rxe0/parent", softNetdev)
	write("rxe0/node_type", "1: CA")
	write("rxe0/ports/1/link_layer", "Ethernet")
	write("rxe0/ports/1/state", "4: ACTIVE")
	write("rxe0/ports/1/phys_state", "5: LinkUp")
	write("rxe0/ports/1/rate", "10 Gb/sec (1X QDR)")
	write("rxe0/ports/1/gid_attrs/ndevs/0", softNetdev)
	write("rxe0/ports/1/hw_counters/sent_pkts", "5000000000")
	write("rxe0/ports/1/hw_counters/rcvd_pkts", "2500")
	return root
}

// softNetdev is the netdev of fakeSysfs's rxe0: the capture side of the
// test namespaces (testnetns), so that rxe0 resolves to a netdev there.
const softNetdev = "vcap"

func TestListRDMADevices(t *testing.T) {
	devs, err := ListRDMADevices(fakeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 3 || devs[0].Name != "mlx5_0" || devs[1].Name != "mlx5_1" || devs[2].Name != "rxe0" {
		t.Fatalf("devices %+v", devs)
	}
	if devs[0].SoftRoCE || devs[1].SoftRoCE || !devs[2].SoftRoCE || devs[2].Parent != softNetdev || devs[2].Ports[0].Netdev != softNetdev {
		t.Errorf("software RoCE: %+v", devs)
	}
	ib := devs[0].Ports[0]
	if ib.LinkLayer != "InfiniBand" || ib.State != "ACTIVE" || ib.PhysState != "LinkUp" || ib.Rate != "100 Gb/sec (4X EDR)" || ib.LID != 0x1a || ib.Netdev != "" {
		t.Errorf("IB port %+v", ib)
	}
	if p := devs[1].Ports; len(p) != 2 || p[0].Netdev != "eth2" || p[1].Netdev != "eth3" || p[1].State != "DOWN" {
		t.Errorf("RoCE ports %+v", p)
	}
	none, err := ListRDMADevices(filepath.Join(t.TempDir(), "absent"))
	if err != nil || len(none) != 0 {
		t.Errorf("missing root: %v, %v", none, err)
	}
}

func TestParseRDMAName(t *testing.T) {
	for in, want := range map[string]struct {
		name string
		port int
	}{"mlx5_0": {"mlx5_0", 0}, "mlx5_0:2": {"mlx5_0", 2}} {
		n, p, err := parseRDMAName(in)
		if err != nil || n != want.name || p != want.port {
			t.Errorf("%s: %s %d %v", in, n, p, err)
		}
	}
	for _, bad := range []string{"mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:256"} {
		if _, _, err := parseRDMAName(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// An unknown device's error lists the devices there are.
func TestOpenUnknownDevice(t *testing.T) {
	_, err := Open("nosuch0", &Config{SysfsRoot: fakeSysfs(t)})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"nosuch0"`, "mlx5_0", "mlx5_1", "rxe0", "lo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// An RDMA device opens the verbs backend: against the libibverbs test
// double, a port the device lacks is named with the ones it has, and a
// device sysfs lists but libibverbs does not (no provider for it) is
// blamed on the library.
func TestOpenVerbsErrorPaths(t *testing.T) {
	devs := fakeverbs.DefaultDevices()
	devs = append(devs, fakeverbs.Device{Name: "mlx5_9", Ports: devs[0].Ports, NotInLibrary: true})
	env := fakeverbs.New(t, fakeverbs.Config{Devices: devs})
	env.Setenv(t)
	cfg := &Config{SysfsRoot: env.Sysfs}
	if _, err := Open("fake_0:3", cfg); err == nil || !strings.Contains(err.Error(), "no port 3 (ports: 1)") {
		t.Errorf("port 3: %v", err)
	}
	_, err := Open("mlx5_9", cfg)
	if err == nil {
		t.Fatal("opened a device libibverbs does not list")
	}
	if errors.Is(err, ErrVerbsUnavailable) {
		testenv.SkipOrFail(t, "%v", err)
	}
	env.RequireLoaded(t)
	if !errors.Is(err, errNoDevice) || !strings.Contains(err.Error(), "mlx5_9") {
		t.Errorf("error %q: want the libibverbs listing blamed", err)
	}
	env.NoViolations(t)
}

func TestSelectPortAndLinkType(t *testing.T) {
	devs, _ := ListRDMADevices(fakeSysfs(t))
	p, err := selectPort(devs[1], 2)
	if err != nil || p.Num != 2 || portLinkType(p) != 1 {
		t.Errorf("mlx5_1:2 = %+v, %v", p, err)
	}
	p, err = selectPort(devs[0], 0)
	if err != nil || p.Num != 1 || portLinkType(p) != 247 || portFrameBytes(p) != verbsIBFrameBytes {
		t.Errorf("mlx5_0 default port = %+v, %v", p, err)
	}
	if _, err := selectPort(RDMADevice{Name: "x"}, 0); err == nil {
		t.Error("device without ports accepted")
	}
}

func TestDropCounter(t *testing.T) {
	root := fakeSysfs(t)
	port := func(dev string) string { return telemetry.SysfsPortDir(root, dev, 1) }
	d := newDropCounter(port("mlx5_0"))
	path := filepath.Join(port("mlx5_0"), "hw_counters/out_of_buffer")
	os.WriteFile(path, []byte("1042\n"), 0o644)
	if n, ok := d.drops(); !ok || n != 42 {
		t.Errorf("drops %d %v, want 42", n, ok)
	}
	os.WriteFile(path, []byte("5\n"), 0o644) // counter reset by the driver
	if n, ok := d.drops(); !ok || n != 5 {
		t.Errorf("after reset: %d %v, want 5", n, ok)
	}
	if _, ok := newDropCounter(port("mlx5_1")).drops(); ok {
		t.Error("a port without out_of_buffer reported drops")
	}
}

// Resolve decides each name's backend, RDMA port and netdev once: verbs
// for a hardware RDMA port, AF_PACKET for a netdev (naming its RDMA port
// when it is a RoCE netdev) and for software RoCE, on its netdev.
func TestResolve(t *testing.T) {
	root := fakeSysfs(t)
	for _, c := range []struct {
		name    string
		backend Backend
		dev     string
		port    int
		netdev  string
		bypass  bool
	}{
		{"mlx5_0", BackendVerbs, "mlx5_0", 1, "", false},
		{"mlx5_1:2", BackendVerbs, "mlx5_1", 2, "", false},
		{"lo", BackendAFPacket, "", 0, "lo", false},
		{"any", BackendAFPacket, "", 0, "", false},
	} {
		tg, err := Resolve(c.name, root)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if tg.Backend != c.backend || tg.Device.Name != c.dev || tg.Port.Num != c.port || tg.Netdev != c.netdev || tg.BypassesKernel() != c.bypass {
			t.Errorf("%s: %+v", c.name, tg)
		}
		if c.dev != "" && tg.PortDir() != filepath.Join(root, "class/infiniband", c.dev, "ports", strconv.Itoa(c.port)) {
			t.Errorf("%s: port directory %s", c.name, tg.PortDir())
		}
	}
	// Names that need their netdev to exist: in the test namespace, whose
	// capture side is rxe0's netdev.
	ns := newVethNS(t)
	if ns.Capture != softNetdev {
		t.Fatalf("the namespace's capture side is %s, not %s", ns.Capture, softNetdev)
	}
	err := ns.Do(t, func() error {
		for _, name := range []string{"rxe0", "rxe0:1", softNetdev} {
			tg, err := Resolve(name, root)
			if err != nil {
				return err
			}
			if tg.Backend != BackendAFPacket || tg.Netdev != softNetdev || tg.Device.Name != "rxe0" || tg.Port.Num != 1 || tg.BypassesKernel() {
				t.Errorf("%s: %+v", name, tg)
			}
			if types, err := tg.TimestampTypes(); err != nil || len(types) != 1 || types[0] != TimestampHost {
				t.Errorf("%s: time stamp types %v, %v: want what the veth offers, host", name, types, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve("rxe0:2", root); err == nil || !strings.Contains(err.Error(), "no port 2") {
		t.Errorf("rxe0:2: %v", err)
	}
}

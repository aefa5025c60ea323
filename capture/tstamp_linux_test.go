package capture

import (
	"strings"
	"testing"

	"github.com/gopacket/gopacket/afpacket"
	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testenv"
)

// The socket gopacket keeps unexported is reachable, and is the packet
// socket: the pinned gopacket still names it fd.
func TestTPacketFD(t *testing.T) {
	testenv.MustBeRoot(t, "opens an AF_PACKET socket")
	tp, err := afpacket.NewTPacket(afpacket.OptInterface("lo"), afpacket.TPacketVersion3)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Close()
	fd, err := tpacketFD(tp)
	if err != nil {
		t.Fatal(err)
	}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || domain != unix.AF_PACKET {
		t.Errorf("fd %d: domain %d, %v; want AF_PACKET", fd, domain, err)
	}
}

// A veth stamps nothing in hardware: host only, and adapter_unsynced is
// refused naming what there is. An RDMA port offers adapter only.
func TestTimestampTypes(t *testing.T) {
	ns := newVethNS(t)
	var types []string
	if err := ns.Do(t, func() (err error) { types, err = timestampTypes(ns.Capture, t.TempDir()); return err }); err != nil {
		t.Fatal(err)
	}
	if len(types) != 1 || types[0] != TimestampHost {
		t.Errorf("veth: %v, want [host]", types)
	}
	err := ns.Do(t, func() error {
		_, err := Open(ns.Capture, &Config{TimestampType: TimestampAdapterUnsynced, SysfsRoot: t.TempDir()})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "it offers [host]") {
		t.Errorf("adapter_unsynced on a veth: %v", err)
	}

	env := fakeverbs.New(t, fakeverbs.Config{})
	if types, err := timestampTypes("fake_1", env.Sysfs); err != nil || len(types) != 1 || types[0] != TimestampAdapter {
		t.Errorf("RDMA device: %v, %v", types, err)
	}
	// Refused before libibverbs is loaded.
	if _, err := Open("fake_1", &Config{TimestampType: TimestampHost, SysfsRoot: env.Sysfs}); err == nil || !strings.Contains(err.Error(), "offers [adapter]") {
		t.Errorf("host on an RDMA device: %v", err)
	}
	if err := checkTimestampType("x", "bogus", nil); err == nil || !strings.Contains(err.Error(), "want host, adapter or adapter_unsynced") {
		t.Errorf("bogus: %v", err)
	}
}

// timestampTypes is what -J lists for device: its target's types.
func timestampTypes(device, sysfs string) ([]string, error) {
	t, err := Resolve(device, sysfs)
	if err != nil {
		return nil, err
	}
	return t.TimestampTypes()
}

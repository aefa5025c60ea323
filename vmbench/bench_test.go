package vmbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/vm"
)

// bench is the one booted guest every test shares: booting is the
// expensive part (about 11 s with TCG on an idle machine).
type bench struct {
	guest   *vm.Guest
	dir     string         // host folder: initramfs, console log, share
	bin     string         // guest path of ibcap and ibanalyze
	hostBin string         // host path of the same
	gid     map[string]int // "rxe0/4", "rxe1/6": GID index of the IPv4 and IPv6 address
	failed  bool
}

var (
	benchOnce sync.Once
	benchErr  error
	theBench  *bench
)

func TestMain(m *testing.M) {
	code := m.Run()
	if theBench != nil {
		theBench.close(code != 0)
	}
	os.Exit(code)
}

// need returns the booted bench, booting it on first use; without qemu or
// outside make vmtest the test skips (CI fails instead).
func need(t *testing.T) *bench {
	t.Helper()
	if os.Getenv("IBSCOPE_VMBENCH") == "" {
		t.Skip("the SoftRoCE VM bench runs under make vmtest (IBSCOPE_VMBENCH=1), which make test runs after the unit tests")
	}
	benchOnce.Do(func() { theBench, benchErr = boot() })
	if benchErr != nil {
		if !skippable(benchErr) {
			t.Fatalf("VM bench: %v", benchErr)
		}
		testenv.SkipOrFail(t, "VM bench: %v", benchErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			theBench.failed = true
		}
	})
	return theBench
}

// missingTool is a reason to skip outside CI: the machine lacks what make
// vmtest installs.
type missingTool struct{ err error }

func (m missingTool) Error() string { return m.err.Error() }

func skippable(err error) bool { _, ok := err.(missingTool); return ok }

// guestModules are what the guest loads: virtio and 9p for its root, the
// RDMA stack (rxe computes its ICRC with the crypto API's crc32, which the
// kernel would otherwise ask modprobe for), veth and netem.
var guestModules = []string{"virtio_pci", "9pnet_virtio", "9p", "crc32_generic", "rdma_rxe", "ib_uverbs", "rdma_ucm", "veth", "sch_netem"}

func boot() (*bench, error) {
	b, err := bootOnly()
	if err != nil {
		return nil, err
	}
	if err := b.setup(); err != nil {
		b.close(true)
		return nil, err
	}
	return b, nil
}

// bootOnly fetches the kernel, builds the commands and boots the guest.
func bootOnly() (*bench, error) {
	for _, tool := range []string{"qemu-system-x86_64", "busybox", "apt-get", "dpkg-deb", "tshark", "ib_write_bw", "rping", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, missingTool{fmt.Errorf("needs %s (make vmtest installs it): %w", tool, err)}
		}
	}
	for _, h := range []string{"/usr/include/infiniband/verbs.h", "/usr/include/rdma/rdma_cma.h"} {
		if _, err := os.Stat(h); err != nil {
			return nil, missingTool{fmt.Errorf("needs %s to build immwrite (make vmtest installs libibverbs-dev and librdmacm-dev): %w", h, err)}
		}
	}
	cache, err := vm.CacheDir()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	k, err := vm.StockKernel(cache)
	if err != nil {
		return nil, err
	}
	fmt.Printf("vmbench: kernel %s from %s (%v)\n", k.Version, k.Root, time.Since(start).Round(time.Millisecond))
	dir, err := os.MkdirTemp("", "ibscope-vmbench-")
	if err != nil {
		return nil, err
	}
	b := &bench{dir: dir, bin: vm.GuestShare + "/bin", hostBin: filepath.Join(dir, "share", "bin"), gid: map[string]int{}}
	if out, err := exec.Command("go", "build", "-o", b.hostBin+"/", "../cmd/ibcap", "../cmd/ibanalyze").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build ibcap and ibanalyze: %v: %s", err, out)
	}
	// immwrite posts RDMA WRITE with immediate, which Debian 12's perftest
	// cannot; the guest runs it from the share like ibcap.
	if out, err := exec.Command("gcc", "-O2", "-Wall", "-Werror", "-o", b.hostBin+"/immwrite",
		"testdata/immwrite/immwrite.c", "-libverbs", "-lrdmacm").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build testdata/immwrite: %v: %s", err, out)
	}
	g, err := vm.Boot(vm.Config{
		Kernel: k, Modules: guestModules, Dir: dir,
		BootTimeout: 3 * time.Minute, KVMTimeout: 20 * time.Second,
	})
	if err != nil {
		fmt.Printf("vmbench: guest output and files kept in %s\n", dir)
		return nil, err
	}
	b.guest = g
	for _, e := range g.Tried {
		fmt.Printf("vmbench: %s\n", e)
	}
	fmt.Printf("vmbench: guest booted with %s in %v; console %s\n", g.Accel, g.Boot.Round(time.Millisecond), g.Console)
	return b, nil
}

// close stops the guest; after a failure it keeps the folder (console
// log, captures) and prints the console's tail for the test log.
func (b *bench) close(failed bool) {
	if b.guest != nil {
		b.guest.Close()
	}
	if failed || b.failed {
		fmt.Printf("vmbench: guest output and captures kept in %s\n", b.dir)
		if b.guest != nil {
			if out, err := os.ReadFile(b.guest.Console); err == nil {
				lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
				if len(lines) > 60 {
					lines = lines[len(lines)-60:]
				}
				fmt.Printf("vmbench: last lines of the guest console:\n%s\n", strings.Join(lines, "\n"))
			}
		}
		return
	}
	os.RemoveAll(b.dir)
}

// run runs a script in the guest; a failure to get its result, or a
// non-zero exit, fails the test with its output.
func (b *bench) run(t *testing.T, script string, timeout time.Duration) string {
	t.Helper()
	r, err := b.guest.Run(script, timeout)
	if err != nil {
		t.Fatalf("guest: %v", err)
	}
	if r.Code != 0 {
		t.Fatalf("guest script exited %d:\n%s\nscript:\n%s", r.Code, r.Out, script)
	}
	return r.Out
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capture"
)

// writeSysfs writes a sysfs tree with one RDMA device of one InfiniBand
// port, for IBSCOPE_SYSFS, and returns its mount point.
func writeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"link_layer": "InfiniBand", "state": "4: ACTIVE", "phys_state": "5: LinkUp",
		"rate": "100 Gb/sec (4X EDR)", "lid": "0x1a",
	} {
		p := filepath.Join(root, "class", "infiniband", "mlx5_0", "ports", "1", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runIbcap runs ibcap with env added and returns stdout, stderr and the
// exit code.
func runIbcap(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(ibcapBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// Without libibverbs (or with a library lacking the verbs), -D still lists
// the RDMA devices of sysfs and the netdevs, then says in one line what to
// install, and exits 1; -i on an RDMA device says the same and creates no
// file. No RDMA device, no complaint.
func TestDevicesWithoutLibibverbs(t *testing.T) {
	sysfs := capture.EnvSysfs + "=" + writeSysfs(t)
	for _, c := range []struct {
		lib, says string
	}{
		{"/nonexistent/libibverbs.so.1", "/nonexistent/libibverbs.so.1: cannot open shared object file"},
		{"libc.so.6", "libc.so.6 lacks ibv_get_device_list"},
	} {
		env := []string{sysfs, capture.EnvLibibverbs + "=" + c.lib}
		stdout, stderr, code := runIbcap(t, env, "-D")
		for _, want := range []string{"mlx5_0:1", "InfiniBand", "0x1a", "NETWORK INTERFACE", "lo ", "any  "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: -D lacks %q:\n%s", c.lib, want, stdout)
			}
		}
		checkOneLine(t, "-D with "+c.lib, stderr, code, c.says)

		out := filepath.Join(t.TempDir(), "x.pcap")
		_, stderr, code = runIbcap(t, env, "-i", "mlx5_0", "-w", out)
		checkOneLine(t, "-i mlx5_0 with "+c.lib, stderr, code, c.says)
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the capture file was created", c.lib)
		}
	}

	empty := capture.EnvSysfs + "=" + t.TempDir()
	if _, stderr, code := runIbcap(t, []string{empty, capture.EnvLibibverbs + "=/nonexistent/x.so"}, "-D"); code != 0 || stderr != "" {
		t.Errorf("-D without RDMA devices: exit %d, %q", code, stderr)
	}
}

func checkOneLine(t *testing.T, what, stderr string, code int, says string) {
	t.Helper()
	if code != 1 {
		t.Errorf("%s: exit %d, want 1", what, code)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("%s: more than one line:\n%s", what, stderr)
	}
	for _, want := range []string{says, "libibverbs1", "ibverbs-providers"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("%s: %q lacks %q", what, stderr, want)
		}
	}
}

package capture

import (
	"os"
	"os/exec"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// requireRoot skips unless the test can create namespaces and AF_PACKET
// sockets.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces, veth pairs and AF_PACKET sockets (CI runs it as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip command")
	}
}

// requireTool skips without the command name, or fails under CI=true,
// where every tool is installed.
func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("needs %s, and CI installs it: %v", name, err)
		}
		t.Skipf("needs %s (installed by the Makefile's test dependencies)", name)
	}
}

// readAll reads every record of a capture file.
func readAll(t *testing.T, path string) (recs [][]byte, frames []decode.Frame) {
	t.Helper()
	recs, frames, err := testcap.FileRecords(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs, frames
}

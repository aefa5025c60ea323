package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/cmdtest"
)

// ibanalyzeBin is the command built once for every test in this package:
// tests run it as a user would and look at stdout, stderr and the exit code.
var ibanalyzeBin string

func TestMain(m *testing.M) { cmdtest.Main(m, "ibanalyze", &ibanalyzeBin) }

// run runs ibanalyze with args and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return cmdtest.Run(t, ibanalyzeBin, args...)
}

// sharedPcap returns the path of a real capture in ../shared/pcaps, skipping
// the test when the folder is not beside the repository.
func sharedPcap(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "pcaps", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real captures not available (%s): %v", p, err)
	}
	return p
}

// runOK is run for a command that must succeed: it stops the test, showing
// stderr, unless the exit code is 0, and returns stdout.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	return out
}

// wantInOutput reports each of wants that out lacks.
func wantInOutput(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

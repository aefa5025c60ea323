package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ibanalyzeBin is the command built once for every test in this package:
// tests run it as a user would and look at stdout, stderr and the exit code.
var ibanalyzeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibanalyze-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ibanalyzeBin = filepath.Join(dir, "ibanalyze")
	if out, err := exec.Command("go", "build", "-o", ibanalyzeBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build ibanalyze: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs ibanalyze with args and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(ibanalyzeBin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run ibanalyze %v: %v", args, err)
	}
	return o.String(), e.String(), code
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

// Package cmdtest builds an ibscope command once for its package's tests
// and runs it as a user would, so that the tests see its stdout, stderr and
// exit code.
package cmdtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main is a TestMain: it builds the command in the current directory (the
// package under test) as *bin, in a temporary directory that every user may
// read (tests that drop privileges run it too), runs the tests, removes the
// directory and exits with the tests' code. A failed build exits 2.
func Main(m *testing.M, name string, bin *string) {
	dir, err := os.MkdirTemp("", name+"-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	*bin = filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", *bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	os.Chmod(dir, 0o755)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Run runs bin with args and returns its stdout, stderr and exit code; a
// command that cannot be started stops the test.
func Run(t testing.TB, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s %v: %v", filepath.Base(bin), args, err)
	}
	return o.String(), e.String(), code
}

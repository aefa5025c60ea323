package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// InCI reports whether the tests run under CI: CI set to a true value
// (true, 1), as CI systems and .ci/run set it.
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// SkipOrFail stops the test for want of something the machine lacks: a
// skip saying why, or under CI a failure, since CI must have it.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatal(why + " (CI must run this test: make deps installs what it needs, and CI runs as root)")
	}
	t.Skip(why)
}

// MustBeRoot stops the test (SkipOrFail) unless it runs as root; what
// says what the test does that needs root.
func MustBeRoot(t testing.TB, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		SkipOrFail(t, "needs root: %s", what)
	}
}

// MustHaveTool returns the path of the command name, or stops the test
// (SkipOrFail) when it is not installed.
func MustHaveTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, "needs %s, which is not installed (make deps installs it)", name)
	}
	return path
}

package testenv

import (
	"testing"

	"golang.org/x/sys/unix"
)

// SmallTmpfs mounts a tmpfs of size (mount's size=, e.g. "64k"): a real
// file system that fills up, for the test's life, and returns where. It
// needs root (MustBeRoot).
func SmallTmpfs(t testing.TB, size string) string {
	t.Helper()
	MustBeRoot(t, "mounts a small tmpfs that fills up")
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		SkipOrFail(t, "cannot mount a tmpfs of %s on %s: %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the test's tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

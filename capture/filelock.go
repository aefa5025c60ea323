package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A fileLock is the lock a capture holds on its output name for as long
// as it writes: two captures given the same -w would otherwise both
// truncate and write the file (or the same rotated files, or the same
// telemetry sidecar), and each would lose the other's packets while both
// report them written.
//
// The lock is flock(2) on a small file beside the output, .NAME.lock,
// which holds the owner's PID. A file beside it, not the capture file
// itself, because rotation (-C, -G, -W) writes many files under one
// name, closing each in turn, and because the output must be locked
// before it is truncated. The kernel drops the lock when the process
// ends however it ends; a lock file a killed capture leaves behind locks
// nothing.
type fileLock struct {
	f    *os.File
	path string
}

// lockFileName is the lock file of the capture file path.
func lockFileName(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".lock")
}

// lockOutput takes the lock of the capture file path, or says which
// process holds it. Outputs that are not regular files (stdout, a FIFO,
// a character device such as /dev/null) take no lock: what they receive
// is not kept under a name.
func lockOutput(path string) (*fileLock, error) {
	if path == "-" {
		return nil, nil
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a device, a FIFO, a link (refused when opened) or an error the open reports
	}
	name := lockFileName(path)
	// The lock file may be removed by its owner between our open and our
	// flock (at the end of its capture): a lock on an unlinked file locks
	// nothing, so it is taken again until the file locked is the one under
	// the name.
	for range 8 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s against a second capture: %w", path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			owner := readLockOwner(f)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s is being written by another capture (%s, lock %s): a second capture into the same file would lose packets; stop that one or give another -w", path, owner, name)
			}
			return nil, fmt.Errorf("lock %s against a second capture: flock %s: %w", path, name, err)
		}
		held, err1 := f.Stat()
		named, err2 := os.Lstat(name)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			l := &fileLock{f: f, path: name}
			l.writeOwner()
			return l, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("lock %s against a second capture: %s keeps being replaced", path, name)
}

// writeOwner puts this process's PID in the lock file, for the message
// of a capture that finds it locked.
func (l *fileLock) writeOwner() {
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// readLockOwner names the process that wrote its PID in the lock file f.
func readLockOwner(f *os.File) string {
	b := make([]byte, 24)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "a process that has not yet written its PID"
	}
	return "PID " + strconv.Itoa(pid)
}

// unlock removes the lock file and releases the lock: in that order, so
// that a capture waiting for it (see lockOutput) never holds a lock on a
// file that is no longer the lock. nil unlocks nothing.
func (l *fileLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}

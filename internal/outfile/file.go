package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// File is one output being written: under a temporary name until Commit,
// or straight to a device or FIFO.
type File struct {
	path    string   // the final name, as given
	root    *os.Root // the directory the names below are in
	ownRoot bool     // root was opened for this file alone and closes with it
	name    string   // the final name inside root
	tmp     string   // the temporary name inside root; "" when writing through
	f       *os.File
	err     error // the first write error
	closed  bool
	done    bool // committed or aborted
}

// Create starts writing path by the package's rule: a new or regular file
// goes to a temporary file renamed into place by Commit; a character device
// or FIFO is written through; anything else, a symbolic link above all, is
// refused. Links under /dev (/dev/stdout, /dev/fd/1) are the system's own
// names for open descriptors and are written through, never replaced.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("create %s: not a file name", path)
	}
	if systemLink(path) {
		return openSystemLink(path)
	}
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	f, err := create(root, base, path)
	if err != nil {
		root.Close()
		return nil, err
	}
	f.ownRoot = true
	return f, nil
}

// Check refuses, before a command does its work, what Create would refuse
// once the work is done: a path that names no file, in a folder that is
// not there, or a symbolic link, directory, socket or block device. It
// creates nothing; Create checks again, as the file system may change in
// between.
func Check(path string) error {
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("create %s: not a file name", path)
	}
	if systemLink(path) {
		return nil
	}
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	defer root.Close()
	fi, err := root.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	return refusal(fi.Mode(), path)
}

// refusal says why Create does not write what Lstat found at path: nil for
// a regular file, a character device or a FIFO.
func refusal(m fs.FileMode, path string) error {
	switch {
	case m.IsRegular(), writesThrough(m):
		return nil
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("create %s: is a symbolic link; refusing to follow or replace it (give the file it points to instead)", path)
	}
	return fmt.Errorf("create %s: is a %s; want a regular file, a character device or a FIFO", path, kind(m))
}

// create is Create for name inside root; path names it in messages.
func create(root *os.Root, name, path string) (*File, error) {
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	case refusal(fi.Mode(), path) != nil:
		return nil, refusal(fi.Mode(), path)
	case writesThrough(fi.Mode()):
		f, err := root.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
		}
		if err := checkOpened(f, path); err != nil {
			return nil, err
		}
		return &File{path: path, root: root, name: name, f: f}, nil
	}
	dir, base := filepath.Split(name)
	for range 100 {
		out := &File{path: path, root: root, name: name}
		out.tmp = dir + "." + base + "." + strconv.FormatUint(rand.Uint64(), 36) + ".tmp"
		err := createPending(out.tmpPath(), func() (err error) {
			out.f, err = root.OpenFile(out.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
			return err
		})
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
		}
		return out, nil
	}
	return nil, fmt.Errorf("create %s: no free temporary name", path)
}

// systemLink reports whether path is a symbolic link under /dev, which only
// the system makes (/dev/stdout -> /proc/self/fd/1).
func systemLink(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil || !strings.HasPrefix(abs, "/dev/") {
		return false
	}
	fi, err := os.Lstat(abs)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// openSystemLink writes through a /dev link to what it names: never
// truncated or replaced; a directory or block device is still refused. The
// process's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/N) are
// duplicated rather than opened again, so that the output shares their
// offset (and append mode) with what else the process writes there.
func openSystemLink(path string) (*File, error) {
	var f *os.File
	if fd, ok := ownDescriptor(path); ok {
		nfd, err := syscall.Dup(fd)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		f = os.NewFile(uintptr(nfd), path)
	} else {
		var err error
		if f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
		}
	}
	fi, err := f.Stat()
	if err == nil && (fi.IsDir() || fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0) {
		err = fmt.Errorf("is a %s; want a regular file, a character device or a FIFO", kind(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{path: path, f: f}, nil
}

// ownDescriptor returns the descriptor a /dev name stands for:
// /dev/stdout 1, /dev/stderr 2, /dev/fd/N N.
func ownDescriptor(path string) (int, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	switch abs {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	if n, ok := strings.CutPrefix(abs, "/dev/fd/"); ok {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
			return fd, true
		}
	}
	return 0, false
}

// IsStdout reports whether path is where the process's standard output
// goes (/dev/stdout, or the file or pipe stdout was sent to): a command
// writing its output there prints its summary on stderr instead.
func IsStdout(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	so, err := os.Stdout.Stat()
	return err == nil && os.SameFile(fi, so)
}

// writesThrough reports whether a file of this mode is written in place:
// a character device or a FIFO.
func writesThrough(m fs.FileMode) bool {
	return m&fs.ModeNamedPipe != 0 || m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0
}

// checkOpened makes sure what was opened after Lstat is still a device or
// FIFO (not a file swapped in between), closing it if not.
func checkOpened(f *os.File, path string) error {
	fi, err := f.Stat()
	if err == nil && !writesThrough(fi.Mode()) {
		err = fmt.Errorf("is now a %s", kind(fi.Mode()))
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		return "block device"
	}
	return "special file"
}

// unwrapPath drops an *fs.PathError's repetition of the path, which the
// caller's message names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Name is the file's final name, as given.
func (f *File) Name() string { return f.path }

// WritesThrough reports whether the file is a device or FIFO written in
// place rather than a temporary file renamed into place.
func (f *File) WritesThrough() bool { return f.tmp == "" }

// tmpPath is the temporary file as a path, for RemovePending.
func (f *File) tmpPath() string { return filepath.Join(f.root.Name(), f.tmp) }

// Write writes to the temporary file (or the device).
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	if err != nil {
		err = fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
		if f.err == nil {
			f.err = err
		}
	}
	return n, err
}

// Err is the first write error, for writers behind buffers that keep it
// to themselves until they flush.
func (f *File) Err() error { return f.err }

// Close syncs and closes the temporary file without renaming it (Commit
// does that); for a device it only closes. Calling it again does nothing.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var err error
	if f.tmp != "" {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
	}
	return nil
}

// Commit closes the file and renames it over its final name. After a
// failed Commit the temporary file is gone too.
func (f *File) Commit() error { return f.commit(false) }

// CommitNew is Commit that refuses to replace a file that exists (an
// earlier run's output), with an error wrapping fs.ErrExist.
func (f *File) CommitNew() error { return f.commit(true) }

func (f *File) commit(noReplace bool) error {
	if f.done {
		return nil
	}
	err := f.Close()
	if err == nil && f.tmp != "" {
		err = f.rename(noReplace)
	}
	if err != nil {
		f.Abort()
		return err
	}
	f.finish()
	return nil
}

func (f *File) rename(noReplace bool) error {
	if !noReplace {
		if err := f.root.Rename(f.tmp, f.name); err != nil {
			return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
		}
		return nil
	}
	// A hard link is created only if the name is free, atomically; file
	// systems without hard links get a check and a rename.
	err := f.root.Link(f.tmp, f.name)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("write %s: %w", f.path, fs.ErrExist)
	case err != nil:
		if _, serr := f.root.Lstat(f.name); serr == nil {
			return fmt.Errorf("write %s: %w", f.path, fs.ErrExist)
		}
		if err := f.root.Rename(f.tmp, f.name); err != nil {
			return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
		}
	default:
		f.root.Remove(f.tmp)
	}
	return nil
}

// Abort drops the temporary file (a device is only closed); after Commit
// it does nothing. It is safe to defer right after Create.
func (f *File) Abort() {
	if f.done {
		return
	}
	if !f.closed {
		f.closed = true
		f.f.Close()
	}
	if f.tmp != "" {
		// A failed removal leaves a hidden ".NAME.*.tmp" that no reader
		// takes for a result; there is nothing better to do with the error.
		_ = f.root.Remove(f.tmp)
	}
	f.finish()
}

func (f *File) finish() {
	f.done = true
	if f.tmp != "" {
		dropPending(f.tmpPath())
	}
	if f.ownRoot {
		f.root.Close()
	}
}

// OpenStream opens path for a capture written as it arrives, so a killed
// capture still reads: a regular file is created or truncated in place
// without following a symbolic link (O_NOFOLLOW), a device or FIFO is
// written through, a symbolic link (other than /dev's own) or a
// directory is refused.
func OpenStream(path string) (*os.File, error) {
	if systemLink(path) {
		f, err := openSystemLink(path)
		if err != nil {
			return nil, err
		}
		return f.f, nil
	}
	flag := os.O_WRONLY | syscall.O_NOFOLLOW
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && fi.Mode().IsRegular():
		flag |= os.O_CREATE | os.O_TRUNC
	case err != nil:
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("create %s: is a symbolic link; refusing to follow or replace it (give the file it points to instead)", path)
	case !writesThrough(fi.Mode()):
		return nil, fmt.Errorf("create %s: is a %s; want a regular file, a character device or a FIFO", path, kind(fi.Mode()))
	}
	f, err := os.OpenFile(path, flag, 0o666)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("create %s: is a symbolic link; refusing to follow or replace it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() && !writesThrough(fi.Mode()) {
		f.Close()
		return nil, fmt.Errorf("create %s: not a regular file, character device or FIFO", path)
	}
	return f, nil
}

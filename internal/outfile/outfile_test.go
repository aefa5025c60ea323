package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// entries lists dir's names, hidden ones too.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A new file exists only under a hidden temporary name until Commit.
func TestCreateCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	names := entries(t, dir)
	if len(names) != 1 || !strings.HasPrefix(names[0], ".out.txt.") || !strings.HasSuffix(names[0], ".tmp") {
		t.Fatalf("while writing: %v, want only the hidden temporary file", names)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "out.txt" {
		t.Fatalf("after Commit: %v", names)
	}
	if got := readString(t, path); got != "hello" {
		t.Errorf("content %q", got)
	}
	f.Abort() // after Commit: nothing
	if got := readString(t, path); got != "hello" {
		t.Errorf("Abort after Commit changed the file: %q", got)
	}
}

// A regular file is replaced only by Commit; Abort leaves it as it was and
// removes the temporary file.
func TestCreateAbortKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	if got := readString(t, path); got != "old" {
		t.Errorf("while writing: %q", got)
	}
	f.Abort()
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("after Abort: %v", names)
	}
	if got := readString(t, path); got != "old" {
		t.Errorf("after Abort: %q", got)
	}
}

// /dev/null stays a character device: written through, never replaced.
func TestCreateDevNull(t *testing.T) {
	f, err := Create("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	if !f.WritesThrough() {
		t.Error("/dev/null not written through")
	}
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat("/dev/null")
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v (%v)", fi.Mode(), err)
	}
}

// A FIFO is written through: the reader gets the data, the FIFO stays.
func TestCreateFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	f, err := Create(fifo)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("through"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through" {
		t.Errorf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("FIFO is now %v (%v)", fi.Mode(), err)
	}
}

// Symbolic links and directories are refused, their targets untouched.
func TestCreateRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for _, c := range []struct{ path, want string }{
		{link, "symbolic link"},
		{sub, "directory"},
		{dir + "/", "not a file name"},
	} {
		if _, err := Create(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Create(%s): %v, want %q", c.path, err, c.want)
		}
		if err := Check(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s): %v, want %q", c.path, err, c.want)
		}
		if _, err := OpenStream(c.path); c.want != "not a file name" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("OpenStream(%s): %v, want %q", c.path, err, c.want)
		}
	}
	if got := readString(t, target); got != "keep" {
		t.Errorf("link target now %q", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("link replaced")
	}
	if names := entries(t, dir); len(names) != 3 {
		t.Errorf("left behind: %v", names)
	}
}

// Check passes what Create writes and refuses, creating nothing, a file in
// a folder that is not there.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	os.WriteFile(old, []byte("keep"), 0o644)
	for _, p := range []string{filepath.Join(dir, "new"), old, "/dev/null", "/dev/stdout"} {
		if err := Check(p); err != nil {
			t.Errorf("Check(%s): %v", p, err)
		}
	}
	missing := filepath.Join(dir, "no", "such", "x")
	if err := Check(missing); err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("Check(%s): %v, want no such file or directory", missing, err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("Check left %v", names)
	}
}

// /dev/stdout, a link the system made, is written through.
func TestCreateDevStdout(t *testing.T) {
	if !systemLink("/dev/stdout") {
		t.Skip("/dev/stdout is not a symbolic link here")
	}
	f, err := Create("/dev/stdout")
	if err != nil {
		t.Fatal(err)
	}
	if !f.WritesThrough() {
		t.Error("/dev/stdout not written through")
	}
	f.Commit()
}

// CommitNew refuses to replace a file, and leaves no temporary file.
func TestCommitNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	f, _ := Create(path)
	f.Write([]byte("first"))
	if err := f.CommitNew(); err != nil {
		t.Fatal(err)
	}
	g, _ := Create(path)
	g.Write([]byte("second"))
	if err := g.CommitNew(); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second CommitNew: %v, want ErrExist", err)
	}
	if got := readString(t, path); got != "first" {
		t.Errorf("content %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left behind: %v", names)
	}
}

// OpenStream creates or truncates a regular file in place and writes
// devices through.
func TestOpenStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cap.pcap")
	os.WriteFile(path, []byte("old contents"), 0o644)
	f, err := OpenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	f.Close()
	if got := readString(t, path); got != "new" {
		t.Errorf("content %q", got)
	}
	d, err := OpenStream("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if fi, _ := os.Lstat("/dev/null"); fi.Mode()&fs.ModeCharDevice == 0 {
		t.Error("/dev/null replaced")
	}
}

// A Dir keeps every file inside: absolute names, "..", and symbolic links
// out of it are refused; Abort removes the directories it made.
func TestDirConfines(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	out := filepath.Join(base, "a", "out")
	d, err := OpenDir(out)
	if err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(out, "escape"))
	for _, name := range []string{"../x", "/etc/x", "sub/../../x", "", "escape/x", ".f.1.tmp"} {
		if f, err := d.Create(name); err == nil {
			f.Abort()
			t.Errorf("Create(%q) accepted", name)
		}
	}
	if names := entries(t, outside); len(names) != 0 {
		t.Errorf("written outside: %v", names)
	}
	f, err := d.Create("sub/dir/f.csv")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(out, "sub", "dir", "f.csv")); got != "x" {
		t.Errorf("content %q", got)
	}
	os.Remove(filepath.Join(out, "escape"))
	os.Remove(filepath.Join(out, "sub", "dir", "f.csv"))
	d.Abort()
	if names := entries(t, base); len(names) != 1 || names[0] != "outside" {
		t.Errorf("after Abort: %v, want the made directories gone", names)
	}
}

// RemovePending removes temporary files and made directories, and later
// Creates fail.
func TestRemovePending(t *testing.T) {
	base := t.TempDir()
	d, err := OpenDir(filepath.Join(base, "ds"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Create("k=v/part.parquet")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	if n := RemovePending(); n != 1 {
		t.Errorf("removed %d files, want 1", n)
	}
	defer func() {
		pending.Lock()
		pending.stopped = false
		pending.Unlock()
	}()
	if names := entries(t, base); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
	if _, err := Create(filepath.Join(base, "late")); err == nil {
		t.Error("Create after RemovePending succeeded")
	}
	f.Abort()
	d.Abort()
}

// TestAwaitSignalExit: a command's error exit goes on before any signal,
// and waits for the handler's exit once its RemovePending has run (the
// next Create then fails with "interrupted", and exiting 1 on that raced
// the handler's 128+signal).
func TestAwaitSignalExit(t *testing.T) {
	waited := 0
	defer func(keep func()) {
		handlerExits = keep
		pending.Lock()
		pending.stopped = false
		pending.Unlock()
	}(handlerExits)
	handlerExits = func() { waited++ }
	AwaitSignalExit()
	if waited != 0 {
		t.Fatal("waited with no signal handled")
	}
	RemovePending()
	_, err := Create(filepath.Join(t.TempDir(), "late"))
	AwaitSignalExit()
	if err == nil || waited != 1 {
		t.Errorf("after RemovePending: Create error %v, waited %d times; want an error and 1", err, waited)
	}
}

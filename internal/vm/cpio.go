package vm

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

// cpioWriter writes the newc cpio format the kernel unpacks as an
// initramfs; no root is needed to build one, as modes and owners are
// written, not taken from files.
type cpioWriter struct {
	w   *bufio.Writer
	n   int64
	ino int
	err error
}

func newCPIO(w io.Writer) *cpioWriter { return &cpioWriter{w: bufio.NewWriter(w)} }

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	k, err := c.w.Write(b)
	c.n += int64(k)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	c.ino++
	nlink := 1
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.write([]byte(hdr))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

// Dir adds a directory.
func (c *cpioWriter) Dir(name string) { c.entry(name, 0o040755, nil) }

// File adds a regular file with the given permission bits.
func (c *cpioWriter) File(name string, perm uint32, data []byte) {
	c.entry(name, 0o100000|perm, data)
}

// CopyFile adds the host file src as name.
func (c *cpioWriter) CopyFile(name string, perm uint32, src string) {
	data, err := os.ReadFile(src)
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("initramfs: %w", err)
	}
	c.File(name, perm, data)
}

// Symlink adds a symbolic link.
func (c *cpioWriter) Symlink(name, target string) { c.entry(name, 0o120777, []byte(target)) }

// Close writes the trailer and flushes.
func (c *cpioWriter) Close() error {
	c.entry("TRAILER!!!", 0, nil)
	if c.err == nil {
		c.err = c.w.Flush()
	}
	return c.err
}

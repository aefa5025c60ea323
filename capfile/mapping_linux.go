package capfile

import (
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// maxMapBytes is the largest file mapped: a quarter of the address space
// (any file on a 64-bit system).
const maxMapBytes = math.MaxInt >> 2

// mmapFile maps the first size bytes of f read-only, shared with the page cache.
func mmapFile(f *os.File, size int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
}

func munmapFile(b []byte) { unix.Munmap(b) }

// dropPages unmaps b's pages from the process (its file's pages stay in the
// page cache, and come back if b is touched again).
func dropPages(b []byte) {
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED)
	}
}

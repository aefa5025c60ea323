package capfile

import (
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// Mapping a regular capture file into memory (StreamOptions.Map). Read
// with read(2), a third of decode --summary's CPU time was the kernel's
// copy of the file into the read buffer (_copy_to_iter, 2M-frame capture);
// mapped, the records are decoded where the page cache holds them, and the
// pieces (split.go) are cut there instead of being read in with pread.
//
// A mapping shows the file as it was when opened. A file that grows is read
// on past the mapping with read(2) (window.leaveMapping), as it would have
// been. A file cut short by another program while mapped is the danger:
// touching the pages past its new end raises SIGBUS. So the window asks
// the file's size before it shows each chunk of the mapping (fillMapped)
// and reads on with read(2) from where it stands once the file shrank,
// which then reports the file's end as it finds it; a batch cut on a
// worker recovers from the fault (guardFault) and ends the file there;
// what is left, a file cut short in the instant between the size asked and
// a page touched on the goroutine that reads the stream, panics there with
// the runtime's fault, which Faulted names (debug.SetPanicOnFault must be
// set on that goroutine, else the runtime crashes the program).

// mapping is a regular file mapped read-only.
type mapping struct {
	f    *os.File
	name string
	data []byte // the whole file as it was when mapped
	// released is how much of data's start has been given back
	// (release): read already, its pages need not stay mapped.
	released int
}

// Mapping sizes: variables so that tests map small files in small chunks.
var (
	// minMapBytes is the smallest file mapped: a smaller one is read in
	// one or two reads into a buffer of its size.
	minMapBytes int64 = readBufLen
	// mapChunk is how much of the mapping the window shows at a time:
	// the file's size is asked again before the next chunk is shown, and
	// the pages of the chunks read are given back, so that a long capture
	// does not stay mapped (memory flat in the capture's size).
	mapChunk = 4 << 20
)

// mapFile maps f, a regular file of size bytes named name, when it is
// large enough to be worth it and the system maps files; nil otherwise
// (the file is then read).
func mapFile(f *os.File, name string, size int64) *mapping {
	if size < max(minMapBytes, 1) || size > maxMapBytes {
		return nil
	}
	data, err := mmapFile(f, int(size))
	if err != nil {
		return nil
	}
	m := &mapping{f: f, name: name, data: data}
	live.add(m)
	return m
}

// shrunk reports whether the file is now shorter than its mapping (or can
// no longer be asked its size).
func (m *mapping) shrunk() bool {
	st, err := m.f.Stat()
	return err != nil || st.Size() < int64(len(m.data))
}

// release gives back the pages of data[:upTo] read already: they leave the
// process's memory, and are read again from the page cache if touched.
func (m *mapping) release(upTo int) {
	upTo &^= os.Getpagesize() - 1
	if upTo <= m.released {
		return
	}
	dropPages(m.data[m.released:upTo])
	m.released = upTo
}

// unmap ends the mapping: nothing may read data after.
func (m *mapping) unmap() {
	if m.data == nil {
		return
	}
	live.remove(m)
	munmapFile(m.data)
	m.data = nil
}

// live is the mappings not yet ended, for Faulted.
var live mappings

type mappings struct {
	mu sync.Mutex
	m  []*mapping
}

func (l *mappings) add(m *mapping) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m = append(l.m, m)
}

func (l *mappings) remove(m *mapping) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.m {
		if x == m {
			l.m = append(l.m[:i], l.m[i+1:]...)
			return
		}
	}
}

// at returns the mapping holding address addr and addr's offset in its
// file, nil if none does.
func (l *mappings) at(addr uintptr) (*mapping, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.m {
		if len(m.data) == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
		if addr >= start && addr-start < uintptr(len(m.data)) {
			return m, int64(addr - start)
		}
	}
	return nil, 0
}

// guardFault runs cut, which reads a mapped file, with
// debug.SetPanicOnFault set, so that a fault in the mapping (the file cut
// short under it) is a panic, not a crash: cut's work ends there and
// onFault runs. Any other panic goes on. Called once a batch, it costs
// nothing a frame.
func guardFault(cut, onFault func()) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if Faulted(v) == nil {
				panic(v)
			}
			onFault()
		}
	}()
	cut()
}

// errShrank is the damage of a mapped file that another program cut short
// while it was read.
var errShrank = errors.New("the file shrank while it was read (cut short by another program?)")

// Faulted returns the *FileError naming the mapped capture file that
// recovered, a value recovered from a panic, is a fault in: a file cut
// short by another program while it was read (StreamOptions.Map). It
// returns nil for any other value, which the caller panics with again.
func Faulted(recovered any) *FileError {
	rerr, ok := recovered.(runtime.Error)
	if !ok {
		return nil
	}
	addr, ok := rerr.(interface{ Addr() uintptr })
	if !ok {
		return nil
	}
	m, off := live.at(addr.Addr())
	if m == nil {
		return nil
	}
	return &FileError{Name: m.name, Offset: off, Err: errShrank}
}

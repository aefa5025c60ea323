package capfile

import (
	"errors"
	"io"
	"sync"
)

// window is the Reader's read buffer: records are handed out in place from
// it. It does what bufio.Reader's Peek, Discard and Read do, with the same
// results and errors, but the bytes already buffered (nearly every record:
// a record is a small part of the buffer) are taken with avail and Discard,
// which are inlined where they are called. bufio's Peek is a call with a
// loop in it, and Peek, Discard and the record's bookkeeping were a fifth
// of decode --summary's instructions.
type window struct {
	rd   io.Reader
	buf  []byte
	r, w int   // buf[r:w] is read and not yet handed out
	err  error // the read error that ended the last fill, until reported
	// pos is how many bytes rd has given: where the next read starts.
	pos int64
	// pf, when set, reads the file ahead on another goroutine, and fill
	// takes its chunks (prefetch.go).
	pf *prefetch
	// full is the buffer's size once the window has read more than once
	// (grow): the first read fills at most windowStartLen.
	full int
	// m, while set, is the file mapped (mapping.go): buf is all of it,
	// shown up to w a chunk at a time (fillMapped), and rd is unused.
	m *mapping
}

// windowStartLen is the most a window reads first. A file of a rotated set
// waits in the merge, its first frame read, until the files before it have
// ended: it then holds this much, not a whole read buffer (1000 files held
// 396 MB before, at one core).
const windowStartLen = 64 << 10

// errBufferFull is Peek's error for more bytes than the buffer holds (as
// bufio.ErrBufferFull), and for fewer bytes than asked with no read error.
var errBufferFull = errors.New("capfile: buffer full")

// maxEmptyReads is how many reads of nothing in a row fill allows before it
// gives up with io.ErrNoProgress (bufio's limit).
const maxEmptyReads = 100

func newWindow(rd io.Reader, size int) *window {
	return &window{rd: rd, buf: make([]byte, min(size, windowStartLen)), full: size}
}

// mappedWindow is a window over mapping m, its first chunk shown.
func mappedWindow(m *mapping) *window {
	w := min(mapChunk, len(m.data))
	return &window{buf: m.data, w: w, full: len(m.data), m: m}
}

// grow gives the window its full buffer once it has read: called before
// every read, it takes the window past its first.
func (b *window) grow() {
	if len(b.buf) >= b.full || b.pos == 0 {
		return
	}
	var buf []byte
	if b.full == readBufLen {
		buf = readBuf()
	} else {
		buf = make([]byte, b.full)
	}
	b.w = copy(buf, b.buf[b.r:b.w])
	b.r, b.buf = 0, buf
}

// readBufs keeps the read buffers of files that have ended (Reader.letGo)
// for the next file's: each file of a rotated set over the read buffer
// allocated one, and 200 files of 1.8 MB took 14 garbage collections, a
// tenth of flows' CPU time.
var readBufs sync.Pool

// readBuf returns a read buffer of readBufLen bytes, one kept if there is.
func readBuf() []byte {
	if p, ok := readBufs.Get().(*[]byte); ok {
		return *p
	}
	return make([]byte, readBufLen)
}

// keepReadBuf keeps buf, which nothing reads any more, for readBuf, if it
// is a read buffer.
func keepReadBuf(buf []byte) {
	if cap(buf) == readBufLen {
		buf = buf[:readBufLen]
		readBufs.Put(&buf)
	}
}

// buffered returns the bytes read and not yet handed out.
func (b *window) buffered() int { return b.w - b.r }

// avail returns the bytes read and not yet handed out: what Peek of up to
// that many would return, in a call the compiler inlines (Peek is past its
// budget), with no error to build.
func (b *window) avail() []byte { return b.buf[b.r:b.w] }

// Peek returns the next n bytes without consuming them; fewer, with an
// error, when the input ends first (the read's error, or errBufferFull when
// n is larger than the buffer or the read gave none). The bytes stay valid
// until the next call that reads.
func (b *window) Peek(n int) ([]byte, error) {
	if b.w-b.r < n {
		return b.peekFill(n)
	}
	return b.buf[b.r:][:n], nil
}

func (b *window) peekFill(n int) ([]byte, error) {
	// A mapped window shows more, or reads on past the mapping.
	for b.w-b.r < n && (b.m != nil || b.w-b.r < len(b.buf) || len(b.buf) < b.full) && b.err == nil {
		b.fill()
	}
	if n > max(len(b.buf), b.full) {
		return b.buf[b.r:b.w], errBufferFull
	}
	var err error
	if avail := b.w - b.r; avail < n {
		n = avail
		if err = b.readErr(); err == nil {
			err = errBufferFull
		}
	}
	return b.buf[b.r : b.r+n], err
}

// Discard skips the next n bytes. The Reader discards only bytes it has
// peeked, which are buffered; more are read and skipped as bufio would.
func (b *window) Discard(n int) {
	if n <= b.w-b.r {
		b.r += n
		return
	}
	b.discardFill(n)
}

func (b *window) discardFill(n int) {
	for n > 0 {
		skip := b.w - b.r
		if skip == 0 {
			if b.err != nil {
				b.readErr()
				return
			}
			b.fill()
			skip = b.w - b.r
		}
		skip = min(skip, n)
		b.r += skip
		n -= skip
	}
}

// fill slides the buffered bytes to the start and reads once more.
func (b *window) fill() {
	if b.m != nil {
		b.fillMapped()
		return
	}
	if b.pf != nil {
		b.pf.fill(b)
		return
	}
	b.grow()
	if b.r > 0 {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	for range maxEmptyReads {
		n, err := b.rd.Read(b.buf[b.w:])
		if n < 0 || n > len(b.buf)-b.w {
			b.err = errors.New("capfile: the reader returned an impossible byte count")
			return
		}
		b.w += n
		b.pos += int64(n)
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// fillMapped shows the mapping's next chunk, giving back the pages read
// already, while the file is still as long as its mapping; past the
// mapping, or once the file shrank, the window reads the file from where
// it stands (the unread bytes shown included).
func (b *window) fillMapped() {
	m := b.m
	if b.w < len(m.data) && !m.shrunk() {
		m.release(b.r)
		b.w = min(b.w+mapChunk, len(m.data))
		return
	}
	b.leaveMapping(int64(b.r))
}

// leaveMapping has the window read its file with read(2) from offset off
// on: past the mapping, where the file may have grown, or after it
// shrank. The mapping stays until the Reader closes (a frame handed out
// may still point into it); its pages are given back.
func (b *window) leaveMapping(off int64) {
	m := b.m
	m.release(len(m.data))
	b.m = nil
	b.rd = io.NewSectionReader(m.f, off, 1<<62)
	b.buf, b.r, b.w, b.pos, b.full = make([]byte, windowStartLen), 0, 0, 0, readBufLen
}

// seekMapped has a mapped window read on from offset off: shown from the
// next fill, which asks the file's size first.
func (b *window) seekMapped(off int64) {
	b.r, b.w, b.err = int(off), int(off), nil
}

// readErr returns the pending read error and forgets it.
func (b *window) readErr() error {
	err := b.err
	b.err = nil
	return err
}

// Read reads what is buffered, or reads on when nothing is: a decompressor
// reads the file through the window that found its magic bytes.
func (b *window) Read(p []byte) (int, error) {
	if len(p) == 0 {
		if b.buffered() > 0 {
			return 0, nil
		}
		return 0, b.readErr()
	}
	if b.r == b.w && b.m != nil {
		b.fillMapped()
	}
	if b.r == b.w {
		if b.err != nil {
			return 0, b.readErr()
		}
		b.grow()
		b.r, b.w = 0, 0
		n, err := b.rd.Read(b.buf)
		if n < 0 || n > len(b.buf) {
			return 0, errors.New("capfile: the reader returned an impossible byte count")
		}
		b.w, b.err = n, err
		b.pos += int64(n)
		if n == 0 {
			return 0, b.readErr()
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	return n, nil
}

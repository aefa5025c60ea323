package capfile

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// Reading a file ahead of its cut. The read-ahead cuts a file's records
// into batches one goroutine at a time (readahead.go), and the read(2)
// calls that fill the read buffer were two thirds of that cut for decode
// --summary: while one goroutine copied the file in, under the file's
// lock, the others waited for it. With a prefetch the next chunk of the
// file is read on a goroutine of its own, at its offset (pread), while
// the records of the chunk before are cut; the window then takes the
// chunk's buffer as its own, the bytes it had not handed out (a record cut
// by the chunk's end) moved in front, and the next read starts into the
// buffer let go. Two buffers a file, each of the read buffer's size.
//
// A compressed file is read ahead the same way from its decompressor, in
// order: the decompression then runs on a core of its own while the
// records are cut and decoded on the others. A decompressor must not be
// closed under a Read: the Reader waits for the chunk being read before it
// closes one (prefetch.stop).

// prefetchHead is the room kept in front of a chunk for the bytes the
// window still holds when it takes the chunk: a record the chunk's start
// cuts. A longer one gets a buffer of its own (prefetch.fill).
const prefetchHead = 64 << 10

// prefetch is a file being read ahead of its window, a chunk at a time.
type prefetch struct {
	f     *os.File   // read at off (pread); nil for a decompressor
	rd    io.Reader  // the decompressor, read in order, when f is nil
	off   int64      // where the chunk being read starts
	ready chan chunk // the chunk being read, once it is
	ended bool       // the last chunk read ended the file (or failed): no more reads
	err   error      // its error, which the window gets again at each fill
}

// chunk is a piece of the file read into buf[prefetchHead:][:n]; err is the
// read's (io.EOF at the file's end).
type chunk struct {
	buf []byte
	n   int
	err error
}

// prefetch has b's file, f, read ahead from where b has read it to; with
// f nil, b's reader (a decompressor) from where b has read it to.
func (b *window) prefetch(f *os.File) {
	p := &prefetch{f: f, off: b.pos, ready: make(chan chunk, 1)}
	if f == nil {
		p.rd = b.rd
	}
	b.pf = p
	p.read(nil)
}

// read reads the next chunk into buf (a new buffer if it has not the
// room), on a goroutine of its own.
func (p *prefetch) read(buf []byte) {
	if len(buf) < readBufLen {
		buf = readBuf()
	}
	off := p.off
	go func() {
		var n int
		var err error
		if p.f != nil {
			n, err = p.f.ReadAt(buf[prefetchHead:], off)
		} else {
			n, err = readChunk(p.rd, buf[prefetchHead:])
		}
		p.ready <- chunk{buf: buf, n: n, err: err}
	}()
}

// readChunk reads rd until buf is full or a read fails: fewer bytes only
// with an error, as ReadAt (io.ReadFull would turn the decompressor's
// io.EOF after some bytes into io.ErrUnexpectedEOF, the error a cut gzip
// file gives).
func readChunk(rd io.Reader, buf []byte) (int, error) {
	n := 0
	for empty := 0; n < len(buf); {
		k, err := rd.Read(buf[n:])
		if k < 0 || k > len(buf)-n {
			return n, errors.New("capfile: the reader returned an impossible byte count")
		}
		n += k
		if err != nil {
			return n, err
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// stop waits for the chunk being read, if any, so that nothing reads the
// decompressor once it returns (the Reader then closes it); the window
// has no prefetch after it.
func (p *prefetch) stop(b *window) {
	if !p.ended {
		<-p.ready
		p.ended = true
	}
	b.pf = nil
}

// fill is window.fill with a prefetch: it takes the chunk read ahead,
// waiting for it if it is not read yet, and starts reading the next.
func (p *prefetch) fill(b *window) {
	if p.ended {
		b.err = p.err
		return
	}
	c := <-p.ready
	p.off += int64(c.n)
	b.pos += int64(c.n)
	if c.n == 0 && c.err == nil {
		c.err = io.ErrNoProgress // ReadAt gives fewer bytes only with an error
	}
	left := b.buf[b.r:b.w]
	free := b.buf
	if len(left) <= prefetchHead {
		copy(c.buf[prefetchHead-len(left):], left)
		b.buf, b.r, b.w = c.buf, prefetchHead-len(left), prefetchHead+c.n
	} else { // a record longer than the room in front: both in a buffer of their own
		buf := make([]byte, len(left)+len(c.buf))
		copy(buf, left)
		copy(buf[len(left):], c.buf[prefetchHead:][:c.n])
		b.buf, b.r, b.w = buf, 0, len(left)+c.n
		free = c.buf
	}
	if c.err != nil {
		p.ended, p.err, b.err = true, c.err, c.err
		return
	}
	p.read(free)
}

// prefetchFile has r's file read ahead of its cut: as it is, unless it is
// cut in pieces (which the workers read themselves), or through its
// decompressor.
func (r *Reader) prefetchFile() {
	if r.br.pf != nil {
		return
	}
	if f, ok := r.br.rd.(*os.File); ok && (r.ahead == nil || r.ahead.file.split == nil) {
		r.br.prefetch(f)
	} else if r.decompressor != nil { // the window reads the decompressor (Reader.decompress)
		r.br.prefetch(nil)
	}
}

// DecompressedAhead reports whether path, read ahead, is decompressed on a
// goroutine of its own (prefetchFile; one of several files, once its frames
// are taken): a regular gzip, bzip2 or zstd file larger than the read
// buffer. On two cores flows, ipd and decode --summary then took 0.69x to
// 0.87x the wall time of one (.gz and .zst of 2M frames; flows 0.75x on the
// 8 gzipped files of a rotated set).
func DecompressedAhead(path string) bool {
	magic, ok := regularMagic(path, readBufLen+1)
	if !ok {
		return false
	}
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], magic)
	c := compressionOf(head[:])
	return c != nil && c.open != nil
}

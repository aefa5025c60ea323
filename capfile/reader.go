package capfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/ibscope/ibscope/decode"
)

// Reader reads a capture file (pcap with microsecond or nanosecond
// timestamps, pcapng, or raw ERF) record by record and decodes each into a
// Frame. All are read with zero copies out of a large buffer (pcapng in
// pcapng.go, raw ERF in erfreader.go).
type Reader struct {
	name     string
	closer   io.Closer
	br       *window
	order    binary.ByteOrder
	bigEnd   bool  // order is big-endian (record reads it without an interface call)
	nsPerTs  int64 // 1000 for microsecond pcap, 1 for nanosecond
	linkType int
	snapLen  int
	offset   int64 // bytes consumed so far
	frames   int
	dec      decode.Decoder
	err      error // sticky file-level error
	// decompressor is what reads a gzip, bzip2 or zstd file (compress.go);
	// byte offsets then count decompressed bytes.
	decompressor io.Closer
	// pcapng: the current section's byte order (nil before the first
	// section header) and interfaces.
	isNG     bool
	isERF    bool // a raw ERF file (erfreader.go)
	ngOrder  binary.ByteOrder
	ngIfaces []ngInterface
	// captureHost is the host the first section header names (NgCaptureHost).
	captureHost string
	// stop, once set, ends the file as if it ended there (SetStop); atomic
	// because a file read ahead (readahead.go) reads on another goroutine.
	stop atomic.Pointer[atomic.Bool]
	// regular is set for a regular file opened by Open: one that may be
	// read ahead (a pipe is read as its frames come).
	regular bool
	// mapped is the file's mapping, nil when it is read (mapping.go);
	// the window shows it while it reads it.
	mapped *mapping
	ahead  *readAhead // the records read and decoded ahead, nil when not
	// format is StreamOptions.Format, which the workers run on the
	// frames they decode.
	format func(dst []byte, f *decode.Frame, err error) []byte
	// said is what the file said of itself up to its first packet, as
	// opening it read: SnapLen, CaptureHost, LinkBitsPerSec and
	// InterfaceName answer from it wherever the reading stands, so that a
	// file read ahead (its reading perhaps in a later pcapng section) and
	// one read on the caller's goroutine answer alike.
	said readerMeta
}

// readerMeta is what SnapLen, CaptureHost, LinkBitsPerSec and
// InterfaceName tell.
type readerMeta struct {
	snapLen        int
	captureHost    string
	linkBitsPerSec uint64
	interfaceName  string
}

// SetStop makes the reader look at stop wherever it reads on without
// handing out a frame (pcapng blocks that are not packets, ERF padding):
// once stop is set, it returns io.EOF as at the end of the file. A file of
// nothing but such records then still stops when asked.
func (r *Reader) SetStop(stop *atomic.Bool) { r.stop.Store(stop) }

// stopped reports whether the reader was asked to stop.
func (r *Reader) stopped() bool {
	stop := r.stop.Load()
	return stop != nil && stop.Load()
}

// FileError is damage to the file itself, after which no later frame can be
// trusted: a bad header, a record cut short, an impossible record length.
type FileError struct {
	Name   string // file name
	Frame  int    // 1-based number of the frame being read, 0 for the file header
	Offset int64  // byte offset in the file, -1 when unknown
	Err    error
}

func (e *FileError) Error() string {
	where := e.Name
	if e.Frame > 0 {
		where += fmt.Sprintf(": frame %d", e.Frame)
	}
	if e.Offset >= 0 {
		where += fmt.Sprintf(" (byte offset %d)", e.Offset)
	}
	return where + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// DecodeError is a frame that could not be decoded; the Reader goes on with the next one.
type DecodeError struct {
	Name   string
	Frame  int
	Offset int64 // byte offset of the frame's record in the file, -1 when unknown
	Err    *decode.FrameError
}

func (e *DecodeError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s: frame %d (record at byte offset %d): %v", e.Name, e.Frame, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: frame %d: %v", e.Name, e.Frame, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// NoTimeError is the DecodeError that reports frame f of file name as
// having no timestamp (f.NoTs, a pcapng Simple Packet Block): what needs
// time leaves it out, and says so with this.
func NoTimeError(name string, f *decode.Frame) *DecodeError {
	return &DecodeError{Name: name, Frame: f.Number, Offset: f.Offset,
		Err: &decode.FrameError{Offset: -1, Msg: "no timestamp (pcapng simple packet block): left out of what needs time"}}
}

// Pcap magic numbers.
const (
	magicMicro   = 0xa1b2c3d4
	magicNano    = 0xa1b23c4d
	magicNG      = 0x0a0d0d0a
	maxRecordLen = 1 << 20 // longer records mean a damaged file
	minBufLen    = 4096    // the smallest buffer, for tiny files
	// readBufLen is the read buffer of a large file; records are read in
	// place from it, so it holds the longest record or pcapng block. No
	// larger: with the 1.8 MB ibanalyze allocates as it starts, a 4 MiB
	// buffer took the heap past the garbage collector's first goal (4 MB),
	// and that one collection cost decode --summary 15% of its CPU time
	// (idle mark workers on the other core, write barriers meanwhile).
	readBufLen = maxRecordLen + 64<<10
)

// The longest pcapng block fits in the read buffer.
var _ [readBufLen - ngMaxBlockLen]struct{}

// Open opens a capture file for reading. Its errors name path once, and
// callers add no more context: the *fs.PathError of a file that cannot be
// opened ("open PATH: no such file or directory"), or a *FileError for one
// that is not a capture.
func Open(path string) (*Reader, error) { return open(path, false) }

// open is Open, mapping a large regular file into memory if mapped
// (StreamOptions.Map, mapping.go).
func open(path string, mapped bool) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	size := int64(readBufLen)
	regular := false
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size, regular = st.Size(), true
	}
	var r *Reader
	var m *mapping
	if mapped && regular {
		m = mapFile(f, path, size)
	}
	if m != nil {
		r, err = newReaderOn(mappedWindow(m), path, nil)
	} else {
		r, err = newReader(f, path, size, nil)
	}
	if err != nil {
		if m != nil {
			m.unmap()
		}
		f.Close()
		return nil, err
	}
	r.closer, r.regular, r.mapped = f, regular, m
	r.said = r.saidSoFar()
	return r, nil
}

// NewReader reads a capture from rd; name is used in error messages.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	size := int64(readBufLen)
	if l, ok := rd.(interface{ Len() int }); ok { // bytes.Reader, bytes.Buffer, strings.Reader
		size = int64(l.Len())
	}
	r, err := newReader(rd, name, size, nil)
	if err != nil {
		return nil, err
	}
	r.said = r.saidSoFar()
	return r, nil
}

// newReader reads a capture of sizeBytes (if known, else readBufLen or
// more). A file smaller than the read buffer gets a buffer its size: every
// record still fits, and small files (tests, fuzzing) do not pay for
// allocating and clearing 4 MiB. via is the compression rd undoes, if any:
// a compressed file is read through its decompressor (once: a compressed
// file inside is refused).
func newReader(rd io.Reader, name string, sizeBytes int64, via *compression) (*Reader, error) {
	bufLen := int(min(max(sizeBytes, minBufLen), readBufLen))
	return newReaderOn(newWindow(rd, bufLen), name, via)
}

// newReaderOn is newReader reading through window w.
func newReaderOn(w *window, name string, via *compression) (*Reader, error) {
	r := &Reader{name: name, br: w}
	hdr, err := r.br.Peek(24)
	if len(hdr) < 4 {
		switch {
		case via != nil && err != nil && err != io.EOF:
			err = fmt.Errorf("%s data cut short or damaged: %w", via.name, err)
		case err == nil || err == io.EOF:
			err = errors.New("empty or shorter than a capture file header")
		}
		return nil, &FileError{Name: name, Offset: 0, Err: err}
	}
	le, be := binary.LittleEndian.Uint32(hdr), binary.BigEndian.Uint32(hdr)
	switch {
	case le == magicNG:
		return r.openNG()
	case le == magicMicro || le == magicNano:
		r.order = binary.LittleEndian
	case be == magicMicro || be == magicNano:
		r.order, r.bigEnd = binary.BigEndian, true
	case via == nil && compressionOf(hdr) != nil:
		return r.decompress(compressionOf(hdr))
	case looksLikeERF(r):
		return r.openERF()
	case via != nil:
		return nil, &FileError{Name: name, Offset: 0, Err: fmt.Errorf("compressed with %s, but what it holds is not a pcap or pcapng file (magic 0x%08x)", via.name, be)}
	default:
		return nil, &FileError{Name: name, Offset: 0, Err: fmt.Errorf("not a pcap or pcapng file (magic 0x%08x), nor raw ERF records", be)}
	}
	if len(hdr) < 24 {
		return nil, &FileError{Name: name, Offset: int64(len(hdr)), Err: fmt.Errorf("pcap file header cut short: %d of 24 bytes", len(hdr))}
	}
	r.nsPerTs = 1000
	if r.order.Uint32(hdr) == magicNano {
		r.nsPerTs = 1
	}
	r.snapLen = int(r.order.Uint32(hdr[16:]))
	r.linkType = int(r.order.Uint32(hdr[20:]) & 0x0FFFFFFF)
	r.br.Discard(24)
	r.offset = 24
	r.dec = decode.Decoder{LinkType: r.linkType, CheckCRC: true}
	return r, nil
}

// decompress reads the rest of the file through c's decompressor.
func (r *Reader) decompress(c *compression) (*Reader, error) {
	dr, err := c.decompressing(r.br, r.name)
	if err != nil {
		return nil, err
	}
	inner, err := newReader(dr, r.name, readBufLen, c)
	if err != nil {
		dr.Close()
		return nil, err
	}
	inner.decompressor = dr
	return inner, nil
}

// Name returns the file name given to Open or NewReader.
func (r *Reader) Name() string { return r.name }

// LinkType returns the capture's link type (the first interface's, for pcapng).
func (r *Reader) LinkType() int { return r.linkType }

// SnapLen returns the snap length the file declares in bytes (pcapng: its
// first interface's), 0 when it declares none.
func (r *Reader) SnapLen() int { return r.said.snapLen }

// CaptureHost returns the host that captured the file, as its first pcapng
// section header names it (ibcap writes NgCaptureHost), "" when unknown.
func (r *Reader) CaptureHost() string { return r.said.captureHost }

// LinkBitsPerSec returns the speed the file records for its first
// interface (pcapng if_speed), bits per second; 0 when it says none.
func (r *Reader) LinkBitsPerSec() uint64 { return r.said.linkBitsPerSec }

// InterfaceName returns the name the file gives its first interface
// (pcapng if_name: ibsim names a tap's port, ibcap the device), "" when
// it gives none.
func (r *Reader) InterfaceName() string { return r.said.interfaceName }

// saidSoFar is what the file has said of itself up to where the reader
// stands: its header's snap length, or its current pcapng section's first
// interface's, and the first section header's capture host. A later
// section resets the interfaces, so the readers answer from what the open
// read (said): a -j 2 read once answered 65535 where -j 1 said 0 (found by
// FuzzStreamWorkers).
func (r *Reader) saidSoFar() readerMeta {
	m := readerMeta{snapLen: r.snapLen, captureHost: r.captureHost}
	if r.isNG {
		m.snapLen = 0
	}
	if len(r.ngIfaces) > 0 {
		i := &r.ngIfaces[0]
		m.snapLen, m.linkBitsPerSec, m.interfaceName = i.snapLen, i.speedBps, i.name
	}
	return m
}

// ResolutionNs returns the timestamp unit the file format declares, in ns:
// 1000 for microsecond pcap, 1 for nanosecond pcap and pcapng (whose
// interfaces may still stamp more coarsely: analyses check the data too).
func (r *Reader) ResolutionNs() int64 { return r.nsPerTs }

// SetCheckCRC turns CRC verification on (the default) or off.
func (r *Reader) SetCheckCRC(on bool) { r.dec.CheckCRC = on }

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.ahead != nil {
		r.ahead.close()
		r.ahead = nil
	}
	if r.decompressor != nil {
		if r.br.pf != nil {
			r.br.pf.stop(r.br)
		}
		r.decompressor.Close()
	}
	if r.mapped != nil {
		r.mapped.unmap()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// letGo lets go of the buffers of a file that has ended (io.EOF or its
// damage), before Close: the files of a rotated set are read one after the
// other, and each held its read buffer, its batches and its decompressor
// to the end of the stream. The stream calls it on the caller's goroutine
// once the end has reached it, when no worker reads the file any more;
// every later read gives the end again (Reader.err, readAhead.end).
func (r *Reader) letGo() {
	if r.ahead != nil {
		r.ahead.letGo()
	}
	if r.br.pf != nil {
		r.br.pf.stop(r.br)
	}
	if r.decompressor != nil {
		r.decompressor.Close()
		r.decompressor = nil
	}
	if r.mapped != nil {
		r.mapped.release(len(r.mapped.data))
	}
	if r.br.m == nil {
		keepReadBuf(r.br.buf)
	}
	r.br.buf, r.br.r, r.br.w, r.br.full, r.br.m = nil, 0, 0, 0, nil
}

// Next reads and decodes the next frame into f. It returns io.EOF at the end,
// a *DecodeError for a frame that could not be decoded (f holds what was, and
// the next call goes on), and a *FileError when the file is damaged (every
// later call returns it again). Frames that are not IB or RoCE come back
// with f.Transport == TransportNone. The frame's byte slices stay valid until
// the next call.
func (r *Reader) Next(f *decode.Frame) error {
	if r.ahead != nil {
		g, err := r.ahead.next()
		if g != nil {
			*f = *g
		}
		return err
	}
	data, err := r.record(f)
	if err != nil {
		return r.recordFailed(f, err)
	}
	if err := r.dec.Decode(data, f); err != nil {
		return r.decodeError(f, err)
	}
	return nil
}

// decodeError is the *DecodeError of frame f, which Decode refused with err.
func (r *Reader) decodeError(f *decode.Frame, err error) *DecodeError {
	var fe *decode.FrameError
	if !errors.As(err, &fe) {
		fe = &decode.FrameError{Msg: err.Error()}
	}
	return &DecodeError{Name: r.name, Frame: f.Number, Offset: f.Offset, Err: fe}
}

// NextRecord reads the next record without decoding it: f gets the record's
// number, offset, timestamp and lengths. A record whose header is
// impossible gives a *DecodeError, as in Next.
func (r *Reader) NextRecord(f *decode.Frame) ([]byte, error) {
	data, err := r.record(f)
	if err != nil {
		return data, r.recordFailed(f, err)
	}
	return data, nil
}

// recordError is a record whose header cannot be right (a wire length below
// the captured length, a sub-second field of a second or more, a time out
// of range) while the file's framing still holds: the frame is reported and
// skipped, and reading goes on with the next record.
type recordError struct{ msg string }

func (e *recordError) Error() string { return e.msg }

// recordFailed turns a recordError into a DecodeError for frame f, whose
// headers are left empty; other errors pass.
func (r *Reader) recordFailed(f *decode.Frame, err error) error {
	re, ok := err.(*recordError)
	if !ok {
		return err
	}
	f.Reset()
	return &DecodeError{Name: r.name, Frame: f.Number, Offset: f.Offset, Err: &decode.FrameError{Offset: -1, Msg: re.msg}}
}

func (r *Reader) record(f *decode.Frame) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.isNG {
		return r.recordNG(f)
	}
	if r.isERF {
		return r.recordERF(f)
	}
	f.Dir = decode.DirectionUnknown
	// Nearly every record is in the buffer whole: avail, inlined, finds
	// it there; Peek reads on when it is not.
	rec := r.br.avail()
	if len(rec) < 16 {
		var err error
		if rec, err = r.br.Peek(16); len(rec) < 16 {
			if len(rec) == 0 && (err == io.EOF || err == nil) {
				r.err = io.EOF
				return nil, io.EOF
			}
			return nil, r.fail(headerCut(err, "record header", len(rec), 16))
		}
	}
	sec, sub, capLen, wireLen := r.pcapRecordHeader(rec)
	if capLen > maxRecordLen {
		return nil, r.fail(fmt.Errorf("record claims %d captured bytes; the file is damaged", capLen))
	}
	// The buffer holds the whole file or at least readBufLen bytes, so the
	// record fits in it with its header.
	n := 16 + int(capLen)
	if len(rec) < n {
		var err error
		if rec, err = r.br.Peek(n); len(rec) < n {
			r.br.Discard(16)
			r.offset += 16
			return nil, r.fail(fmt.Errorf("last record cut short: header says %d bytes, file has %d (%v)", capLen, len(rec)-16, errOrEOF(err)))
		}
	}
	r.br.Discard(n)
	data := rec[16:n]
	r.frames++
	f.Number = r.frames
	f.Offset = r.offset
	r.offset += 16 + int64(capLen)
	f.TsNs = int64(sec)*1e9 + int64(sub)*r.nsPerTs
	f.NoTs = false
	f.CapLen, f.WireLen = int(capLen), int(wireLen)
	if int64(sub)*r.nsPerTs >= 1e9 {
		unit := "microseconds"
		if r.nsPerTs == 1 {
			unit = "nanoseconds"
		}
		f.TsNs = int64(sec) * 1e9
		return data, &recordError{fmt.Sprintf("record header: %s field %d is a second or more; frame skipped", unit, sub)}
	}
	if wireLen < capLen {
		return data, &recordError{fmt.Sprintf("record header: original length %d below captured length %d; frame skipped", wireLen, capLen)}
	}
	return data, nil
}

// readErr is err when it is a failure to read (a damaged compressed
// stream, trailing garbage, an I/O error), nil when the file just ended.
func readErr(err error) error {
	if err == nil || err == io.EOF || err == errBufferFull {
		return nil
	}
	return err
}

// headerCut is why a record's header ended after got of its want bytes:
// the read's failure in its own words (a damaged compressed stream,
// trailing garbage), else the file's end.
func headerCut(err error, what string, got, want int) error {
	if err := readErr(err); err != nil {
		return err
	}
	return fmt.Errorf("%s cut short: %d of %d bytes (file ends)", what, got, want)
}

func errOrEOF(err error) error {
	if err == nil || err == errBufferFull { // the buffer holds the rest of the file
		return io.EOF
	}
	return err
}

func (r *Reader) fail(err error) error {
	r.err = &FileError{Name: r.name, Frame: r.frames + 1, Offset: r.offset, Err: err}
	return r.err
}

// pcapRecordHeader reads a pcap record's 16-byte header at the start of
// rec (len(rec) >= 16): the time's seconds and sub-second units, and the
// captured and original lengths. Small enough to be inlined into the two
// readers of records (record, and the one-file stream's nextPlain).
func (r *Reader) pcapRecordHeader(rec []byte) (sec, sub, capLen, wireLen uint32) {
	hdr := rec[:16]
	if r.bigEnd {
		return binary.BigEndian.Uint32(hdr), binary.BigEndian.Uint32(hdr[4:]), binary.BigEndian.Uint32(hdr[8:]), binary.BigEndian.Uint32(hdr[12:])
	}
	return binary.LittleEndian.Uint32(hdr), binary.LittleEndian.Uint32(hdr[4:]), binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[12:])
}

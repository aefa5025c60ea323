package decode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket/pcapgo"
)

// Reader reads a capture file (pcap with microsecond or nanosecond
// timestamps, or pcapng) record by record and decodes each into a Frame.
// Classic pcap is read with zero copies out of a large buffer; pcapng goes
// through gopacket's pcapgo.
type Reader struct {
	name     string
	closer   io.Closer
	br       *bufio.Reader
	ng       *pcapgo.NgReader
	order    binary.ByteOrder
	bigEnd   bool  // order is big-endian (record reads it without an interface call)
	nsPerTs  int64 // 1000 for microsecond pcap, 1 for nanosecond
	linkType int
	snapLen  int
	offset   int64 // bytes consumed so far (classic pcap)
	frames   int
	dec      Decoder
	err      error // sticky file-level error
	// linkTypes per pcapng interface.
	ngLinkTypes []int
	// pcapng: bytes read from the file (the reader under br) and the
	// current section's byte order, to give each record its file offset.
	counted *countingReader
	ngOrder binary.ByteOrder
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
	Err    *FrameError
}

func (e *DecodeError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s: frame %d (record at byte offset %d): %v", e.Name, e.Frame, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: frame %d: %v", e.Name, e.Frame, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Pcap magic numbers.
const (
	magicMicro   = 0xa1b2c3d4
	magicNano    = 0xa1b23c4d
	magicNG      = 0x0a0d0d0a
	maxRecordLen = 1 << 20 // longer records mean a damaged file
	readBufLen   = 4 << 20 // read buffer for large files; records are read in place from it
	minBufLen    = 4096    // bufio's default: pcapgo's reader then reuses ours (see openNG)
)

// Open opens a capture file for reading.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	size := int64(readBufLen)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	r, err := newReader(f, path, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a capture from rd; name is used in error messages.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	size := int64(readBufLen)
	if l, ok := rd.(interface{ Len() int }); ok { // bytes.Reader, bytes.Buffer, strings.Reader
		size = int64(l.Len())
	}
	return newReader(rd, name, size)
}

// newReader reads a capture of sizeBytes (if known, else readBufLen or
// more). A file smaller than the read buffer gets a buffer its size: every
// record still fits, and small files (tests, fuzzing) do not pay for
// allocating and clearing 4 MiB.
func newReader(rd io.Reader, name string, sizeBytes int64) (*Reader, error) {
	bufLen := int(min(max(sizeBytes, minBufLen), readBufLen))
	cr := &countingReader{r: rd}
	r := &Reader{name: name, br: bufio.NewReaderSize(cr, bufLen), counted: cr}
	hdr, err := r.br.Peek(24)
	if len(hdr) < 4 {
		if err == nil || err == io.EOF {
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
	default:
		return nil, &FileError{Name: name, Offset: 0, Err: fmt.Errorf("not a pcap or pcapng file (magic 0x%08x)", be)}
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
	r.dec = Decoder{LinkType: r.linkType, CheckCRC: true}
	return r, nil
}

func (r *Reader) openNG() (*Reader, error) {
	r.ngOrder = binary.LittleEndian
	if hdr, _ := r.br.Peek(12); len(hdr) == 12 && binary.BigEndian.Uint32(hdr[8:]) == ngByteOrderMagic {
		r.ngOrder = binary.BigEndian
	}
	// pcapgo wraps br in a bufio.Reader, which, br being one already and
	// large enough, is br itself: what br has consumed is what pcapgo has.
	ng, err := pcapgo.NewNgReader(r.br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
	if err != nil {
		return nil, &FileError{Name: r.name, Offset: 0, Err: fmt.Errorf("pcapng: %w", err)}
	}
	r.ng = ng
	r.nsPerTs = 1
	r.linkType = int(ng.LinkType())
	r.dec = Decoder{LinkType: r.linkType, CheckCRC: true}
	return r, nil
}

// Name returns the file name given to Open or NewReader.
func (r *Reader) Name() string { return r.name }

// LinkType returns the capture's link type (the first interface's, for pcapng).
func (r *Reader) LinkType() int { return r.linkType }

// ResolutionNs returns the timestamp unit the file format declares, in ns:
// 1000 for microsecond pcap, 1 for nanosecond pcap and pcapng (whose
// interfaces may still stamp more coarsely: analyses check the data too).
func (r *Reader) ResolutionNs() int64 { return r.nsPerTs }

// SetCheckCRC turns CRC verification on (the default) or off.
func (r *Reader) SetCheckCRC(on bool) { r.dec.CheckCRC = on }

// Frames returns how many records have been read.
func (r *Reader) Frames() int { return r.frames }

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next reads and decodes the next frame into f. It returns io.EOF at the end,
// a *DecodeError for a frame that could not be decoded (f holds what was, and
// the next call goes on), and a *FileError when the file is damaged (every
// later call returns it again). Frames that are not IB or RoCE come back
// with f.Transport == TransportNone. The frame's byte slices stay valid until
// the next call.
func (r *Reader) Next(f *Frame) error {
	data, err := r.record(f)
	if err != nil {
		return err
	}
	if err := r.dec.Decode(data, f); err != nil {
		var fe *FrameError
		if !errors.As(err, &fe) {
			fe = &FrameError{Msg: err.Error()}
		}
		return &DecodeError{Name: r.name, Frame: f.Number, Offset: f.Offset, Err: fe}
	}
	return nil
}

// NextRecord reads the next record without decoding it: f gets the record's
// number, offset, timestamp and lengths.
func (r *Reader) NextRecord(f *Frame) ([]byte, error) { return r.record(f) }

func (r *Reader) record(f *Frame) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.ng != nil {
		return r.recordNG(f)
	}
	hdr, err := r.br.Peek(16)
	if len(hdr) < 16 {
		if len(hdr) == 0 && (err == io.EOF || err == nil) {
			r.err = io.EOF
			return nil, io.EOF
		}
		return nil, r.fail(fmt.Errorf("record header cut short: %d of 16 bytes (file ends)", len(hdr)))
	}
	var sec, sub, capLen, wireLen uint32
	if r.bigEnd {
		sec, sub = binary.BigEndian.Uint32(hdr), binary.BigEndian.Uint32(hdr[4:])
		capLen, wireLen = binary.BigEndian.Uint32(hdr[8:]), binary.BigEndian.Uint32(hdr[12:])
	} else {
		sec, sub = binary.LittleEndian.Uint32(hdr), binary.LittleEndian.Uint32(hdr[4:])
		capLen, wireLen = binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[12:])
	}
	if capLen > maxRecordLen {
		return nil, r.fail(fmt.Errorf("record claims %d captured bytes; the file is damaged", capLen))
	}
	// The buffer holds the whole file or at least readBufLen bytes, so the
	// record fits in it with its header.
	rec, err := r.br.Peek(16 + int(capLen))
	if len(rec) < 16+int(capLen) {
		r.br.Discard(16)
		r.offset += 16
		return nil, r.fail(fmt.Errorf("last record cut short: header says %d bytes, file has %d (%v)", capLen, len(rec)-16, errOrEOF(err)))
	}
	r.br.Discard(16 + int(capLen))
	data := rec[16:]
	r.frames++
	f.Number = r.frames
	f.Offset = r.offset
	r.offset += 16 + int64(capLen)
	f.TsNs = int64(sec)*1e9 + int64(sub)*r.nsPerTs
	f.CapLen, f.WireLen = int(capLen), int(wireLen)
	return data, nil
}

func errOrEOF(err error) error {
	if err == nil || err == bufio.ErrBufferFull { // the buffer holds the rest of the file
		return io.EOF
	}
	return err
}

func (r *Reader) fail(err error) error {
	r.err = &FileError{Name: r.name, Frame: r.frames + 1, Offset: r.offset, Err: err}
	return r.err
}

// pcapng block types and the section byte-order magic.
const (
	ngBlockSection        = 0x0A0D0D0A
	ngBlockPacketObsolete = 2
	ngBlockSimplePacket   = 3
	ngBlockEnhancedPacket = 6
	ngByteOrderMagic      = 0x1A2B3C4D
	ngBlocksLookedAhead   = 16
)

// nextNGPacketOffset returns the file offset of the next packet block,
// looking past the blocks before it (interfaces, statistics, new sections)
// in what br has buffered; -1 when it cannot tell.
func (r *Reader) nextNGPacketOffset() int64 {
	pos := r.counted.n - int64(r.br.Buffered())
	skip := 0
	for range ngBlocksLookedAhead {
		hdr, err := r.br.Peek(skip + 12)
		if err != nil {
			return -1
		}
		typ := r.ngOrder.Uint32(hdr[skip:])
		if typ == ngBlockSection {
			switch {
			case binary.LittleEndian.Uint32(hdr[skip+8:]) == ngByteOrderMagic:
				r.ngOrder = binary.LittleEndian
			case binary.BigEndian.Uint32(hdr[skip+8:]) == ngByteOrderMagic:
				r.ngOrder = binary.BigEndian
			}
		}
		if typ == ngBlockEnhancedPacket || typ == ngBlockSimplePacket || typ == ngBlockPacketObsolete {
			return pos + int64(skip)
		}
		n := int(r.ngOrder.Uint32(hdr[skip+4:]))
		if n < 12 || n > maxRecordLen {
			return -1
		}
		skip += n
	}
	return -1
}

func (r *Reader) recordNG(f *Frame) ([]byte, error) {
	offset := r.nextNGPacketOffset()
	data, ci, err := r.ng.ZeroCopyReadPacketData()
	if err == io.EOF {
		r.err = io.EOF
		return nil, io.EOF
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("last block cut short: %w", err)
		}
		r.err = &FileError{Name: r.name, Frame: r.frames + 1, Offset: offset, Err: err}
		return nil, r.err
	}
	r.frames++
	f.Number, f.Offset = r.frames, offset
	f.TsNs = ci.Timestamp.UnixNano()
	f.CapLen, f.WireLen = ci.CaptureLength, ci.Length
	if ci.InterfaceIndex < len(r.ngLinkTypes) || r.fillNGLinkTypes(ci.InterfaceIndex) {
		r.dec.LinkType = r.ngLinkTypes[ci.InterfaceIndex]
	}
	return data, nil
}

func (r *Reader) fillNGLinkTypes(idx int) bool {
	for i := len(r.ngLinkTypes); i <= idx; i++ {
		intf, err := r.ng.Interface(i)
		if err != nil {
			return false
		}
		r.ngLinkTypes = append(r.ngLinkTypes, int(intf.LinkType))
	}
	return true
}

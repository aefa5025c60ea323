package capfile

import (
	"encoding/binary"
	"io"
	"os"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// Cutting a pcap or pcapng file in many places at once. Read ahead on several
// cores, a file's records were cut into batches by one goroutine at a time
// (fileCut.cut), and that cut (the file read in, the records found and
// copied out) ran alone: on two cores it held flows and ipd to 0.8x to
// 0.9x the wall time of one.
//
// A large regular pcap or pcapng file is instead read as pieces of splitBytes each,
// piece k holding the records that start in its span of the file, after
// the file header, [k*splitBytes, (k+1)*splitBytes). A worker reads its
// piece with pread, into the batch, and finds where its first record
// starts by what a record header looks like (findRecord): a guess,
// which the caller checks before it hands out a frame of the piece. The
// caller knows where the next record starts, the end of the last record
// of the piece before: the piece is taken only when it begins right
// there. The first piece begins after the file header, so by induction
// every record handed out is one the file's own chain of records leads
// to, and the frames are those Reader.Next gives, in its order.
//
// Anything else (a guess that was wrong, a record the plain path would
// not take as it is, the end of the file as it was when opened, a read
// that failed) ends the pieces: from the end of the last piece taken,
// the caller cuts the rest of the file itself with the serial cut
// (toSerial), which reads on and says what it finds as it always did.
// The frames' numbers are counted from the piece's first and set right
// when the piece is taken (batch.rebase).

// The sizes of the pieces: variables so that tests cut small files in
// many small pieces.
var (
	// splitBytes is a piece: a batch of a few hundred frames of usual
	// size, small enough that a piece read in is still in its core's
	// cache when that core decodes it (64 KB pieces took 3 % more CPU
	// time than 128 KB; 256 KB no less).
	splitBytes int64 = 128 << 10
	// minSplitBytes is the smallest file cut in pieces: the work of one
	// read buffer or so is not worth the guesses.
	minSplitBytes int64 = 8 << 20
)

// chainRecords is how many records in a row findRecord wants to see
// before it takes a place for a record's start: a header whose subsecond
// field is below a second and whose lengths are in range, which random
// bytes pass about one time in a hundred million.
const chainRecords = 3

// lookPast is how far past its span a piece is read at first.
const lookPast = 4 << 10

// split is a file being cut in pieces: what the workers read of it, fixed
// once the pieces start.
type split struct {
	// m is the file's mapping, the pieces' bytes, nil when they are read
	// with pread from f.
	m    *mapping
	f    *os.File
	base int64 // where the records start: after the file header (pcapng: its first packet block)
	size int64 // the file's size when the pieces started
	// big says the file (pcapng: its section) is big-endian; nsPerTs is a
	// pcap timestamp's unit.
	big     bool
	nsPerTs int64
	// ng says the file is pcapng, whose packet blocks of ifaces (its
	// interfaces as read before its first packet) the pieces take.
	ng     bool
	ifaces []ngInterface
	// cfg is the reader's decoder settings (batch.cfg); link the pcap
	// file's link type, for every record's span.
	cfg  decode.Decoder
	link int
}

// splitFile cuts r in pieces from here on if it is a large regular pcap
// or pcapng file read as it is, whose frames are kept as heads only, and
// nothing is formatted (text holds frame numbers, which a piece learns
// only when it is taken): nil otherwise.
func splitFile(r *Reader, heads bool) *split {
	f, ok := r.br.rd.(*os.File)
	var size int64
	if r.br.m != nil {
		// A file grown since it was mapped: the pieces end at the mapping's end.
		f, ok, size = r.br.m.f, true, int64(len(r.br.m.data))
	}
	if !ok || !heads || r.format != nil || !r.regular || r.isERF || r.decompressor != nil || r.err != nil ||
		r.isNG && (r.ngOrder == nil || len(r.ngIfaces) == 0) {
		return nil
	}
	if r.br.m == nil {
		st, err := f.Stat()
		if err != nil {
			return nil
		}
		size = st.Size()
	}
	if size-r.offset < max(minSplitBytes, 1) {
		return nil
	}
	s := &split{m: r.br.m, f: f, base: r.offset, size: size, big: r.bigEnd, nsPerTs: r.nsPerTs, cfg: r.dec, link: r.dec.LinkType}
	if r.isNG {
		s.ng, s.big, s.ifaces = true, r.ngOrder == binary.BigEndian, slices.Clone(r.ngIfaces)
	}
	return s
}

// CutInPieces reports whether path would be cut in pieces when read ahead
// with heads and nothing formatted: a regular pcap or pcapng file (by its
// magic number) of minSplitBytes or more. Reading ahead on several cores
// pays for such a file; for others the one cut is most of the work.
func CutInPieces(path string) bool {
	magic, ok := regularMagic(path, minSplitBytes)
	return ok && (magic == magicNG || classicPcap(magic))
}

// piece is where a batch cut as a piece stands in the file.
type piece struct {
	lo, hi int64 // the span its records start in
	// start is where its first record starts, hi when none does; end is
	// where the record after its last starts.
	start, end int64
	// clean says the piece ended where the next one begins (end >= hi,
	// and hi before the file's end): otherwise the caller goes on from
	// end with the serial cut.
	clean bool
}

// u32 reads a 32-bit field in the file's byte order: a branch the
// compiler inlines, where binary.ByteOrder's is a call through an
// interface (a fifth of the pieces' cut).
func (s *split) u32(b []byte) uint32 {
	if s.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// headerLen is how many bytes of a record say its length: a pcap record
// header, a pcapng block's type and length.
func (s *split) headerLen() int {
	if s.ng {
		return 8
	}
	return 16
}

// length returns the length of the record whose header starts rec, false
// when the header is not one of a record the plain path takes as it is.
func (s *split) length(rec []byte) (int, bool) {
	if s.ng {
		n := s.u32(rec[4:])
		return int(n), s.u32(rec) == ngBlockEnhancedPacket && n >= 32 && n%4 == 0 && n <= ngMaxBlockLen
	}
	capLen := s.u32(rec[8:])
	return 16 + int(capLen), capLen <= maxRecordLen && s.u32(rec[12:]) >= capLen && int64(s.u32(rec[4:]))*s.nsPerTs < 1e9
}

// recordHead is what a piece keeps of a record.
type recordHead struct {
	capLen, wireLen int
	tsNs            int64
	dir             decode.Direction
	link            int
	data            int // where the frame starts in the record
}

// head reads the whole record rec, whose length says it is plain: what a
// pcap record's header says, or for a pcapng packet block what the plain
// path (plainBlock) reads of it, false where it would not take it.
func (s *split) head(rec []byte) (recordHead, bool) {
	if !s.ng {
		capLen, wireLen := s.u32(rec[8:]), s.u32(rec[12:])
		return recordHead{capLen: int(capLen), wireLen: int(wireLen), tsNs: int64(s.u32(rec))*1e9 + int64(s.u32(rec[4:]))*s.nsPerTs,
			link: s.link, data: 16}, true
	}
	n := uint32(len(rec))
	ifIndex := s.u32(rec[8:])
	capLen, wireLen := s.u32(rec[20:]), s.u32(rec[24:])
	if s.u32(rec[n-4:]) != n || uint64(ifIndex) >= uint64(len(s.ifaces)) || capLen > n-32 || wireLen < capLen {
		return recordHead{}, false
	}
	ifc := &s.ifaces[ifIndex]
	ns, ok := ngTimestampNs(uint64(s.u32(rec[12:]))<<32|uint64(s.u32(rec[16:])), ifc.tsResol, ifc.tsOffsetS)
	if !ok {
		return recordHead{}, false
	}
	dir := decode.DirectionUnknown
	if opts := 28 + int(capLen+3)&^3; opts <= int(n)-4 {
		var o binary.ByteOrder = binary.LittleEndian
		if s.big {
			o = binary.BigEndian
		}
		dir = ngDirection(rec[opts:n-4], o)
	}
	return recordHead{capLen: int(capLen), wireLen: int(wireLen), tsNs: ns, dir: dir, link: ifc.linkType, data: 28}, true
}

// cutPiece reads piece b.seq into b, a batch that keeps heads, finds its
// records and decodes each with w as it finds it, while the record is in
// the core's cache (on a worker, the file's lock not held).
func (s *split) cutPiece(b *batch, w *decoding) {
	p := &b.piece
	p.lo = s.base + int64(b.seq)*splitBytes
	p.hi = min(p.lo+splitBytes, s.size)
	p.start, p.end, p.clean = p.hi, p.hi, false
	if b.failed > 0 { // decodeHeads sets only the errors there are
		clear(b.errs)
	}
	b.n, b.end = 0, nil
	if s.m != nil {
		b.mapPiece(s.m.data[p.lo:p.lo])
	} else {
		b.data = b.data[:0]
	}
	b.isPiece, b.cfg = true, s.cfg
	b.decodeStart(&w.dec)
	// A little more than the piece: the headers of a record that starts
	// in its last bytes, and of the ones after, for findRecord to see.
	if !b.readAt(s, p.lo, int(min(p.hi+lookPast, s.size)-p.lo)) {
		p.start, p.end = p.lo, p.lo
		return
	}
	at := 0
	if b.seq > 0 {
		if at = s.findRecord(b.data, int(p.hi-p.lo)); at < 0 {
			p.clean = p.hi < s.size // no record starts here: one longer than the piece spans it
			return
		}
	}
	p.start = p.lo + int64(at)
	if s.ng {
		s.walkBlocks(b, at, w)
	} else {
		s.walkRecords(b, at, w)
	}
}

// walkRecords takes piece b's pcap records from data[at:] on, until one
// starts past the piece (or one the plain path would not take as it is),
// and decodes each with w as it takes it: length and head inlined, a
// record's cut costing what fillPlain's did.
func (s *split) walkRecords(b *batch, at int, w *decoding) {
	p := &b.piece
	for {
		off := p.lo + int64(at)
		if off >= p.hi {
			p.end, p.clean = off, p.hi < s.size
			return
		}
		p.end = off // unless the record is taken
		if len(b.data)-at < 16 && (off+16 > s.size || !b.holds(s, p.lo, at+16)) {
			return
		}
		rec := b.data[at:]
		sub, capLen, wireLen := s.u32(rec[4:]), s.u32(rec[8:]), s.u32(rec[12:])
		n := 16 + int(capLen)
		if capLen > maxRecordLen || wireLen < capLen || int64(sub)*s.nsPerTs >= 1e9 || off+int64(n) > s.size ||
			len(b.data)-at < n && !b.holds(s, p.lo, at+n) {
			return
		}
		if b.n == len(b.heads) {
			b.grow()
		}
		f := &w.f
		f.Number, f.CapLen, f.WireLen, f.Offset = b.n+1, int(capLen), int(wireLen), off
		f.TsNs, f.NoTs, f.Dir = int64(s.u32(rec))*1e9+int64(sub)*s.nsPerTs, false, decode.DirectionUnknown
		b.heads[b.n].failed = false
		b.decodeFrame(b.n, b.data[at+16:at+n], s.link, &w.dec, f)
		b.n++
		at += n
	}
}

// walkBlocks is walkRecords for pcapng packet blocks. Their last lines,
// taking the record into the worker's frame, are each walk's own: as a
// shared method (not inlined, or inlined by the profile) they cost decode
// --summary and flows at -j 2 2 to 3 % more CPU (21 to 31 alternating
// runs, 2M frames).
func (s *split) walkBlocks(b *batch, at int, w *decoding) {
	p := &b.piece
	for {
		off := p.lo + int64(at)
		if off >= p.hi {
			p.end, p.clean = off, p.hi < s.size
			return
		}
		p.end = off // unless the block is taken
		if off+8 > s.size || !b.holds(s, p.lo, at+8) {
			return
		}
		n, ok := s.length(b.data[at:])
		if !ok || off+int64(n) > s.size || !b.holds(s, p.lo, at+n) {
			return
		}
		rh, ok := s.head(b.data[at : at+n])
		if !ok {
			return
		}
		if b.n == len(b.heads) {
			b.grow()
		}
		f := &w.f
		f.Number, f.CapLen, f.WireLen, f.Offset = b.n+1, rh.capLen, rh.wireLen, off
		f.TsNs, f.NoTs, f.Dir = rh.tsNs, false, rh.dir
		b.heads[b.n].failed = false
		b.decodeFrame(b.n, b.data[at+rh.data:at+rh.data+rh.capLen], rh.link, &w.dec, f)
		b.n++
		at += n
	}
}

// findRecord returns where the first record that starts in data's first
// n bytes starts, by the look of chainRecords records in a row (fewer
// where data ends first); -1 when nothing there looks like one. pcapng
// blocks start 4-byte aligned.
func (s *split) findRecord(data []byte, n int) int {
	step := 1
	if s.ng {
		step = 4
	}
	for at := 0; at < min(n, len(data)-s.headerLen()); at += step {
		if s.chainAt(data, at) {
			return at
		}
	}
	return -1
}

// chainAt reports whether chainRecords records in a row seem to start at
// at (as many as data holds whole, at least one header).
func (s *split) chainAt(data []byte, at int) bool {
	for k := 0; k < chainRecords; k++ {
		if len(data)-at < s.headerLen() {
			return k > 0
		}
		n, ok := s.length(data[at:])
		// A guess, checked by the caller: a pcap wire length above 256
		// KiB is taken for no record's, though the plain path would take it.
		if !ok || !s.ng && s.u32(data[at+12:]) > 256<<10 {
			return false
		}
		if len(data)-at >= n {
			if _, ok := s.head(data[at : at+n]); !ok {
				return false
			}
		}
		at += n
	}
	return true
}

// holds reports whether b.data, the file from lo on, holds n bytes,
// reading on when it does not yet.
func (b *batch) holds(s *split, lo int64, n int) bool {
	return len(b.data) >= n || b.readAt(s, lo+int64(len(b.data)), n-len(b.data))
}

// readAt appends n bytes of s's file at off to b.data, reporting whether it
// read them all; b.data follows on in the mapping when the file is mapped.
func (b *batch) readAt(s *split, off int64, n int) bool {
	if n <= 0 {
		return true
	}
	if s.m != nil {
		end := min(off+int64(n), int64(len(s.m.data)))
		b.data = s.m.data[off-int64(len(b.data)) : end]
		return end == off+int64(n)
	}
	f := s.f
	k := len(b.data)
	if cap(b.data)-k < n {
		grown := make([]byte, k, max(2*cap(b.data), k+n))
		copy(grown, b.data)
		b.data = grown
	}
	b.data = b.data[:k+n]
	got, err := f.ReadAt(b.data[k:], off)
	if got < n {
		b.data = b.data[:k+max(got, 0)]
		return false
	}
	return err == nil || err == io.EOF
}

// grow doubles the room for frames in b's heads, spans and errors (a
// piece holds as many records as start in it, not batchFrames).
func (b *batch) grow() {
	n := 2 * len(b.heads)
	b.heads = append(b.heads, make([]frameHead, n-len(b.heads))...)
	b.spans = append(b.spans, make([]recordSpan, n-len(b.spans))...)
	b.errs = append(b.errs, make([]error, n-len(b.errs))...)
}

// rebase numbers piece b's errors and Projection from frames+1, as
// Reader.Next would: the worker numbered them from 1 (next numbers the
// frames it hands out, readAhead.base).
func (b *batch) rebase(frames int) {
	for i := 0; i < b.n && b.failed > 0; i++ {
		if de, ok := b.errs[i].(*DecodeError); ok {
			de.Frame += frames
		}
	}
	if b.proj != nil {
		b.proj.Renumber(frames)
	}
}

// takePiece checks piece b, next in the file's order, before its frames
// are handed out, and numbers them. It reports whether b's frames are
// next: false when b lies inside a record that began before it (nothing
// of it to take), or when its guess was wrong (then the caller has gone
// serial and cuts the rest itself).
func (a *readAhead) takePiece(b *batch) bool {
	p := &b.piece
	switch {
	case p.start == a.at:
		a.base = a.frames
		b.rebase(a.frames)
		a.frames += b.n
		a.at = p.end
		if m := a.file.split.m; m != nil && p.lo-int64(m.released) >= int64(mapChunk) {
			m.release(int(p.lo)) // the pieces before are taken
		}
		return true
	case a.at >= p.hi && p.hi < a.file.split.size:
		return false
	}
	a.toSerial()
	return false
}

// toSerial ends the pieces of a file: its reader goes on from where the
// record after the last piece taken starts, and the caller cuts the rest
// of the file into batches itself (cutHere).
func (a *readAhead) toSerial() {
	c := a.file
	c.mu.Lock()
	if !c.ended {
		c.ended = true
		c.pool.ended()
	}
	c.mu.Unlock()
	r := c.r
	r.frames, r.offset = a.frames, a.at
	w := r.br
	if w.m != nil {
		w.seekMapped(a.at)
		a.serial = true
		return
	}
	w.r, w.w, w.pos, w.err, w.pf = 0, 0, a.at, nil, nil
	if _, err := c.split.f.Seek(a.at, io.SeekStart); err != nil {
		a.end = &FileError{Name: r.name, Frame: a.frames + 1, Offset: a.at, Err: err}
	}
	a.serial = true
}

// cutHere cuts and decodes the file's next batch on the caller's
// goroutine, once serial.
func (a *readAhead) cutHere() *batch {
	b := a.serialBatch
	if b == nil {
		b = a.newBatch()
	}
	a.serialBatch = nil
	b.isPiece = false
	if r := a.file.r; r.mapped != nil {
		guardFault(func() { b.fill(r, a.file.reading) }, func() { b.end = r.fail(errShrank) })
	} else {
		b.fill(r, a.file.reading)
	}
	b.decode(&a.pool.caller.dec, &a.pool.caller.f)
	return b
}

// mapPiece has b's records be piece, in the file's mapping, keeping b's
// own buffer for the serial cut.
func (b *batch) mapPiece(piece []byte) {
	if !b.inMap {
		b.own, b.inMap = b.data, true
	}
	b.data = piece
}

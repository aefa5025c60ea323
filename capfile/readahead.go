package capfile

import (
	"runtime"
	"sync"
	"time"

	"github.com/ibscope/ibscope/decode"
)

// Decoding on several cores. The regular files of a stream are read ahead
// by a pool of workers: a worker takes a free batch of a file, cuts the
// file's next records into it (copied out of the read buffer, under the
// file's lock: one worker reads a file at a time, in its order), then,
// with the lock let go, decodes them and runs StreamOptions.Project and
// Format on them, while another worker cuts the next batch. The caller
// takes the batches back in the file's order, by their sequence numbers:
// the frames, their errors and the end of the file are the ones Reader.Next
// would have given, in the same order. What depends on the order (the
// merge, the counts, the selection, every analysis) stays on the caller's
// goroutine.
//
// There is no reading goroutine of its own: one that only cut records had
// to wait its turn behind the workers for a core at every batch (two
// thirds of the wall time of a 2-core decode --summary went in such
// waits, go tool trace), and the caller then waited for it.
//
// Memory is bounded: each file has up to batchesAhead batches, reused. A
// file starts with startBatches and gets more only as its frames are
// taken, so that the pieces of a rotated capture waiting their turn in the
// merge hold little; a file read to its end lets its batches go.

const (
	// batchFrames and batchBytes bound a batch: large enough that the
	// hand-over (a few channel and lock operations, and now and then a
	// goroutine woken) costs nothing per frame, small enough that the
	// batches of all files stay a few MB.
	batchFrames = 256
	batchBytes  = 1 << 20
	// batchStartBytes is a batch's room for records at first, enough for
	// 256 of 256 bytes: growing there by appends left its garbage behind
	// in every batch, and brought a collection more.
	batchStartBytes = 64 << 10
)

// Projection is what a caller has the workers compute of each frame of a
// batch beside decoding it (StreamOptions.Project): done on the workers,
// it crosses to the caller's goroutine in place of the frame's fields it
// reads (a decode.Frame is 1.7 KB).
type Projection interface {
	// Project is given frame i of its batch (from 0), decoded, and the
	// error Next gives with it. It runs on a worker, at the same time as
	// other batches' Projections: it must change nothing but its own.
	Project(i int, f *decode.Frame, err error)
	// Renumber adds by to the frame numbers the Projection kept: a batch
	// cut as a piece of its file (split.go) numbers its frames from 1
	// until the caller, taking it, knows how many frames came before.
	Renumber(by int)
}

// decodePool is the workers that read and decode the batches of a
// stream's files.
type decodePool struct {
	work    chan *batch // free batches of the files being read, to cut and decode
	workers int

	// caller is what the caller's goroutine decodes with: it decodes too
	// while it waits (readAhead.wait).
	caller *decoding

	mu   sync.Mutex
	live int           // files read ahead that have not ended nor been closed
	done chan struct{} // closed when live falls to 0: the workers end
	// used is batches of files that have ended, for the next file's: a
	// rotated set's files each made a dozen, garbage at their end (1000
	// files of 2000 frames: -j 2 took twice the time of -j 1).
	used []*batch
}

// newDecodePool makes a pool of workers for up to files files.
func newDecodePool(workers, files int) *decodePool {
	return &decodePool{work: make(chan *batch, files*batchesAhead(workers)), workers: workers, done: make(chan struct{}), caller: new(decoding)}
}

// start starts the workers once the files are read ahead, one fewer than
// the pool is for: the caller's goroutine is the last (readAhead.wait).
// When the files have all ended (or been closed), the workers end too.
func (p *decodePool) start() {
	p.mu.Lock()
	if p.live == 0 {
		close(p.done)
	}
	p.mu.Unlock()
	for range p.workers - 1 {
		go p.run()
	}
}

// ended is told once of each file that ends or is closed.
func (p *decodePool) ended() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live--; p.live == 0 {
		close(p.done)
	}
}

func (p *decodePool) run() {
	var w decoding
	for {
		select {
		case b := <-p.work:
			p.process(b, &w)
		case <-p.done:
			return
		}
	}
}

// reuse keeps b, a batch of a file that has ended, for another file, up to
// a file's worth.
func (p *decodePool) reuse(b *batch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.used) < batchesAhead(p.workers) {
		b.file = nil
		p.used = append(p.used, b)
	}
}

// reused returns a batch kept by reuse, nil if none.
func (p *decodePool) reused() *batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.used)
	if n == 0 {
		return nil
	}
	b := p.used[n-1]
	p.used[n-1] = nil
	p.used = p.used[:n-1]
	return b
}

// decoding is a goroutine's own: a Decoder (its ICRC scratch buffer is
// per Decoder) and, with StreamOptions.Heads, the frame it decodes into.
type decoding struct {
	dec decode.Decoder
	f   decode.Frame
}

// process cuts free batch b from its file and decodes it with dec, unless
// the file has ended (the batch then goes).
func (p *decodePool) process(b *batch, w *decoding) {
	if b.file.r.mapped != nil {
		p.processMapped(b, w)
		return
	}
	p.processRead(b, w)
}

// processMapped is process for a mapped file (mapping.go), which faults
// where another program cut it short: the batch then ends where the
// fault was, a piece as one the caller goes on from with the serial cut
// (takePiece), the serial cut's with the file's end (errShrank).
func (p *decodePool) processMapped(b *batch, w *decoding) {
	guardFault(func() { p.processRead(b, w) }, func() {
		c := b.file
		if !b.isPiece { // the fault was in take, whose deferred Unlock ran
			c.lock()
			b.end = c.r.fail(errShrank)
			if !c.ended {
				c.ended = true
				c.pool.ended()
			}
			c.mu.Unlock()
		}
		c.ready[b.seq%len(c.ready)] <- b
	})
}

// processRead is process's work.
func (p *decodePool) processRead(b *batch, w *decoding) {
	c := b.file
	if !c.cut(b, w) {
		p.reuse(b)
		return
	}
	if !b.isPiece { // a piece is decoded as it is cut
		b.decode(&w.dec, &w.f)
	}
	c.ready[b.seq%len(c.ready)] <- b // never blocks: see readAhead.ready
}

// batch is up to batchFrames consecutive records of one file.
type batch struct {
	file *fileCut
	seq  int    // its place in the file: the batches are numbered from 0 as they are cut
	data []byte // the records' bytes, back to back; a piece's, in the file's mapping when mapped
	// own is the batch's buffer while data is a piece of the mapping
	// (mapPiece), for the serial cut (fill) to copy records into.
	own   []byte
	inMap bool
	spans []recordSpan // where each record is in data, and how to decode it (a piece needs none: split.go)
	// frames is the records' frames, decoded by a worker; with
	// StreamOptions.Heads there are none, and heads holds what Next
	// hands out of each.
	frames []decode.Frame
	heads  []frameHead
	// errs is each frame's *DecodeError, nil when it decoded; with heads,
	// only where its head says failed (the caller reads no more of it).
	errs []error
	n    int
	// failed and untimed count the frames with an error and those without
	// a timestamp, for Stream.NextBatch's counts.
	failed, untimed int
	// end is what follows the last frame: nil when another batch does,
	// else io.EOF or the file's *FileError.
	end error
	// cfg is the Reader's decoder settings when the batch was cut.
	cfg decode.Decoder
	// proj is StreamOptions.Project's for this batch, nil for none, made
	// for link type projLink.
	proj     Projection
	projLink int
	// headsOnly decodes the frames only as far as their heads
	// (decode.Decoder.DecodeHead): StreamOptions.HeadsOnly, with Heads.
	headsOnly bool
	// format is StreamOptions.Format, nil for none: the workers write each
	// frame's text into text, frame i's ending at textEnds[i].
	format   func(dst []byte, f *decode.Frame, err error) []byte
	text     []byte
	textEnds []int
	// isPiece says the batch was cut as a piece of its file (split.go),
	// where piece says.
	isPiece bool
	piece   piece
}

type recordSpan struct {
	start, end int
	linkType   int // pcapng interfaces each have their own
}

// decode decodes the batch's records with dec, which takes the batch's
// settings, and runs the Projection and Format on them.
func (b *batch) decode(dec *decode.Decoder, scratch *decode.Frame) {
	b.decodeStart(dec)
	if b.heads != nil {
		b.decodeHeads(dec, scratch)
		return
	}
	r := b.file.r
	for i := range b.n {
		if b.frames[i].NoTs {
			b.untimed++
		}
		if b.errs[i] != nil { // the record's header was refused: nothing to decode
			b.failed++
			continue
		}
		sp := b.spans[i]
		dec.LinkType = sp.linkType
		if err := dec.Decode(b.data[sp.start:sp.end], &b.frames[i]); err != nil {
			b.errs[i] = r.decodeError(&b.frames[i], err)
			b.failed++
		}
	}
	if b.proj != nil {
		for i := range b.n {
			b.proj.Project(i, &b.frames[i], b.errs[i])
		}
	}
	if b.format != nil {
		b.text = b.text[:0]
		for i := range b.n {
			b.text = b.format(b.text, &b.frames[i], b.errs[i])
			b.textEnds[i] = len(b.text)
		}
	}
}

// decodeHeads is decode with StreamOptions.Heads: each frame is decoded
// into the worker's own f, which stays in its core's cache, and all that
// is kept of it is its head, the Projection's and the Format's. Frames
// decoded in place in the batch were 1.7 KB of cold memory each to write
// on one core and read on another: a third more CPU time in all than one
// core took for flows.
func (b *batch) decodeHeads(dec *decode.Decoder, f *decode.Frame) {
	if b.format != nil {
		b.text = b.text[:0]
	}
	for i := range b.n {
		b.heads[i].put(f)
		sp := b.spans[i]
		b.decodeFrame(i, b.data[sp.start:sp.end], sp.linkType, dec, f)
	}
}

// decodeStart gives dec the batch's settings and zeroes its counts, before
// its first frame is decoded.
func (b *batch) decodeStart(dec *decode.Decoder) {
	dec.CheckCRC, dec.IFA1ProbeMarker, dec.HeadFields = b.cfg.CheckCRC, b.cfg.IFA1ProbeMarker, b.cfg.HeadFields
	b.failed, b.untimed = 0, 0
}

// decodeFrame decodes frame i of a batch with heads, the record bytes data
// of link type linkType, into f, which holds the record's fields, and
// keeps its head, its error, the Projection's and the Format's of it.
// b.heads[i].failed says whether the record's header was refused.
func (b *batch) decodeFrame(i int, data []byte, linkType int, dec *decode.Decoder, f *decode.Frame) {
	h := &b.heads[i]
	if !h.failed { // else the record's header was refused: nothing to decode
		dec.LinkType = linkType
		var err error
		if b.headsOnly {
			err = dec.DecodeHead(data, f)
		} else {
			err = dec.Decode(data, f)
		}
		h.take(f)
		if err != nil {
			b.errs[i], h.failed = b.file.r.decodeError(f, err), true
		}
	}
	var err error
	if h.failed {
		err = b.errs[i]
		b.failed++
	}
	if h.noTs {
		b.untimed++
	}
	if b.proj != nil {
		b.proj.Project(i, f, err)
	}
	if b.format != nil {
		b.text = b.format(b.text, f, err)
		b.textEnds[i] = len(b.text)
	}
}

// frameHead is what a frame read ahead with StreamOptions.Heads keeps:
// the record (Reader.record's fields) and what says which headers the
// frame held and whether its CRCs matched.
type frameHead struct {
	number, capLen, wireLen int
	offset, tsNs            int64
	noTs                    bool
	iface                   int8
	dir                     decode.Direction
	transport               decode.Transport
	has                     decode.Has
	icrcOK, vcrcOK          bool
	// failed says the frame has an error (batch.errs): an error a frame,
	// 16 bytes, was as much to cross to the caller as the rest of its head.
	failed bool
}

// take keeps f's head.
func (h *frameHead) take(f *decode.Frame) {
	h.number, h.capLen, h.wireLen = f.Number, f.CapLen, f.WireLen
	h.offset, h.tsNs, h.noTs = f.Offset, f.TsNs, f.NoTs
	h.iface, h.dir, h.transport, h.has = f.Iface, f.Dir, f.Transport, f.Has
	// One byte at a time: read as one 16-bit word, the two waited for the
	// decoder's stores of them (a 16-bit zero, then ICRCOK's byte) to reach
	// the cache, a third of decodeFrame's time on the pieces.
	h.vcrcOK = f.VCRCOK
	h.icrcOK = f.ICRCOK
}

// put gives f the head kept.
func (h *frameHead) put(f *decode.Frame) {
	f.Number, f.CapLen, f.WireLen = h.number, h.capLen, h.wireLen
	f.Offset, f.TsNs, f.NoTs = h.offset, h.tsNs, h.noTs
	f.Iface, f.Dir, f.Transport, f.Has = h.iface, h.dir, h.transport, h.has
	f.ICRCOK, f.VCRCOK = h.icrcOK, h.vcrcOK
}

// readAhead is a Reader's records being read, and decoded, ahead of Next:
// the caller's side of it.
type readAhead struct {
	file *fileCut
	pool *decodePool
	// ready[seq%len(ready)] takes batch seq once it is decoded. There are
	// at most len(ready) batches, and the ones not free are numbered in a
	// row from the one Next takes frames from: no two share a slot.
	ready []chan *batch

	cur     *batch // the batch Next takes frames from
	i       int    // its next frame
	end     error  // the file's end, once reached
	nextSeq int    // the batch Next takes after cur

	// spare is the batches whose frames were taken, kept by the caller
	// until there are enough to give back (free).
	spare          []*batch
	made, maxBatch int // batches made so far, and at most
	project        func(linkType int) Projection
	format         func(dst []byte, f *decode.Frame, err error) []byte
	heads          bool         // StreamOptions.Heads
	headsOnly      bool         // StreamOptions.HeadsOnly
	linkType       int          // the file's, as it said before its first frame
	view           decode.Frame // the frame next returns, with heads

	// A file cut in pieces (split.go): at is where the record after the
	// last taken starts, frames how many were taken. Once serial, the
	// caller cuts the rest itself into serialBatch.
	at          int64
	frames      int
	base        int // what cur's frame numbers lack: the frames before its piece
	serial      bool
	serialBatch *batch
}

// fileCut is the workers' side of a file read ahead: what cutting its
// batches changes, apart from what the caller changes for every frame
// (readAhead), which would otherwise share cache lines with it. A Reader
// and a readAhead in one, the caller read the fields of one frame where a
// worker had written those of the next: a cache line that crossed between
// the cores for every frame.
type fileCut struct {
	r     *Reader
	pool  *decodePool
	ready []chan *batch // readAhead.ready

	// mu is held while a worker cuts the next batch from r: the file is
	// read by one goroutine at a time, in its order (lock).
	mu    sync.Mutex
	seq   int  // the next batch cut gets this sequence number
	ended bool // the file has ended, or been closed: nothing more is cut
	// cutting counts the pieces being cut, outside mu: close waits for
	// them, as a mapped file must not be unmapped under one.
	cutting sync.WaitGroup
	// reading is what the records are read into, with heads: apart, as
	// a goroutine waiting for mu reads mu's cache line over and over.
	reading *decode.Frame
	// split, when set, has the file cut in pieces (split.go), the batch
	// numbered seq being the piece seq.
	split *split
	// prefetchLater has a compressed file of several decompressed on a
	// goroutine of its own (prefetch.go) once its frames are taken, from
	// its second batch on: the files waiting their turn in the merge get
	// no second buffer.
	prefetchLater bool
}

// startBatches is how many batches a file alone in its stream has before
// its frames are taken: one being decoded while a worker cuts the next. A
// file of several is read ahead only once its first frame, read on the
// caller's goroutine, has been handed out (Stream.attach), and has none:
// its batches are made as its frames are taken.
const startBatches = 2

// batchesAhead is how many batches a file has: enough for every worker to
// decode one while another cuts the next and the caller takes another,
// up to maxBatchesAhead (each up to 1.5 MB, 1 MB with StreamOptions.Heads).
func batchesAhead(workers int) int { return min(4*workers+4, maxBatchesAhead) }

const maxBatchesAhead = 64

// readAhead makes r read and decode ahead through pool from now on, with
// project (nil for none) making each batch's Projection, keeping only the
// frames' heads if heads (StreamOptions.Heads), decoding them only as far
// as their heads if headsOnly too (StreamOptions.HeadsOnly); alone says r
// is its stream's only file (startBatches). The pool counts r among its
// live files already (Stream.readAhead).
func (r *Reader) readAhead(pool *decodePool, project func(linkType int) Projection, heads, headsOnly, alone bool) *readAhead {
	n := batchesAhead(pool.workers)
	a := &readAhead{pool: pool, ready: make([]chan *batch, n), maxBatch: n, project: project, format: r.format, heads: heads,
		headsOnly: heads && headsOnly, linkType: r.LinkType()}
	for i := range a.ready {
		a.ready[i] = make(chan *batch, 1)
	}
	a.file = &fileCut{r: r, pool: pool, ready: a.ready, reading: new(decode.Frame), split: splitFile(r, heads)}
	if a.file.split != nil {
		a.at = a.file.split.base
	}
	a.frames = r.frames // read before it was read ahead (Stream.attach)
	r.ahead = a
	if alone {
		for range min(startBatches, n) {
			a.more()
		}
	}
	return a
}

// cut reads the next records of the file into b, and reports whether it
// did: false once the file has ended or been closed. A piece (split.go) is
// decoded too, with w, as its records are found.
func (c *fileCut) cut(b *batch, w *decoding) bool {
	ok, piece := c.take(b)
	if piece {
		defer c.cutting.Done()
		c.split.cutPiece(b, w) // the lock let go
	}
	return ok
}

// take gives b the file's next place, under the file's lock, and cuts the
// records there into b unless they are a piece (piece: cut cuts it). ok is
// false once the file has ended or been closed.
func (c *fileCut) take(b *batch) (ok, piece bool) {
	c.lock()
	defer c.mu.Unlock()
	if c.ended {
		return false, false
	}
	b.seq = c.seq
	if s := c.split; s != nil {
		if s.base+int64(b.seq)*splitBytes >= s.size {
			c.ended = true // the caller cuts the rest itself (toSerial)
			c.pool.ended()
			return false, false
		}
		c.seq++
		c.cutting.Add(1) // before close can see ended
		return true, true
	}
	c.seq++
	if c.prefetchLater && b.seq > 0 {
		c.prefetchLater = false
		c.r.prefetchFile()
	}
	b.fill(c.r, c.reading)
	if b.end != nil {
		c.ended = true
		c.pool.ended()
	}
	return true, false
}

// lock takes mu. The goroutine that holds it cuts a batch, some tens of
// microseconds: a goroutine that finds it taken yields its core and tries
// again about that long before it sleeps. sync.Mutex's own spin is a
// microsecond; after it, the sleep and the wake-up (a futex each) cost a
// third of the CPU time of a 2-core decode --summary.
func (c *fileCut) lock() {
	if c.mu.TryLock() {
		return
	}
	for start := time.Now(); time.Since(start) < maxSpin; {
		runtime.Gosched()
		if c.mu.TryLock() {
			return
		}
	}
	c.mu.Lock()
}

// fill reads the next records of r into b; f is the reading's frame
// when b keeps heads only.
func (b *batch) fill(r *Reader, f *decode.Frame) {
	if b.inMap {
		b.data, b.inMap = b.own, false
	}
	b.n, b.end, b.data = 0, nil, b.data[:0]
	b.cfg = r.dec
	plain := b.heads != nil && !r.isNG && !r.isERF
	for b.n < batchFrames && len(b.data) < batchBytes {
		if plain && r.err == nil {
			if b.fillPlain(r, f); b.n == batchFrames || len(b.data) >= batchBytes {
				return
			}
		}
		if b.heads == nil {
			f = &b.frames[b.n]
		}
		data, err := r.record(f)
		if err != nil {
			if _, ok := err.(*recordError); !ok {
				b.end = err // io.EOF, or the damage that ends the file
				return
			}
			b.errs[b.n] = r.recordFailed(f, err)
		} else {
			start := len(b.data)
			b.data = append(b.data, data...)
			b.spans[b.n] = recordSpan{start: start, end: len(b.data), linkType: r.dec.LinkType}
			if b.heads == nil {
				b.errs[b.n] = nil
			}
		}
		if b.heads != nil {
			h := &b.heads[b.n]
			h.take(f)
			h.failed = err != nil
		}
		b.n++
	}
}

// fillPlain cuts into b, which keeps heads, the pcap records that are
// whole in r's read buffer and whose headers record takes as they are,
// doing what record does for each, and copies them into b in one piece:
// one call a batch rather than one record and one append a record, a
// fifth of decode --summary's CPU time on two cores, all of it in the
// cut, which one goroutine does at a time. It stops at any other record
// (the buffer's end, a length out of range, a header record refuses),
// leaving it unread to fill's loop, which reads it (the buffer filled
// again) or says why it fails.
func (b *batch) fillPlain(r *Reader, f *decode.Frame) {
	buf := r.br.avail()
	pos, start := 0, len(b.data)
	for b.n < batchFrames && start+pos < batchBytes {
		rec := buf[pos:]
		if len(rec) < 16 {
			break
		}
		sec, sub, capLen, wireLen := r.pcapRecordHeader(rec)
		subNs := int64(sub) * r.nsPerTs
		n := 16 + int(capLen)
		if capLen > maxRecordLen || len(rec) < n || wireLen < capLen || subNs >= 1e9 {
			break
		}
		r.frames++
		f.Dir = decode.DirectionUnknown
		f.Number, f.Offset = r.frames, r.offset
		f.TsNs, f.NoTs = int64(sec)*1e9+subNs, false
		f.CapLen, f.WireLen = int(capLen), int(wireLen)
		r.offset += int64(n)
		b.spans[b.n] = recordSpan{start: start + pos + 16, end: start + pos + n, linkType: r.dec.LinkType}
		h := &b.heads[b.n]
		h.take(f)
		h.failed = false
		b.n++
		pos += n
	}
	b.data = append(b.data, buf[:pos]...)
	r.br.Discard(pos)
}

// more makes one more batch for the workers to fill.
func (a *readAhead) more() {
	a.made++
	a.pool.work <- a.newBatch() // never blocks: it has room for every batch
}

// newBatch makes a batch for the file, or takes one another file used
// (every file of a stream makes its batches alike, but for the link type
// of their Projection).
func (a *readAhead) newBatch() *batch {
	if b := a.pool.reused(); b != nil {
		b.file, b.isPiece, b.piece = a.file, false, piece{}
		b.n, b.failed, b.untimed, b.end = 0, 0, 0, nil
		clear(b.errs)
		if a.project != nil && b.projLink != a.linkType {
			b.proj, b.projLink = a.project(a.linkType), a.linkType
		}
		return b
	}
	b := &batch{file: a.file, data: make([]byte, 0, batchStartBytes), spans: make([]recordSpan, batchFrames), errs: make([]error, batchFrames),
		format: a.format, headsOnly: a.headsOnly}
	if a.heads {
		b.heads = make([]frameHead, batchFrames)
	} else {
		b.frames = make([]decode.Frame, batchFrames)
	}
	if b.format != nil {
		b.textEnds = make([]int, batchFrames)
	}
	if a.project != nil {
		b.proj, b.projLink = a.project(a.linkType), a.linkType
	}
	return b
}

// next returns the next frame of the file, valid until the next call, and
// its error as Reader.Next gives it.
func (a *readAhead) next() (*decode.Frame, error) {
	for {
		if b := a.cur; b != nil {
			if a.i < b.n {
				a.i++
				if b.heads != nil {
					h := &b.heads[a.i-1]
					h.put(&a.view)
					a.view.Number += a.base
					if h.failed {
						return &a.view, b.errs[a.i-1]
					}
					return &a.view, nil
				}
				return &b.frames[a.i-1], b.errs[a.i-1]
			}
			a.end = b.end
			a.cur = nil
			if b.isPiece && !b.piece.clean {
				a.toSerial() // the pieces end here
			}
			switch {
			case a.serial:
				a.serialBatch = b
			case a.end == nil:
				a.free(b)
			default:
				a.pool.reuse(b) // the file's last
			}
		}
		if a.end != nil {
			return nil, a.end
		}
		if a.serial {
			a.cur, a.i, a.base = a.cutHere(), 0, 0
			continue
		}
		if a.made < a.maxBatch {
			a.more() // the file is being taken: let the workers run further ahead
		}
		b := a.wait()
		a.nextSeq++
		if b.isPiece && !a.takePiece(b) {
			if a.serial {
				a.serialBatch = b
			} else {
				a.free(b)
			}
			continue
		}
		a.cur, a.i = b, 0 // a.base is 0 but for pieces (takePiece), and no piece follows the serial cut
	}
}

// free gives batch b, whose frames have all been taken, back to be cut
// again. The batches go back to the workers by halves of the file's, or
// all when the caller waits (wait): a worker with no batch to cut sleeps,
// and waking it (a core to be found for it, on a busy machine a time slice
// of another process to wait out) costs much more than a batch takes.
func (a *readAhead) free(b *batch) {
	a.spare = append(a.spare, b)
	if len(a.spare) >= max(1, a.maxBatch/2) {
		a.release()
	}
}

// release gives the spare batches back to the workers.
func (a *readAhead) release() {
	for _, b := range a.spare {
		a.pool.work <- b // never blocks: it has room for every batch
	}
	clear(a.spare)
	a.spare = a.spare[:0]
}

// wait returns the batch next takes after cur once it is decoded. Until
// it is, the caller decodes too: it takes the free batches there are (of
// any file), as the workers do, and so is one of the goroutines that
// decode. Waiting without helping, the caller was woken only once a worker
// let go of its core: it waited its turn behind the workers at every batch.
func (a *readAhead) wait() *batch {
	ready := a.ready[a.nextSeq%len(a.ready)]
	select {
	case b := <-ready:
		return b
	default:
	}
	a.release()
	var spinStart time.Time
	for {
		select {
		case b := <-ready:
			return b
		case b := <-a.pool.work:
			a.pool.process(b, a.pool.caller)
			spinStart = time.Time{}
			continue
		default:
		}
		// Nothing to cut: the batch is being decoded by a worker, done
		// in a few tens of microseconds. Sleeping would cost more than
		// that: the worker's wakeup of this goroutine (a futex, and a
		// core found for it) was a tenth of the CPU time of a 2-core
		// decode --summary.
		if spinStart.IsZero() {
			spinStart = time.Now()
		}
		if time.Since(spinStart) < maxSpin {
			runtime.Gosched()
			continue
		}
		select {
		case b := <-ready:
			return b
		case b := <-a.pool.work:
			a.pool.process(b, a.pool.caller)
			spinStart = time.Time{}
		}
	}
}

// maxSpin is how long a goroutine with nothing to do looks for work
// before it sleeps: about what decoding a batch takes.
const maxSpin = 50 * time.Microsecond

// projected is the Projection of the frame next returned last and its
// index in it (StreamOptions.Project).
func (a *readAhead) projected() (Projection, int) { return a.cur.proj, a.i - 1 }

// text is the text of the frame next returned last (StreamOptions.Format).
func (a *readAhead) text() []byte {
	b, i := a.cur, a.i-1
	start := 0
	if i > 0 {
		start = b.textEnds[i-1]
	}
	return b.text[start:b.textEnds[i]]
}

// letGo gives the batches the caller holds to the next file's
// (decodePool.reuse), once the file has ended.
func (a *readAhead) letGo() {
	for _, b := range a.spare {
		a.pool.reuse(b)
	}
	for _, b := range []*batch{a.cur, a.serialBatch} {
		if b != nil {
			a.pool.reuse(b)
		}
	}
	a.spare, a.cur, a.serialBatch = nil, nil, nil
}

// close stops the workers reading the file, waiting for the one that is
// (and for those cutting pieces of it), so that the file can be closed
// (and unmapped) under them.
func (a *readAhead) close() {
	c := a.file
	c.mu.Lock()
	if !c.ended {
		c.ended = true
		c.pool.ended()
	}
	c.mu.Unlock()
	c.cutting.Wait()
}

package capfile

import (
	"sync"

	"github.com/ibscope/ibscope/decode"
)

// Decoding on several cores. A file read ahead has its own goroutine that
// cuts its records into batches (copied out of the read buffer into the
// batch's own, pooled), a pool of workers shared by the stream's files
// decodes the batches, and the caller takes the frames back batch by batch
// in the file's order: the frames, their errors and the end of the file are
// the ones Reader.Next would have given, in the same order. Only the CRC
// checks and the header parsing move; what depends on the order (the merge,
// the counts, the selection, every analysis) stays on the caller's
// goroutine. Memory is bounded: each file has up to batchesAhead batches,
// reused. A file starts with startBatches and gets more only as its frames
// are taken, so that the pieces of a rotated capture waiting their turn in
// the merge hold little; a file read to its end lets its batches go.

const (
	// batchFrames and batchBytes bound a batch: large enough that the
	// hand-over (two channel operations) costs nothing per frame, small
	// enough that the batches of all files stay a few MB.
	batchFrames = 256
	batchBytes  = 1 << 20
)

// decodePool is the workers that decode the batches of a stream's files.
type decodePool struct {
	work    chan *batch
	workers int
	readers sync.WaitGroup // read-ahead goroutines still sending work
}

// newDecodePool starts workers goroutines that decode until every file
// read ahead has ended (or been closed).
func newDecodePool(workers int) *decodePool {
	p := &decodePool{work: make(chan *batch, 4*workers), workers: workers}
	for range workers {
		go p.decode()
	}
	return p
}

// start is called once the files are read ahead: when they have all ended,
// the workers end too.
func (p *decodePool) start() {
	go func() {
		p.readers.Wait()
		close(p.work)
	}()
}

func (p *decodePool) decode() {
	var dec decode.Decoder // each worker its own: the ICRC scratch buffer is per Decoder
	for b := range p.work {
		b.decode(&dec)
		b.decoded <- struct{}{}
	}
}

// batch is up to batchFrames consecutive records of one file.
type batch struct {
	r      *Reader
	data   []byte         // the records' bytes, back to back
	spans  []recordSpan   // where each record is in data, and how to decode it
	frames []decode.Frame // the records' frames, decoded by a worker
	errs   []error        // each frame's *DecodeError, nil when it decoded
	n      int
	// end is what follows the last frame: nil when another batch does,
	// else io.EOF or the file's *FileError.
	end error
	// cfg is the Reader's decoder settings when the batch was cut.
	cfg decode.Decoder
	// format is StreamOptions.Format, nil for none: the workers write each
	// frame's text into text, frame i's ending at textEnds[i].
	format   func(dst []byte, f *decode.Frame, err error) []byte
	text     []byte
	textEnds []int
	decoded  chan struct{} // a worker puts one token when the frames are decoded
}

type recordSpan struct {
	start, end int
	linkType   int // pcapng interfaces each have their own
}

// decode decodes the batch's records with dec, which takes the batch's
// settings.
func (b *batch) decode(dec *decode.Decoder) {
	dec.CheckCRC, dec.IFA1ProbeMarker = b.cfg.CheckCRC, b.cfg.IFA1ProbeMarker
	for i := range b.n {
		if b.errs[i] != nil { // the record's header was refused: nothing to decode
			continue
		}
		sp := b.spans[i]
		dec.LinkType = sp.linkType
		if err := dec.Decode(b.data[sp.start:sp.end], &b.frames[i]); err != nil {
			b.errs[i] = b.r.decodeError(&b.frames[i], err)
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

// readAhead is a Reader's records being read, and decoded, ahead of Next.
type readAhead struct {
	free    chan *batch // batches to fill
	ordered chan *batch // batches filled, in the file's order
	quit    chan struct{}
	done    chan struct{} // closed when the reading goroutine has returned

	cur *batch // the batch Next takes frames from
	i   int    // its next frame
	end error  // the file's end, once reached

	r              *Reader
	made, maxBatch int // batches made so far, and at most
}

// startBatches is how many batches a file has before its frames are taken:
// one being decoded while the reading cuts the next.
const startBatches = 2

// batchesAhead is how many batches a file has: enough for every worker to
// decode one while the reading cuts the next and the caller takes another,
// up to maxBatchesAhead (28 MB).
func batchesAhead(workers int) int { return min(2*workers+2, maxBatchesAhead) }

const maxBatchesAhead = 64

// readAhead makes r read and decode ahead through pool from now on. The
// reading goroutine runs until the file ends or r is closed.
func (r *Reader) readAhead(pool *decodePool) {
	n := batchesAhead(pool.workers)
	a := &readAhead{free: make(chan *batch, n), ordered: make(chan *batch, n), quit: make(chan struct{}), done: make(chan struct{}),
		r: r, maxBatch: n}
	for range min(startBatches, n) {
		a.more()
	}
	r.ahead = a
	meta := r.meta()
	r.readAheadFrom = &meta
	pool.readers.Add(1)
	go func() {
		defer pool.readers.Done()
		defer close(a.done)
		a.read(r, pool)
	}()
}

// read cuts r's records into batches until the file ends, is damaged or
// the reader is closed.
func (a *readAhead) read(r *Reader, pool *decodePool) {
	free := a.free // next lets go of it once the file has ended
	for {
		var b *batch
		select {
		case b = <-free:
		case <-a.quit:
			return
		}
		b.fill(r)
		a.ordered <- b // never blocks: it has room for every batch
		if b.n == 0 {
			b.decoded <- struct{}{}
		} else {
			pool.work <- b
		}
		if b.end != nil {
			return
		}
	}
}

// fill reads the next records of r into b.
func (b *batch) fill(r *Reader) {
	b.n, b.end, b.data = 0, nil, b.data[:0]
	b.cfg = r.dec
	for b.n < batchFrames && len(b.data) < batchBytes {
		f := &b.frames[b.n]
		data, err := r.record(f)
		if err != nil {
			if _, ok := err.(*recordError); !ok {
				b.end = err // io.EOF, or the damage that ends the file
				return
			}
			b.errs[b.n] = r.recordFailed(f, err)
			b.n++
			continue
		}
		start := len(b.data)
		b.data = append(b.data, data...)
		b.spans[b.n] = recordSpan{start: start, end: len(b.data), linkType: r.dec.LinkType}
		b.errs[b.n] = nil
		b.n++
	}
}

// more makes one more batch for the reading to fill.
func (a *readAhead) more() {
	r := a.r
	a.free <- &batch{r: r, spans: make([]recordSpan, batchFrames), frames: make([]decode.Frame, batchFrames),
		errs: make([]error, batchFrames), textEnds: make([]int, batchFrames), format: r.format, decoded: make(chan struct{}, 1)}
	a.made++
}

// next returns the next frame of the file, valid until the next call, and
// its error as Reader.Next gives it.
func (a *readAhead) next() (*decode.Frame, error) {
	for {
		if b := a.cur; b != nil {
			if a.i < b.n {
				a.i++
				return &b.frames[a.i-1], b.errs[a.i-1]
			}
			a.end = b.end
			a.cur = nil
			if a.end != nil {
				a.free = nil // the reading has ended: the batches go
			} else {
				a.free <- b // never blocks: the batch came out of it
			}
		}
		if a.end != nil {
			return nil, a.end
		}
		if a.made < a.maxBatch {
			a.more() // the file is being taken: let the reading run further ahead
		}
		b := <-a.ordered
		<-b.decoded
		a.cur, a.i = b, 0
	}
}

// text is the text of the frame next returned last (StreamOptions.Format).
func (a *readAhead) text() []byte {
	b, i := a.cur, a.i-1
	start := 0
	if i > 0 {
		start = b.textEnds[i-1]
	}
	return b.text[start:b.textEnds[i]]
}

// close stops the reading goroutine and waits for it, so that the file can
// be closed under it.
func (a *readAhead) close() {
	close(a.quit)
	<-a.done
}

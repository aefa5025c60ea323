package capfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/samefile"
)

// Stdin is the path that names standard input.
const Stdin = "-"

// stdinName names standard input in messages and reports.
const stdinName = "stdin"

// openInput opens a capture by path, "-" meaning standard input (which
// Close leaves open). Its errors name the path once, as Open's do.
func openInput(path string, mapped bool) (*Reader, error) {
	if path != Stdin {
		return open(path, mapped)
	}
	return NewReader(os.Stdin, stdinName)
}

// Where locates one frame.
type Where struct {
	File   string `json:"file"`   // file name
	Frame  int    `json:"frame"`  // 1-based frame number in the file
	Offset int64  `json:"offset"` // byte offset of the frame's record, -1 when unknown
}

func (w Where) String() string {
	if w.Offset >= 0 {
		return fmt.Sprintf("%s: frame %d (byte offset %d)", w.File, w.Frame, w.Offset)
	}
	return fmt.Sprintf("%s: frame %d", w.File, w.Frame)
}

// StreamOptions configure a Stream. The zero value hands out every decoded
// frame with a timestamp.
type StreamOptions struct {
	// CheckCRC verifies ICRC, VCRC and LPCRC (a pass over each packet).
	CheckCRC bool
	// Records reads records without decoding them (Reader.NextRecord, a
	// quick pass): frames hold their number, offset, time and lengths.
	Records bool
	// Keep, if set, chooses the frames handed out; the others are read,
	// counted in Frames and left out before the merge, so that they take no
	// part in its order.
	Keep func(f *decode.Frame) bool
	// Undecoded hands out frames that could not be decoded too, with what
	// was decoded and their *DecodeError (export and correlate give them a row).
	Undecoded bool
	// Untimed hands out frames without a timestamp (pcapng simple packet
	// blocks) too, right after the frame before them in their file; without
	// it they are counted, told to OnDecodeError and skipped.
	Untimed bool
	// OnDecodeError is told of every frame that could not be decoded, and
	// of every frame without a timestamp (whose Err says so).
	OnDecodeError func(err *DecodeError)
	// OnFileError is told when a file turns out damaged (a *FileError
	// naming file, frame and byte offset); the stream stops reading that
	// file and goes on with the others.
	OnFileError func(err error)
	// Stop, once set, ends the stream as if every file ended there (an
	// interrupted command). It is looked at before every frame read,
	// those Keep leaves out and those that cannot be decoded included: a
	// long run of frames that are not handed out must not make the stream
	// deaf to it (a zstd file of non-RoCE frames ran 630 s past SIGINT).
	Stop *atomic.Bool
	// Workers, above 1, decodes the frames of regular files on that many
	// goroutines, ahead of Next (readahead.go): the frames, their order,
	// errors and counts are those of a stream decoded on the caller's
	// goroutine, which 0 or 1 keeps. A pipe is always read on the caller's,
	// as its frames come.
	Workers int
	// Format, when set, writes a frame's text (a decode line, a JSON
	// object): Text returns it for the frame Next returned last. It is
	// given the frame and the error Next returns with it. Read ahead, the
	// workers run it as they decode, in any order and at once: it must
	// keep nothing and change nothing but dst.
	Format func(dst []byte, f *decode.Frame, err error) []byte
	// Project, when set, makes a Projection for each batch of frames read
	// ahead of a file of linkType (it is called on the caller's goroutine,
	// a few times a file):
	// the workers run it on the frames as they decode them, and Projected
	// returns it for the frame Next returned last. A file read on the
	// caller's goroutine has none: the caller computes the same itself.
	Project func(linkType int) Projection
	// Heads, with Workers above 1, keeps only the head of each frame read
	// ahead: Next's frame of a file read ahead holds Number, Offset, TsNs,
	// NoTs, CapLen, WireLen, Iface, Dir, Transport, Has, ICRCOK and VCRCOK,
	// and every other field zero. What the caller needs of the rest,
	// Project and Format compute on the workers. The frames, decoded on
	// each worker into one frame of its own, then stay in its core's
	// cache; only their heads cross to the caller.
	Heads bool
	// HeadsOnly says the caller reads only the head of each frame (the
	// fields Heads lists; it sets no Keep, Format or Project that reads
	// more): a frame read on the caller's goroutine, or with Heads on a
	// worker, may then be decoded only that far (decode.Decoder.DecodeHead),
	// its other fields left as an earlier frame left them.
	HeadsOnly bool
	// HeadFields, with HeadsOnly, has a frame decoded only as far as its
	// head hold those header fields too (decode.Decoder.HeadFields: a
	// filter on them reads them, a Projection may). A frame read ahead
	// with Heads still crosses to the caller with its head alone: for a
	// caller that reads those fields of the frame, set no Heads.
	HeadFields decode.HeadFields
	// Map maps large regular files into memory instead of reading them
	// (mapping.go): the frames are decoded where the page cache holds
	// them, without the copy read(2) makes. A file another program cuts
	// short while it is read ends where it was cut, as if read; in the
	// instant between the size checked and a page touched, the goroutine
	// that reads the stream faults on the pages gone: it must run with
	// debug.SetPanicOnFault(true), and recover the panic, which Faulted
	// names, else the runtime crashes the program.
	Map bool
}

// StreamStats counts what a Stream read.
type StreamStats struct {
	Frames       int // records read from all files
	DecodeErrors int // frames that could not be decoded
	NoTime       int // frames without a timestamp (pcapng simple packets)
	FileErrors   int // files that turned out damaged (reading stopped there)
	// OutOfOrder counts frames stamped earlier than the frame before them in
	// the same file; FirstOutOfOrder is the first, MaxStepBackNs the largest step back.
	OutOfOrder      int
	FirstOutOfOrder Where
	MaxStepBackNs   int64
}

// Stream reads one or more captures as one stream of frames in timestamp
// order: each file's frames are merged by their timestamps (the pieces of a
// rotated capture may be given in any order). A file is read in its own
// order: frames stamped out of order within it come out as they are (the
// analyze package puts them back in order within a bounded window).
type Stream struct {
	files []*streamFile
	opts  StreamOptions
	stats StreamStats
	last  int // file whose frame Next handed out last, -1 before the first
	// solo is the only file, when there is one, decoded: Next then merges
	// nothing, and reads its plain pcap records itself when it is read on
	// the caller's goroutine, or takes their heads from the batches read
	// ahead (readerfast.go).
	solo *streamFile
	// waiting is the merge of several files: those with a frame to hand
	// out, but the one Next handed out from last, as a heap on (keyNs,
	// index), the order the merge takes them in. A file's keyNs changes
	// only while it is out of the heap, as Next reads it; while it stays
	// before the top, Next takes its frames without a look at the others
	// (a rotated set is read file after file, at one file's cost a frame).
	waiting []int
	// general has Next take the general path for every frame: advance,
	// and a look at every file (tests check the others against it).
	general bool
	// pool decodes the regular files read ahead, nil for none.
	pool *decodePool

	formatResNs int64 // coarsest timestamp unit the file formats declare (ERF aside)
	dataResNs   int64 // largest power of ten dividing every timestamp seen
	stamps      int   // timestamps that went into dataResNs
	totalBytes  int64
	text        []byte // Text's, when not read ahead
}

type streamFile struct {
	r   *Reader
	f   decode.Frame  // the frame read, unless read ahead
	cur *decode.Frame // the frame read: f, or in a batch read ahead
	// ahead is r.ahead: the caller reads it here, for every frame, and not
	// in the Reader, which a worker writes as it reads the file.
	ahead    *readAhead
	lazy     bool         // read ahead once its first frame is handed out (attach)
	plain    bool         // a pcap or pcapng file (not ERF) read on the caller's goroutine: nextPlain reads it
	err      *DecodeError // f could not be decoded (Undecoded)
	ok       bool         // f holds the file's next frame
	keyNs    int64        // f's place in the merge: its time, or its predecessor's when untimed
	started  bool
	lastTsNs int64
	size     int64
	doneB    int64
}

// OpenStream opens every capture ("-" for standard input) and reads up to
// its first frame. A file given twice, under one name or two, is refused.
func OpenStream(paths []string, opts StreamOptions) (*Stream, error) {
	if len(paths) == 0 {
		return nil, errors.New("no capture files given")
	}
	if err := samefile.Check(paths); err != nil {
		return nil, err
	}
	stdin := 0
	for _, p := range paths {
		if p == Stdin {
			if stdin++; stdin > 1 {
				return nil, errors.New("- (standard input) is given twice: each input is read once, give it once")
			}
		}
	}
	var readers []*Reader
	for _, p := range paths {
		r, err := openInput(p, opts.Map)
		if err != nil {
			for _, r := range readers {
				r.Close()
			}
			return nil, err // names p (Open)
		}
		readers = append(readers, r)
	}
	return NewStream(readers, opts), nil
}

// NewStream reads captures already open (pipes, memory) as one stream; the
// Stream closes them. Progress knows the size of files named by Reader.Name only.
func NewStream(readers []*Reader, opts StreamOptions) *Stream {
	s := &Stream{opts: opts, last: -1, dataResNs: 1_000_000_000, formatResNs: 1}
	for _, r := range readers {
		r.SetCheckCRC(opts.CheckCRC)
		r.dec.HeadFields = opts.HeadFields
		r.SetStop(opts.Stop)
		sf := &streamFile{r: r}
		if fi, err := os.Stat(r.Name()); err == nil && fi.Mode().IsRegular() {
			sf.size = fi.Size()
			s.totalBytes += sf.size
		}
		s.files = append(s.files, sf)
		if r.LinkType() != decode.LinkTypeERF {
			// ERF records carry their own 32.32 timestamps whatever
			// unit the pcap header declares.
			s.formatResNs = max(s.formatResNs, r.ResolutionNs())
		}
	}
	s.readAhead(opts.Workers)
	for _, f := range s.files {
		f.plain = f.ahead == nil && !f.r.isERF && !opts.Records
	}
	if len(s.files) == 1 && !opts.Records {
		s.solo = s.files[0]
	}
	for i := range s.files {
		s.advance(i)
		s.wait(i)
	}
	return s
}

// readAhead has the regular files decoded on workers goroutines, if more
// than one: a file alone from its start, a file of several once its first
// frame has been handed out (attach).
func (s *Stream) readAhead(workers int) {
	if workers <= 1 || s.opts.Records {
		return
	}
	for _, f := range s.files {
		if !f.r.regular {
			continue
		}
		if s.pool == nil {
			s.pool = newDecodePool(workers, len(s.files))
		}
		s.pool.live++ // until the file ends or is closed, read ahead or not yet
		f.r.format = s.opts.Format
		if len(s.files) > 1 {
			f.lazy = true
			continue
		}
		f.ahead = f.r.readAhead(s.pool, s.opts.Project, s.opts.Heads, s.opts.HeadsOnly, true)
		if f.size > readBufLen { // a second read buffer
			f.r.prefetchFile()
		}
	}
	if s.pool != nil {
		s.pool.start()
	}
}

// attach has file sf, one of several, read ahead from now on, its first
// frame handed out: read on the caller's goroutine until then, a file
// waiting its turn in the merge holds that frame and its read buffer's
// start, and no batch (each held one, up to 300 KB a piece, and the caller
// cut and decoded it as the stream opened). A compressed file over the read
// buffer is decompressed on a goroutine of its own once it is read on
// (fileCut.prefetchLater).
func (s *Stream) attach(sf *streamFile) {
	sf.lazy, sf.plain = false, false
	sf.ahead = sf.r.readAhead(s.pool, s.opts.Project, s.opts.Heads, s.opts.HeadsOnly, false)
	if sf.size > readBufLen && sf.r.decompressor != nil {
		sf.ahead.file.prefetchLater = true
	}
}

// Close closes every file.
func (s *Stream) Close() error {
	var first error
	for _, f := range s.files {
		s.unattached(f)
		if err := f.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SetStop sets StreamOptions.Stop after the stream is opened (analyze.Run
// takes the flag with the stream already open).
func (s *Stream) SetStop(stop *atomic.Bool) {
	s.opts.Stop = stop
	for _, f := range s.files {
		f.r.SetStop(stop)
	}
}

// Stats returns the counts so far.
func (s *Stream) Stats() StreamStats { return s.stats }

// Names returns the file names, indexed by the file index Next returns.
func (s *Stream) Names() []string {
	out := make([]string, len(s.files))
	for i, f := range s.files {
		out[i] = f.r.Name()
	}
	return out
}

// LinkType returns the link type of file i (read ahead, the one it said
// before its first frame, as SnapLen).
func (s *Stream) LinkType(i int) int {
	if a := s.files[i].ahead; a != nil {
		return a.linkType
	}
	return s.files[i].r.LinkType()
}

// SnapLen returns the snap length file i declares, 0 for none.
func (s *Stream) SnapLen(i int) int { return s.files[i].r.SnapLen() }

// CaptureHost returns the host file i names as its capturer, "" for none.
func (s *Stream) CaptureHost(i int) string { return s.files[i].r.CaptureHost() }

// Progress returns bytes read so far and the files' total size.
func (s *Stream) Progress() (doneBytes, totalBytes int64) {
	for _, f := range s.files {
		doneBytes += f.doneB
	}
	return doneBytes, s.totalBytes
}

// minStampsForResolution is how many timestamps it takes before the data,
// rather than the file format, is trusted to show the clock's resolution.
const minStampsForResolution = 16

// ResolutionNs returns the timestamp resolution in ns: the largest power of
// ten that divides every timestamp read so far (a clock that stamps whole
// microseconds into a nanosecond file shows as 1000), or, until enough
// timestamps have been read, the unit the file format declares.
func (s *Stream) ResolutionNs() int64 {
	if s.stamps < minStampsForResolution {
		return s.formatResNs
	}
	return s.dataResNs
}

// Next returns the earliest waiting frame and the index of its file, and
// io.EOF after the last. The frame stays valid until the next call. With
// Undecoded, a frame that could not be decoded comes with its *DecodeError
// (the stream goes on); no other error is returned.
func (s *Stream) Next() (*decode.Frame, int, error) {
	if sf := s.solo; sf != nil && !s.general { // one file: nothing to merge
		if s.last == 0 && !s.nextPlain(sf) && !s.nextAhead(sf) {
			s.advance(0)
		}
		if !sf.ok {
			s.last = -1
			return nil, -1, io.EOF
		}
		s.last = 0
		if sf.err != nil {
			return sf.cur, 0, sf.err
		}
		return sf.cur, 0, nil
	}
	best := -1
	if s.last >= 0 && s.files[s.last].lazy {
		s.attach(s.files[s.last])
	}
	if s.general {
		if s.last >= 0 {
			s.advance(s.last)
		}
		for i, f := range s.files {
			if f.ok && (best < 0 || f.keyNs < s.files[best].keyNs) {
				best = i
			}
		}
	} else {
		if s.last >= 0 {
			if sf := s.files[s.last]; !s.nextPlain(sf) && !s.nextAhead(sf) {
				s.advance(s.last)
			}
		}
		best = s.take(s.last)
	}
	s.last = best
	if best < 0 {
		return nil, -1, io.EOF
	}
	sf := s.files[best]
	if sf.err != nil {
		return sf.cur, best, sf.err
	}
	return sf.cur, best, nil
}

// before reports whether file i comes before file j in the merge: stamped
// earlier, or at the same time and given first.
func (s *Stream) before(i, j int) bool {
	a, b := s.files[i].keyNs, s.files[j].keyNs
	return a < b || a == b && i < j
}

// take returns the file the merge takes its next frame from, -1 when none
// has one: last, the file Next read on from, while it still comes before
// every file waiting, else the first of them, last waiting in its place.
func (s *Stream) take(last int) int {
	if last >= 0 && s.files[last].ok {
		if len(s.waiting) == 0 || s.before(last, s.waiting[0]) {
			return last
		}
		top := s.waiting[0]
		s.waiting[0] = last
		s.siftDown(0)
		return top
	}
	n := len(s.waiting)
	if n == 0 {
		return -1
	}
	top := s.waiting[0]
	s.waiting[0] = s.waiting[n-1]
	s.waiting = s.waiting[:n-1]
	s.siftDown(0)
	return top
}

// wait puts file i, if it has a frame to hand out, in the merge's heap.
func (s *Stream) wait(i int) {
	if !s.files[i].ok {
		return
	}
	s.waiting = append(s.waiting, i)
	for k := len(s.waiting) - 1; k > 0; {
		up := (k - 1) / 2
		if !s.before(s.waiting[k], s.waiting[up]) {
			break
		}
		s.waiting[k], s.waiting[up] = s.waiting[up], s.waiting[k]
		k = up
	}
}

// siftDown moves the heap's entry at k down to its place.
func (s *Stream) siftDown(k int) {
	h := s.waiting
	for {
		c := 2*k + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && s.before(h[c+1], h[c]) {
			c++
		}
		if !s.before(h[c], h[k]) {
			return
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
}

// Text returns StreamOptions.Format's text of the frame Next returned last,
// valid until the next call of Next.
func (s *Stream) Text() []byte {
	sf := s.files[s.last]
	if sf.ahead != nil {
		return sf.ahead.text()
	}
	var err error
	if sf.err != nil {
		err = sf.err
	}
	s.text = s.opts.Format(s.text[:0], sf.cur, err)
	return s.text
}

// Projected returns StreamOptions.Project's Projection holding the frame
// Next returned last, and the frame's index in it; nil when the frame was
// not read ahead.
func (s *Stream) Projected() (Projection, int) {
	if a := s.files[s.last].ahead; a != nil {
		return a.projected()
	}
	return nil, 0
}

// advance reads file i up to its next frame to hand out.
func (s *Stream) advance(i int) {
	sf := s.files[i]
	sf.ok, sf.err = false, nil
	for {
		if s.opts.Stop != nil && s.opts.Stop.Load() {
			return // as at the end of the file: nothing more is read
		}
		f, err := s.read(sf)
		sf.cur = f
		if err != nil {
			if !s.frameFailed(sf, err) {
				return
			}
			if !s.opts.Undecoded {
				sf.err = nil // told and counted; the next frame is not it
				continue
			}
		} else {
			s.stats.Frames++
		}
		if f.Offset > 0 {
			sf.doneB = min(f.Offset, sf.size) // offsets of a compressed file count decompressed bytes
		}
		switch {
		case f.NoTs:
			if !s.untimed(sf, f) {
				continue
			}
			sf.keyNs = sf.lastTsNs
		case sf.err == nil:
			s.stamp(sf, f)
			sf.keyNs = f.TsNs
		default:
			sf.keyNs = f.TsNs
		}
		if sf.err == nil && s.opts.Keep != nil && !s.opts.Keep(f) {
			continue
		}
		sf.ok = true
		return
	}
}

// read reads the next frame of sf, decoded unless Records.
func (s *Stream) read(sf *streamFile) (*decode.Frame, error) {
	if s.opts.Records {
		_, err := sf.r.NextRecord(&sf.f)
		return &sf.f, err
	}
	if sf.ahead != nil {
		return sf.ahead.next()
	}
	return &sf.f, sf.r.Next(&sf.f)
}

// frameFailed handles a read error: a frame that could not be decoded is
// counted, told and kept in sf.err (true: it is a frame); the end of the
// file or damage to it ends that file (false). Kept out of advance so that
// the error value does not cost an allocation per frame.
func (s *Stream) frameFailed(sf *streamFile, err error) bool {
	if err == io.EOF {
		sf.doneB = sf.size
		s.letGo(sf)
		return false
	}
	var de *DecodeError
	if errors.As(err, &de) {
		s.stats.Frames++
		s.stats.DecodeErrors++
		if s.opts.OnDecodeError != nil {
			s.opts.OnDecodeError(de)
		}
		sf.err = de
		return true
	}
	s.stats.FileErrors++
	sf.doneB = sf.size
	s.letGo(sf)
	if s.opts.OnFileError != nil {
		s.opts.OnFileError(err)
	}
	return false
}

// letGo lets go of what the file sf held for reading, now it has ended:
// its last frame's slices held its read buffer too.
func (s *Stream) letGo(sf *streamFile) {
	s.unattached(sf)
	sf.r.letGo()
	sf.f = decode.Frame{}
}

// unattached tells the pool that file sf, to be read ahead once its first
// frame was handed out, never will be (it ended, or the stream is closed):
// the workers end once every file has.
func (s *Stream) unattached(sf *streamFile) {
	if sf.lazy {
		sf.lazy = false
		s.pool.ended()
	}
}

// untimed counts a frame without a timestamp and tells OnDecodeError;
// it reports whether the frame is handed out.
func (s *Stream) untimed(sf *streamFile, f *decode.Frame) bool {
	s.stats.NoTime++
	if s.opts.OnDecodeError != nil {
		s.opts.OnDecodeError(NoTimeError(sf.r.Name(), f))
	}
	return s.opts.Untimed
}

// stamp follows the timestamps of one file: resolution and disorder.
func (s *Stream) stamp(sf *streamFile, f *decode.Frame) {
	ts := f.TsNs
	for s.dataResNs > 1 && ts%s.dataResNs != 0 {
		s.dataResNs /= 10
	}
	s.stamps++
	if sf.started && ts < sf.lastTsNs {
		if s.stats.OutOfOrder == 0 {
			s.stats.FirstOutOfOrder = Where{File: sf.r.Name(), Frame: f.Number, Offset: f.Offset}
		}
		s.stats.OutOfOrder++
		s.stats.MaxStepBackNs = max(s.stats.MaxStepBackNs, sf.lastTsNs-ts)
	}
	sf.started, sf.lastTsNs = true, ts
}

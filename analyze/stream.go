package analyze

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/samefile"
)

// DefaultWindowPackets is the reorder window when StreamOptions leaves it 0:
// packets stamped up to this many packets out of order are put back in order.
const DefaultWindowPackets = 4096

// MaxWindowPackets bounds the reorder window: the stream holds a ring of
// the next power of two packets, 144 bytes each (151 MB at this bound).
const MaxWindowPackets = 1_000_000

// StreamOptions configure a Stream. The zero value is usable.
type StreamOptions struct {
	// WindowPackets bounds the reorder window, in packets (DefaultWindowPackets if 0).
	WindowPackets int
	// CheckCRC verifies ICRC and VCRC (needed for CRC failure counts; costs a pass over each packet).
	CheckCRC bool
	// OnDecodeError is told of every frame that could not be decoded, and
	// of every frame without a timestamp (a pcapng simple packet block,
	// whose Err says so); the stream skips the frame and goes on.
	OnDecodeError func(err *decode.DecodeError)
	// OnFileError is told when a file turns out damaged; the stream stops
	// reading that file and goes on with the others.
	OnFileError func(err error)
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

// StreamStats counts what a Stream read and what it did about disorder.
type StreamStats struct {
	Frames       int // records read from all files
	Packets      int // IB/RoCE transport packets (with a BTH) handed out
	NotIB        int // frames that are neither IB nor RoCE, skipped
	LinkPackets  int // IB link-level flow-control packets, skipped
	DecodeErrors int // frames that could not be decoded, skipped
	NoTime       int // frames without a timestamp (pcapng simple packets), skipped
	FileErrors   int // files that turned out damaged (reading stopped there)
	// OutOfOrder counts frames stamped earlier than the frame before them in
	// the same file; FirstOutOfOrder is the first, MaxStepBackNs the largest step back.
	OutOfOrder      int
	FirstOutOfOrder Where
	MaxStepBackNs   int64
	// Late counts packets that arrived more than the reorder window out of
	// order; they are handed out with Packet.Late set. FirstLate is the first.
	Late      int
	FirstLate Where
}

// Stream reads one or more capture files as one stream of packets in
// timestamp order: files are merged by their next timestamp (pieces of a
// rotated capture may be given in any order) and packets stamped out of
// order within a file are sorted back within a bounded window.
type Stream struct {
	files  []*streamFile
	window int
	ring   []Packet // sorted by TsNs from head, a circular buffer of power-of-two size
	head   int
	n      int
	opts   StreamOptions
	stats  StreamStats

	outStarted bool
	lastOutNs  int64

	formatResNs int64 // coarsest timestamp unit the file formats declare (ERF aside)
	dataResNs   int64 // largest power of ten dividing every timestamp seen
	stamps      int   // timestamps that went into dataResNs
	totalBytes  int64
}

type streamFile struct {
	name     string
	r        *decode.Reader
	f        decode.Frame
	head     Packet
	ok       bool // head holds the file's next packet
	started  bool
	lastTsNs int64
	size     int64
	doneB    int64
}

// OpenStream opens every file and reads up to its first packet.
func OpenStream(paths []string, opts StreamOptions) (*Stream, error) {
	if len(paths) == 0 {
		return nil, errors.New("no capture files given")
	}
	if err := samefile.Check(paths); err != nil {
		return nil, err
	}
	if opts.WindowPackets < 0 || opts.WindowPackets > MaxWindowPackets {
		return nil, fmt.Errorf("reorder window of %d packets: want 1 to %d packets (0 for the default %d)", opts.WindowPackets, MaxWindowPackets, DefaultWindowPackets)
	}
	var readers []*decode.Reader
	for _, p := range paths {
		r, err := decode.Open(p)
		if err != nil {
			for _, r := range readers {
				r.Close()
			}
			return nil, err // names p (decode.Open)
		}
		readers = append(readers, r)
	}
	return NewStream(readers, opts), nil
}

// NewStream reads captures already open (pipes, standard input, memory)
// as one stream; the Stream closes them. Progress knows the size of files
// named by Reader.Name only.
func NewStream(readers []*decode.Reader, opts StreamOptions) *Stream {
	w := opts.WindowPackets
	if w <= 0 {
		w = DefaultWindowPackets
	}
	w = min(w, MaxWindowPackets) // OpenStream refuses more; here there is no error to return
	size := 1
	for size < w+1 {
		size *= 2
	}
	s := &Stream{window: w, ring: make([]Packet, size), opts: opts, dataResNs: 1_000_000_000, formatResNs: 1}
	for i, r := range readers {
		r.SetCheckCRC(opts.CheckCRC)
		sf := &streamFile{name: r.Name(), r: r}
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
		s.advance(i)
	}
	return s
}

// Close closes every file.
func (s *Stream) Close() error {
	var first error
	for _, f := range s.files {
		if err := f.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stats returns the counts so far.
func (s *Stream) Stats() StreamStats { return s.stats }

// Names returns the file names, indexed by Packet.File.
func (s *Stream) Names() []string {
	out := make([]string, len(s.files))
	for i, f := range s.files {
		out[i] = f.name
	}
	return out
}

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

// Next hands out the next packet in timestamp order, io.EOF after the last.
func (s *Stream) Next(p *Packet) error {
	for s.n < s.window {
		i := s.nextFile()
		if i < 0 {
			break
		}
		s.push(&s.files[i].head)
		s.advance(i)
	}
	if s.n == 0 {
		return io.EOF
	}
	*p = s.ring[s.head]
	s.head = (s.head + 1) & (len(s.ring) - 1)
	s.n--
	if p.Late {
		if s.stats.Late == 0 {
			s.stats.FirstLate = s.where(p)
		}
		s.stats.Late++
	} else {
		s.outStarted, s.lastOutNs = true, p.TsNs
	}
	s.stats.Packets++
	return nil
}

func (s *Stream) where(p *Packet) Where {
	return Where{File: s.files[p.File].name, Frame: p.Frame, Offset: p.Offset}
}

// nextFile returns the file whose next packet is earliest, -1 when all are done.
func (s *Stream) nextFile() int {
	best := -1
	for i, f := range s.files {
		if f.ok && (best < 0 || f.head.TsNs < s.files[best].head.TsNs) {
			best = i
		}
	}
	return best
}

// push inserts p into the ring, keeping it sorted (stable for equal times):
// in-order packets cost nothing beyond the copy. A packet stamped before
// one already handed out cannot be put in order any more: it is marked Late
// and keeps its place in the file's order, so that sequence analyses (PSN
// gaps, duplicates) see it where it was captured rather than ahead of the
// window of packets read before it. A later packet moves past a Late one
// only when it must go before an in-order packet read before that one.
func (s *Stream) push(p *Packet) {
	mask := len(s.ring) - 1
	i := (s.head + s.n) & mask
	s.ring[i] = *p
	s.n++
	if s.outStarted && p.TsNs < s.lastOutNs {
		s.ring[i].Late = true
		return
	}
	for k := s.n - 1; k > 0; k-- {
		prev := (i - 1) & mask
		if s.ring[prev].Late {
			if !s.belongsBefore(i, k) {
				break
			}
		} else if s.ring[prev].TsNs <= s.ring[i].TsNs {
			break
		}
		s.ring[prev], s.ring[i] = s.ring[i], s.ring[prev]
		i = prev
	}
}

// belongsBefore reports whether the packet at ring index i, with k packets
// before it in the ring, is stamped before the nearest in-order packet that
// precedes it (looking past Late ones).
func (s *Stream) belongsBefore(i, k int) bool {
	mask := len(s.ring) - 1
	for j := (i - 1) & mask; k > 0; j, k = (j-1)&mask, k-1 {
		if !s.ring[j].Late {
			return s.ring[j].TsNs > s.ring[i].TsNs
		}
	}
	return false
}

// advance reads file i up to its next IB/RoCE transport packet.
func (s *Stream) advance(i int) {
	sf := s.files[i]
	sf.ok = false
	for {
		if err := sf.r.Next(&sf.f); err != nil {
			if s.frameFailed(sf, err) {
				continue
			}
			return
		}
		f := &sf.f
		s.stats.Frames++
		if f.Offset > 0 {
			sf.doneB = min(f.Offset, sf.size) // offsets of a compressed file count decompressed bytes
		}
		if f.NoTs {
			s.untimed(sf, f)
			continue
		}
		s.stamp(sf, f)
		switch {
		case f.Transport == decode.TransportNone:
			s.stats.NotIB++
			continue
		case f.Has&decode.HasBTH == 0:
			s.stats.LinkPackets++
			continue
		}
		sf.head.fill(f, i)
		sf.ok = true
		return
	}
}

// frameFailed handles a read error: a frame that could not be decoded is
// counted and skipped (true: read on); the end of the file or damage to it
// ends that file (false). Kept out of advance so that the error value does
// not cost an allocation per frame.
func (s *Stream) frameFailed(sf *streamFile, err error) bool {
	if err == io.EOF {
		sf.doneB = sf.size
		return false
	}
	var de *decode.DecodeError
	if errors.As(err, &de) {
		s.stats.Frames++
		s.stats.DecodeErrors++
		if s.opts.OnDecodeError != nil {
			s.opts.OnDecodeError(de)
		}
		return true
	}
	s.stats.FileErrors++
	sf.doneB = sf.size
	if s.opts.OnFileError != nil {
		s.opts.OnFileError(err)
	}
	return false
}

// untimed counts a frame without a timestamp, which no analysis here can
// place in time, and tells OnDecodeError.
func (s *Stream) untimed(sf *streamFile, f *decode.Frame) {
	s.stats.NoTime++
	if s.opts.OnDecodeError != nil {
		s.opts.OnDecodeError(decode.NoTimeError(sf.name, f))
	}
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
			s.stats.FirstOutOfOrder = Where{File: sf.name, Frame: f.Number, Offset: f.Offset}
		}
		s.stats.OutOfOrder++
		s.stats.MaxStepBackNs = max(s.stats.MaxStepBackNs, sf.lastTsNs-ts)
	}
	sf.started, sf.lastTsNs = true, ts
}

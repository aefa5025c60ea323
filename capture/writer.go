package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/outfile"
)

// WriterConfig says where and how to write packets.
type WriterConfig struct {
	// Path is the file to write; "-" writes to Stdout.
	Path string
	// Format is the file format; FormatAuto picks by the file's extension
	// (Format.ForFile), then by link type.
	Format Format
	// LinkType is the link type of the packets the source gives
	// (Source.LinkType()).
	LinkType int
	// SnapLenBytes is the snap length the file header declares, in bytes.
	SnapLenBytes int
	// RotateBytes starts a new file once the current one holds at least
	// this many bytes (-C, given in MB); 0 never rotates on size.
	RotateBytes int64
	// RotateEveryNs starts a new file when a packet's timestamp is this
	// many ns past the current file's first packet (-G); 0 never rotates on time.
	RotateEveryNs int64
	// MaxFiles keeps at most this many rotated files, reusing names in a
	// ring (-W); 0 means no limit.
	MaxFiles int
	// Stdout receives the capture when Path is "-"; nil means os.Stdout.
	Stdout io.Writer
	// Micro writes timestamps in us instead of ns (--time-stamp-precision).
	Micro bool
	// SectionOptions and InterfaceOptions describe the capture in a pcapng
	// file's section header and interface description (shb_userappl,
	// if_name, if_filter ...).
	SectionOptions, InterfaceOptions []capfile.NgOption
	// Counts, when set, gives the source's counts for the Interface
	// Statistics Block that ends each pcapng file (at rotation and at
	// Close); the writer fills in the times and Delivered.
	Counts func() capfile.InterfaceStats
	// FileDone, when set, is called with the name of each file rotation
	// (-C, -G) closes, once it is complete on disk (tcpdump -z runs its
	// command on it); not for the last file, which Close closes. It is
	// called by the writer's own goroutine.
	FileDone func(name string)
}

// A writer gathers records in chunks of chunkBytes and writes each with one
// write(2), so a capture killed between writes leaves files that end on
// whole records. The writes, and the opening and closing of rotated files,
// happen on a goroutine of the writer's own (the flusher), writerChunks
// chunks at most in memory: the file system's cost (on tmpfs, allocating,
// zeroing and copying pages, and freeing those of a file a -W ring reuses)
// then runs beside the receive loop instead of in it, and a slow write or
// rotation stalls the loop only once every chunk is waiting. 16 MB absorb
// the truncation of a 64 MB tmpfs file that a -W ring reuses (about 7 ms,
// 10 MB of 128-byte packets at 10 M packets/s); the chunk given back last
// is reused first, so in a steady state only a few are touched.
const (
	chunkBytes   = 1 << 20
	writerChunks = 16
)

// Writer writes packets to a capture file, or a rotating set of files, in
// whole records. Write and the other methods are called from one goroutine;
// Flush is what makes written packets durable, and Run calls it at least
// once a second.
type Writer struct {
	cfg       WriterConfig
	enc       *capfile.Encoder
	cur       *chunk   // the chunk Write appends to
	spare     []*chunk // chunks back from the flusher, the latest last
	name      string   // the file Write appends to
	fileBytes int64    // bytes of the current file, queued and buffered ones included
	fileIndex int      // index of the current rotated file
	firstTsNs int64    // timestamp of the current file's first packet, 0 before it
	packets   uint64
	startNs   int64 // when the writer was made, ns since the epoch: the statistics' start
	err       error // sticky: the flusher's error once seen, or "closed"
	closed    bool

	full    chan *chunk // to the flusher, in file order; nil asks for a sync
	free    chan *chunk // back from the flusher, written
	synced  chan struct{}
	exited  chan struct{}
	flusher flusher

	inFile      atomic.Uint64 // packets that reached the files, all files together
	inFileBytes atomic.Uint64 // their captured bytes
	mu          sync.Mutex    // guards files and failure
	files       []string
	failure     error // the flusher's write or open error, set once

	lock *fileLock // held from the first file's creation to Close
}

// chunk is a buffer of whole records on its way to a file, and what the
// flusher needs to account for them.
type chunk struct {
	buf []byte
	// pending are the records in buf, in order; after a short write they
	// say how many of them reached the file whole.
	pending      []pendingRecord
	pendingBytes uint64 // captured bytes of the packets in pending
	open         string // when set, close the current file and open this one before writing buf
}

// pendingRecord is one buffered record: where it ends in the buffer and
// how many captured bytes of its packet it holds.
type pendingRecord struct {
	end       int
	dataBytes uint32
}

// flusher is the state of the goroutine that writes chunks out.
type flusher struct {
	out         io.Writer
	file        *os.File // nil for stdout
	name        string
	committed   int64  // bytes of the current file known to be on disk, all whole records
	fileRecords uint64 // packets in the current file
	failed      bool   // after a write or open error, chunks are dropped unwritten
}

// NewWriter opens the first file and writes its header.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if cfg.SnapLenBytes <= 0 {
		cfg.SnapLenBytes = DefaultSnapLenBytes
	}
	if cfg.Path == "" {
		return nil, errors.New("writer: no output file given")
	}
	rotating := cfg.RotateBytes > 0 || cfg.RotateEveryNs > 0
	if cfg.Path == "-" && rotating {
		return nil, errors.New("writer: cannot rotate files when writing to stdout")
	}
	if cfg.MaxFiles > 0 && !rotating {
		return nil, errors.New("writer: -W (file count) needs -C (size) or -G (seconds) rotation")
	}
	cfg.Format = cfg.Format.ForFile(cfg.Path)
	enc, err := newEncoder(cfg)
	if err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg, enc: enc, startNs: time.Now().UnixNano(), full: make(chan *chunk, writerChunks+1), free: make(chan *chunk, writerChunks),
		synced: make(chan struct{}), exited: make(chan struct{})}
	w.name = w.fileName()
	// Locked before the first file is created or truncated: a file
	// another capture writes is left alone.
	if w.lock, err = lockOutput(cfg.Path); err != nil {
		return nil, err
	}
	// The first file is opened here, so that NewWriter reports why it
	// cannot be; the flusher opens the rotated ones.
	if err := w.flusher.open(w.name, w.cfg.Stdout); err != nil {
		w.lock.unlock()
		return nil, err
	}
	w.name = w.flusher.name
	w.files = append(w.files, w.name)
	w.cur = &chunk{buf: make([]byte, 0, max(chunkBytes, 2*enc.MaxRecordBytes())), pending: make([]pendingRecord, 0, chunkBytes/128)}
	w.spare = make([]*chunk, 0, writerChunks)
	for range writerChunks - 1 {
		w.free <- &chunk{buf: make([]byte, 0, cap(w.cur.buf)), pending: make([]pendingRecord, 0, chunkBytes/128)}
	}
	go w.flushLoop()
	w.startFile()
	// The header goes out at once, so even an empty capture is a valid file.
	if err := w.Flush(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// LinkType returns the link type the files declare.
func (w *Writer) LinkType() int { return w.enc.LinkType() }

// Files returns the names of the files opened so far, in order.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// Written returns how many packets, and how many captured bytes of them,
// reached the files (or stdout): those written out, not those still
// buffered or lost to a write error. After Flush it counts every packet
// written before.
func (w *Writer) Written() (packets, bytes uint64) { return w.inFile.Load(), w.inFileBytes.Load() }

// failed reports whether a write error stopped the writer.
func (w *Writer) failed() bool { return w.flushErr() != nil && !w.closed }

// flushErr is the flusher's error, nil while every write succeeded.
func (w *Writer) flushErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failure
}

// RotatedName is the name of rotated file number index: the number goes
// before the extension, so "out.pcap" becomes "out-00003.pcap" and the
// files still open by extension.
func RotatedName(path string, index int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%05d%s", strings.TrimSuffix(path, ext), index, ext)
}

// fileName is the name of the current file.
func (w *Writer) fileName() string {
	if w.cfg.Path == "-" {
		return "-"
	}
	if w.cfg.RotateBytes > 0 || w.cfg.RotateEveryNs > 0 {
		return RotatedName(w.cfg.Path, w.fileIndex)
	}
	return w.cfg.Path
}

// startFile begins a file in the current chunk: its header.
func (w *Writer) startFile() {
	w.firstTsNs = 0
	n := len(w.cur.buf)
	w.cur.buf = w.enc.AppendHeader(w.cur.buf)
	w.fileBytes = int64(len(w.cur.buf) - n)
}

// Write appends one packet. A write error closes the file, cut back to its
// last whole record, and is returned for this or a later call and for
// every call after it; the packets appended meanwhile are not written.
func (w *Writer) Write(p *capfile.Packet) error {
	if w.err != nil {
		return w.err
	}
	if w.shouldRotate(p) {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	if w.firstTsNs == 0 {
		w.firstTsNs = p.TsNs
	}
	c := w.cur
	n := len(c.buf)
	var err error
	if c.buf, err = w.enc.AppendPacket(c.buf, p); err != nil {
		c.buf = c.buf[:n]
		return fmt.Errorf("%s: packet %d: %w", w.name, w.packets+1, err)
	}
	w.fileBytes += int64(len(c.buf) - n)
	c.pending = append(c.pending, pendingRecord{end: len(c.buf), dataBytes: uint32(len(p.Data))})
	c.pendingBytes += uint64(len(p.Data))
	w.packets++
	if len(c.buf) > cap(c.buf)-w.enc.MaxRecordBytes() {
		return w.submit()
	}
	return nil
}

func (w *Writer) shouldRotate(p *capfile.Packet) bool {
	if w.cfg.RotateBytes > 0 && w.fileBytes >= w.cfg.RotateBytes {
		return true
	}
	return w.cfg.RotateEveryNs > 0 && w.firstTsNs != 0 && p.TsNs-w.firstTsNs >= w.cfg.RotateEveryNs
}

// endFile ends the current file with the capture's statistics so far, in
// a pcapng file (a block no other format has).
func (w *Writer) endFile() {
	if w.cfg.Counts == nil {
		return
	}
	s := w.cfg.Counts()
	s.StartNs, s.EndNs, s.Delivered = w.startNs, time.Now().UnixNano(), w.packets
	n := len(w.cur.buf)
	w.cur.buf = w.enc.AppendStatistics(w.cur.buf, s)
	w.fileBytes += int64(len(w.cur.buf) - n)
}

// rotate ends the current file and starts the next one in a new chunk,
// which tells the flusher to open it.
func (w *Writer) rotate() error {
	w.endFile()
	if err := w.submit(); err != nil {
		return err
	}
	w.fileIndex++
	if w.cfg.MaxFiles > 0 {
		w.fileIndex %= w.cfg.MaxFiles
	}
	w.name = w.fileName()
	w.cur.open = w.name
	w.startFile()
	return nil
}

// submit hands the current chunk, if it holds anything, to the flusher and
// takes a free one, waiting only when every chunk is queued. It returns the
// flusher's error, if it met one.
func (w *Writer) submit() error {
	if err := w.flushErr(); err != nil {
		w.err = err
		return err
	}
	if len(w.cur.buf) == 0 && w.cur.open == "" {
		return nil
	}
	w.full <- w.cur
	// The chunk given back last is the one still in the caches: the
	// others are there for a flusher that falls behind for a while.
	for {
		select {
		case c := <-w.free:
			w.spare = append(w.spare, c)
			continue
		default:
		}
		break
	}
	if len(w.spare) == 0 {
		w.spare = append(w.spare, <-w.free)
	}
	w.cur = w.spare[len(w.spare)-1]
	w.spare = w.spare[:len(w.spare)-1]
	return nil
}

// Flush writes the buffered records out and waits until they are written.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.submit(); err != nil {
		return err
	}
	w.full <- nil
	<-w.synced
	if err := w.flushErr(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// flushAsync hands the buffered records to the flusher without waiting
// for the write; a write error shows at a later call.
func (w *Writer) flushAsync() error {
	if w.err != nil {
		return w.err
	}
	return w.submit()
}

// flushLoop is the flusher: it writes the chunks in the order they come
// and gives them back, until full is closed.
func (w *Writer) flushLoop() {
	defer close(w.exited)
	f := &w.flusher
	for c := range w.full {
		if c == nil {
			w.synced <- struct{}{}
			continue
		}
		if !f.failed {
			if err := w.writeChunk(c); err != nil {
				f.failed = true
				w.mu.Lock()
				w.failure = err
				w.mu.Unlock()
			}
		}
		c.buf, c.pending, c.pendingBytes, c.open = c.buf[:0], c.pending[:0], 0, ""
		w.free <- c
	}
}

// writeChunk opens the chunk's file if it starts one, then writes it.
func (w *Writer) writeChunk(c *chunk) error {
	f := &w.flusher
	if c.open != "" {
		done := f.name
		if err := f.close(); err != nil {
			return err
		}
		if w.cfg.FileDone != nil {
			w.cfg.FileDone(done)
		}
		if err := f.open(c.open, nil); err != nil {
			return err
		}
		w.mu.Lock()
		w.files = append(w.files, f.name)
		w.mu.Unlock()
	}
	if len(c.buf) == 0 {
		return nil
	}
	n, err := f.out.Write(c.buf)
	if err != nil {
		return w.fail(c, n, err)
	}
	f.committed += int64(n)
	w.commit(len(c.pending), c.pendingBytes)
	return nil
}

// open creates (or truncates) the file name, or takes stdout for "-".
func (f *flusher) open(name string, stdout io.Writer) error {
	f.name, f.committed, f.fileRecords = name, 0, 0
	if name == "-" {
		f.name, f.out = "stdout", stdout
		if f.out == nil {
			f.out = os.Stdout
		}
		return nil
	}
	// Written as packets arrive, not renamed into place, so that a
	// killed capture still reads: outfile.OpenStream creates or
	// truncates a regular file without following a symbolic link,
	// writes a device or FIFO through, and refuses the rest.
	file, err := outfile.OpenStream(name)
	if err != nil {
		return fmt.Errorf("open capture file: %w", err)
	}
	f.file, f.out = file, file
	return nil
}

// close closes the current file, if it is one.
func (f *flusher) close() error {
	if f.file == nil {
		return nil
	}
	err := f.file.Close()
	f.file = nil
	if err != nil {
		return fmt.Errorf("close %s: %w", f.name, err)
	}
	return nil
}

// commit counts records packets, holding dataBytes captured bytes, as in
// the file.
func (w *Writer) commit(records int, dataBytes uint64) {
	w.inFile.Add(uint64(records))
	w.inFileBytes.Add(dataBytes)
	w.flusher.fileRecords += uint64(records)
}

// fail handles a write of chunk c that wrote only n bytes: the records
// that reached the file whole stay, the file is cut back to the last of
// them and closed, and the error says how much it holds.
func (w *Writer) fail(c *chunk, n int, err error) error {
	f := &w.flusher
	// The os.File error names the file again; the message below does once.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	kept, keptBytes, end := 0, c.pendingBytes, 0
	for kept < len(c.pending) && c.pending[kept].end <= n {
		end = c.pending[kept].end
		kept++
	}
	for _, r := range c.pending[kept:] {
		keptBytes -= uint64(r.dataBytes)
	}
	f.committed += int64(end)
	w.commit(kept, keptBytes)
	where := ""
	if f.file != nil {
		if n > end {
			if terr := f.file.Truncate(f.committed); terr != nil {
				where = fmt.Sprintf("; cutting back the partial record failed: %v", terr)
			}
		}
		f.file.Close()
		f.file = nil
	}
	return fmt.Errorf("write %s: %w (file closed, valid up to its last whole record: %d packets, %d bytes%s)",
		f.name, err, f.fileRecords, f.committed, where)
}

// Close flushes and closes the current file and stops the flusher. It
// returns the first write error the writer met, if any.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	if w.err == nil {
		w.endFile()
	}
	err := w.Flush()
	w.closed = true
	close(w.full)
	<-w.exited
	if cerr := w.flusher.close(); err == nil {
		err = cerr
	}
	w.lock.unlock()
	if err == nil {
		w.err = errors.New("writer: closed")
	} else {
		w.err = err
	}
	return err
}

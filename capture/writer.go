package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/outfile"
)

// WriterConfig says where and how to write packets.
type WriterConfig struct {
	// Path is the file to write; "-" writes to Stdout.
	Path string
	// Format is the file format; FormatAuto picks by link type.
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
}

// bufferBytes is how much a writer gathers before a write(2). Records are
// never split across writes, so a capture killed between writes leaves a
// file that ends on a whole record.
const bufferBytes = 1 << 20

// Writer writes packets to a capture file, or a rotating set of files, in
// whole records. Flush is what makes written packets durable; Run calls it
// at least once a second.
type Writer struct {
	cfg       WriterConfig
	enc       *decode.Encoder
	out       io.Writer
	file      *os.File // nil for stdout
	name      string
	buf       []byte
	committed int64 // bytes of the current file known to be on disk, all whole records
	fileBytes int64 // bytes of the current file, buffered ones included
	fileIndex int   // index of the current rotated file
	firstTsNs int64 // timestamp of the current file's first packet, 0 before it
	files     []string
	packets   uint64
	// pending are the records in buf, in order; after a short write they
	// say how many of them reached the file whole.
	pending      []pendingRecord
	pendingBytes uint64 // captured bytes of the packets in pending
	inFile       uint64 // packets that reached the files, all files together
	inFileBytes  uint64 // their captured bytes
	fileRecords  uint64 // packets in the current file
	err          error  // sticky: after a write error the writer is closed
	closed       bool
}

// pendingRecord is one buffered record: where it ends in the buffer and
// how many captured bytes of its packet it holds.
type pendingRecord struct {
	end       int
	dataBytes uint32
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
	enc, err := newEncoder(cfg.Format, cfg.LinkType, cfg.SnapLenBytes)
	if err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg, enc: enc, buf: make([]byte, 0, bufferBytes), pending: make([]pendingRecord, 0, 1024)}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// LinkType returns the link type the files declare.
func (w *Writer) LinkType() int { return w.enc.LinkType() }

// Files returns the names of the files opened so far, in order.
func (w *Writer) Files() []string { return w.files }

// Written returns how many packets, and how many captured bytes of them,
// reached the files (or stdout): those Flush wrote out, not those still
// buffered or lost to a write error.
func (w *Writer) Written() (packets, bytes uint64) { return w.inFile, w.inFileBytes }

// failed reports whether a write error stopped the writer.
func (w *Writer) failed() bool { return w.err != nil && !w.closed }

// RotatedName is the name of rotated file number index: the number goes
// before the extension, so "out.pcap" becomes "out-00003.pcap" and the
// files still open by extension.
func RotatedName(path string, index int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%05d%s", strings.TrimSuffix(path, ext), index, ext)
}

func (w *Writer) open() error {
	w.name = w.cfg.Path
	if w.cfg.Path == "-" {
		w.name = "stdout"
		w.out = w.cfg.Stdout
		if w.out == nil {
			w.out = os.Stdout
		}
	} else {
		if w.cfg.RotateBytes > 0 || w.cfg.RotateEveryNs > 0 {
			w.name = RotatedName(w.cfg.Path, w.fileIndex)
		}
		// Written as packets arrive, not renamed into place, so that a
		// killed capture still reads: outfile.OpenStream creates or
		// truncates a regular file without following a symbolic link,
		// writes a device or FIFO through, and refuses the rest.
		f, err := outfile.OpenStream(w.name)
		if err != nil {
			return fmt.Errorf("open capture file: %w", err)
		}
		w.file, w.out = f, f
	}
	w.files = append(w.files, w.name)
	w.committed, w.firstTsNs, w.fileRecords = 0, 0, 0
	w.buf = w.enc.AppendHeader(w.buf[:0])
	w.fileBytes = int64(len(w.buf))
	// The header goes out at once, so even an empty capture is a valid file.
	return w.Flush()
}

// Write appends one packet. A write error closes the file, cut back to its
// last whole record, and is returned for this and every later call.
func (w *Writer) Write(p *Packet) error {
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
	n := len(w.buf)
	var err error
	if w.buf, err = w.enc.AppendPacket(w.buf, p.TsNs, p.Data, p.WireLenBytes, p.Iface); err != nil {
		w.buf = w.buf[:n]
		return fmt.Errorf("%s: packet %d: %w", w.name, w.packets+1, err)
	}
	w.fileBytes += int64(len(w.buf) - n)
	w.pending = append(w.pending, pendingRecord{end: len(w.buf), dataBytes: uint32(len(p.Data))})
	w.pendingBytes += uint64(len(p.Data))
	w.packets++
	if len(w.buf) >= bufferBytes-w.enc.MaxRecordBytes() {
		return w.Flush()
	}
	return nil
}

func (w *Writer) shouldRotate(p *Packet) bool {
	if w.cfg.RotateBytes > 0 && w.fileBytes >= w.cfg.RotateBytes {
		return true
	}
	return w.cfg.RotateEveryNs > 0 && w.firstTsNs != 0 && p.TsNs-w.firstTsNs >= w.cfg.RotateEveryNs
}

func (w *Writer) rotate() error {
	if err := w.closeFile(); err != nil {
		return err
	}
	w.fileIndex++
	if w.cfg.MaxFiles > 0 {
		w.fileIndex %= w.cfg.MaxFiles
	}
	if err := w.open(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush writes the buffered records out with one write.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.out.Write(w.buf)
	if err != nil {
		return w.fail(n, err)
	}
	w.committed += int64(n)
	w.commit(len(w.pending), w.pendingBytes)
	w.buf = w.buf[:0]
	return nil
}

// commit counts the first records of pending, holding dataBytes captured
// bytes, as in the file, and forgets the buffered records.
func (w *Writer) commit(records int, dataBytes uint64) {
	w.inFile += uint64(records)
	w.fileRecords += uint64(records)
	w.inFileBytes += dataBytes
	w.pending, w.pendingBytes = w.pending[:0], 0
}

// fail handles a write that wrote only n bytes: the records that reached
// the file whole stay, the file is cut back to the last of them and
// closed, and the error says how much it holds.
func (w *Writer) fail(n int, err error) error {
	// The os.File error names the file again; the message below does once.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	kept, keptBytes, end := 0, w.pendingBytes, 0
	for kept < len(w.pending) && w.pending[kept].end <= n {
		end = w.pending[kept].end
		kept++
	}
	for _, r := range w.pending[kept:] {
		keptBytes -= uint64(r.dataBytes)
	}
	w.committed += int64(end)
	w.commit(kept, keptBytes)
	where := ""
	if w.file != nil {
		if n > end {
			if terr := w.file.Truncate(w.committed); terr != nil {
				where = fmt.Sprintf("; cutting back the partial record failed: %v", terr)
			}
		}
		w.file.Close()
		w.file = nil
	}
	w.err = fmt.Errorf("write %s: %w (file closed, valid up to its last whole record: %d packets, %d bytes%s)",
		w.name, err, w.fileRecords, w.committed, where)
	return w.err
}

func (w *Writer) closeFile() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if w.file == nil {
		return nil
	}
	err := w.file.Close()
	w.file = nil
	if err != nil {
		w.err = fmt.Errorf("close %s: %w", w.name, err)
		return w.err
	}
	return nil
}

// Close flushes and closes the current file. It returns the first write
// error the writer met, if any.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if err := w.closeFile(); err != nil {
		return err
	}
	w.err = errors.New("writer: closed")
	return nil
}

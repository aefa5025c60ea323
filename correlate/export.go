package correlate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/filter"
	"github.com/ibscope/ibscope/internal/outfile"
)

// ExportOptions control Export.
type ExportOptions struct {
	Format Format
	// PartitionBy, when not empty, makes the output a directory holding a
	// Hive-style partitioned dataset instead of one file.
	PartitionBy []PartitionKey
	// NoCRC skips verifying ICRC, VCRC and LPCRC (a fifth of the decoding
	// cost); icrc_ok, vcrc_ok and link_lpcrc_ok are then null.
	NoCRC bool
	// Meta is stored as schema metadata (Parquet key-value metadata) in
	// every file written, besides what Export says of the captures.
	Meta map[string]string
	// OnDecodeError is told about each frame that could not be decoded (the
	// frame still gets a row, with the reason in the error column).
	OnDecodeError func(*capfile.DecodeError)
	// Select, when set, chooses the frames that get a row (ibanalyze's
	// --select, --from, --to, -c), in time order; its count reached, the
	// reading ends.
	Select *filter.Selection
	// Progress, if set, is called every 64K frames with the frames read and
	// the bytes read of the captures.
	Progress func(frames int, offsetBytes int64)
	// Workers, above 1, decodes the captures on that many goroutines
	// (capfile.StreamOptions.Workers); the rows are the same.
	Workers int
	// Map maps large regular captures into memory instead of reading them
	// (capfile.StreamOptions.Map, whose rule for the reading goroutine
	// holds: Export reads them on its caller's).
	Map bool
}

// ExportStats says what Export wrote.
type ExportStats struct {
	Frames       int64 // rows written, one per frame
	DecodeErrors int64 // frames that could not be decoded
	NotSelected  int64 // frames ExportOptions.Select left out
	// FileErrors counts the captures found damaged (the rows hold what came
	// before the damage); set only when that is all that went wrong, so
	// that the error Export returns is then only that.
	FileErrors int
	Files      []string // files written, in the order they were first opened
}

// Export writes one row per frame of the captures ("-" for standard input;
// several are merged in time order, as the pieces of a rotated capture) to
// out: one file, or with
// PartitionBy a dataset directory. Decoding and column building run here;
// compression and writing run on a second goroutine, one batch behind. Files
// appear under their final names only when the whole capture has been read
// and written; on error nothing is left behind, except that a capture
// damaged part way (cut mid-record) has its frames before the damage
// written, and the error says so.
func Export(captures []string, out string, opt ExportOptions) (ExportStats, error) {
	var st ExportStats
	var damaged []error
	in, err := capfile.OpenStream(captures, capfile.StreamOptions{CheckCRC: !opt.NoCRC, Undecoded: true, Untimed: true,
		Workers: opt.Workers, Map: opt.Map, OnDecodeError: opt.OnDecodeError, OnFileError: func(err error) { damaged = append(damaged, err) }})
	if err != nil {
		return st, err // names the capture (capfile.Open)
	}
	defer in.Close()

	names := in.Names()
	meta := map[string]string{"ibscope.table": "packets", "ibscope.capture": filepath.Base(names[0])}
	captureMeta(in, meta)
	maps.Copy(meta, opt.Meta)
	sink, err := newExportSink(names, out, opt, meta)
	if err != nil {
		return st, err
	}
	defer sink.abort()

	for {
		f, file, err := in.Next()
		if err == io.EOF {
			break
		}
		if opt.Select != nil {
			keep, done := opt.Select.Keep(f)
			if done {
				break
			}
			if !keep {
				st.NotSelected++
				continue
			}
		}
		// The stream returns no error but a *DecodeError (Undecoded); a type
		// assertion, unlike errors.As(err, &de), does not move de to the
		// heap, an allocation per frame.
		de, _ := err.(*capfile.DecodeError)
		switch {
		case de != nil:
			st.DecodeErrors++
			err = sink.add(f, file, in.LinkType(file), de.Err.Error())
		case f.NoTs:
			err = sink.add(f, file, in.LinkType(file), "no timestamp (pcapng simple packet block)")
		default:
			err = sink.add(f, file, in.LinkType(file), "")
		}
		if err != nil {
			return st, err
		}
		st.Frames++
		if opt.Progress != nil && st.Frames&0xFFFF == 0 {
			done, _ := in.Progress()
			opt.Progress(int(st.Frames), done)
		}
	}
	if err := sink.commit(&st); err != nil {
		return st, err
	}
	if len(damaged) > 0 { // each names file, frame and offset: the frames before it are written
		st.FileErrors = len(damaged)
		return st, fmt.Errorf("%w; %s written from the %d frames before it", errors.Join(damaged...), out, st.Frames)
	}
	return st, nil
}

// captureMeta adds what the captures say of themselves to a file's
// metadata: their names, link types, snap lengths, capture hosts and
// timestamp resolution (the unit their formats declare, as the stream knows
// it before the first frames).
func captureMeta(in *capfile.Stream, meta map[string]string) {
	names := in.Names()
	bases, links, snaps, hosts := make([]string, len(names)), make([]string, len(names)), make([]string, len(names)), make([]string, len(names))
	for i, n := range names {
		bases[i] = filepath.Base(n)
		links[i] = strconv.Itoa(in.LinkType(i))
		snaps[i] = strconv.Itoa(in.SnapLen(i))
		hosts[i] = in.CaptureHost(i)
	}
	meta["ibscope.captures"] = strings.Join(bases, ",")
	meta["ibscope.link_types"] = strings.Join(links, ",")    // LINKTYPE_ numbers, per capture
	meta["ibscope.snap_lens"] = strings.Join(snaps, ",")     // bytes, per capture; 0: none declared
	meta["ibscope.capture_hosts"] = strings.Join(hosts, ",") // per capture, as its pcapng section names it; empty: unknown
	meta["ibscope.ts_resolution_ns"] = strconv.FormatInt(in.ResolutionNs(), 10)
}

// exportPart is one output file being filled.
type exportPart struct {
	b *packetBatch
	w *TableWriter
}

// exportSink routes frames to their file's builder and hands full batches
// to the background writer.
type exportSink struct {
	format  Format
	schema  *arrow.Schema // of the full packet row
	fileSch *arrow.Schema // of the rows stored in files (partition columns dropped)
	projSch *arrow.Schema // of the record batches written to files (batchSchema of fileSch)
	pool    *batchPool
	keep    []int        // columns of schema that go into files, nil for all
	single  *exportPart  // the one file when not partitioned
	pt      *partitioner // nil when not partitioned
	root    string
	stem    string // file name stem inside partitions: part-<capture name>
	capture string
	parts   map[partition]*exportPart
	order   []*exportPart
	lastQ   partition
	lastP   *exportPart
	bg      *batchWriter
	dir     *outfile.Dir // the dataset directory when partitioned
	done    bool         // every file committed
}

// maxOpenPartitions bounds memory: each open partition holds one batch of
// column builders.
const maxOpenPartitions = 256

func newExportSink(captures []string, out string, opt ExportOptions, meta map[string]string) (*exportSink, error) {
	s := &exportSink{format: opt.Format, schema: PacketSchema(meta), bg: newBatchWriter()}
	s.fileSch = s.schema
	fb := array.NewStringBuilder(memory.DefaultAllocator)
	defer fb.Release()
	for _, c := range captures {
		fb.Append(filepath.Base(c))
	}
	s.pool = &batchPool{schema: batchSchema(s.schema), files: fb.NewArray()}
	if len(opt.PartitionBy) == 0 {
		f, err := outfile.Create(out)
		if err != nil {
			s.bg.stop()
			return nil, err
		}
		w, err := newTable(f, opt.Format, s.schema, true)
		if err != nil {
			s.bg.stop()
			return nil, err
		}
		s.single = &exportPart{b: s.pool.get(), w: w}
		s.order = append(s.order, s.single)
		return s, nil
	}
	s.pt = newPartitioner(opt.PartitionBy)
	s.root = out
	s.capture = strings.Join(captures, ", ")
	d, err := outfile.OpenDir(out)
	if err != nil {
		s.bg.stop()
		return nil, err
	}
	s.dir = d
	base := filepath.Base(captures[0])
	s.stem = "part-" + strings.Map(func(c rune) rune {
		if safePathPart(string(c)) {
			return c
		}
		return '_'
	}, strings.TrimSuffix(base, filepath.Ext(base)))
	s.parts = make(map[partition]*exportPart)
	if s.pt.dropsTransport() {
		all := packetFields()
		ti := fieldIndex(all, "transport")
		fields := make([]arrow.Field, 0, len(all)-1)
		for i, fd := range all {
			if i != ti {
				fields = append(fields, fd)
				s.keep = append(s.keep, i)
			}
		}
		s.fileSch = schemaWithMeta(fields, meta)
		s.projSch = batchSchema(s.fileSch)
	}
	return s, nil
}

// add routes frame f of the file numbered file (of the given link type).
func (s *exportSink) add(f *decode.Frame, file, linkType int, errMsg string) error {
	p := s.single
	if p == nil {
		var err error
		if p, err = s.partFor(f); err != nil {
			return err
		}
	}
	p.b.add(f, file, directionOf(f, &Local{}, linkType), errMsg)
	if p.b.n >= BatchRows {
		return s.flush(p)
	}
	return nil
}

// flush hands p's batch to the background writer and gives p a fresh one;
// the batch goes back to the pool once written.
func (s *exportSink) flush(p *exportPart) error {
	b := p.b
	p.b = s.pool.get()
	return s.bg.write(p.w, s.project(b.record()), func() { s.pool.put(b) })
}

func (s *exportSink) partFor(f *decode.Frame) (*exportPart, error) {
	q := s.pt.of(f)
	if s.lastP != nil && q == s.lastQ {
		return s.lastP, nil
	}
	p := s.parts[q]
	if p == nil {
		if len(s.parts) >= maxOpenPartitions {
			return nil, fmt.Errorf("%s: frame %d opens more than %d partitions; partition by fewer keys", s.root, f.Number, maxOpenPartitions)
		}
		name := filepath.Join(s.pt.dir("", q), s.stem+s.format.Ext())
		// Two captures with the same name would share this file: the rows
		// of an earlier export are never replaced silently.
		if _, err := os.Lstat(filepath.Join(s.root, name)); err == nil {
			return nil, fmt.Errorf("%s exists: it holds the rows of an earlier export of a capture named like %s; exporting %s there would replace them (remove it, or export into another directory)",
				filepath.Join(s.root, name), filepath.Base(s.capture), s.capture)
		}
		f, err := s.dir.Create(name)
		if err != nil {
			return nil, err
		}
		w, err := newTable(f, s.format, s.fileSch, true)
		if err != nil {
			return nil, err
		}
		w.noRepl = true
		p = &exportPart{b: s.pool.get(), w: w}
		s.parts[q] = p
		s.order = append(s.order, p)
	}
	s.lastQ, s.lastP = q, p
	return p, nil
}

// project drops the partition columns from a record batch.
func (s *exportSink) project(rec arrow.RecordBatch) arrow.RecordBatch {
	if s.keep == nil {
		return rec
	}
	cols := make([]arrow.Array, len(s.keep))
	for i, c := range s.keep {
		cols[i] = rec.Column(c)
	}
	out := array.NewRecordBatch(s.projSch, cols, rec.NumRows())
	rec.Release()
	return out
}

// commit writes the last partial batches, waits for the writer, and renames
// every file into place: all of them or, if one cannot be, none.
func (s *exportSink) commit(st *ExportStats) error {
	for _, p := range s.order {
		if p.b.n > 0 {
			if err := s.flush(p); err != nil {
				return err
			}
		}
	}
	if err := s.bg.stop(); err != nil {
		return err
	}
	for _, p := range s.order {
		if err := p.w.Close(); err != nil {
			return err
		}
	}
	for i, p := range s.order {
		if err := p.w.Commit(); err != nil {
			for _, q := range s.order[:i] {
				// Committed by this export, under names that were free.
				_ = os.Remove(q.w.Path())
			}
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("%s appeared while %s was being exported (another export into the same directory?); nothing written", p.w.Path(), s.capture)
			}
			return err
		}
		st.Files = append(st.Files, p.w.Path())
	}
	s.done = true
	if s.dir != nil {
		s.dir.Keep()
	}
	return nil
}

// abort stops the writer and removes every file not yet committed, and
// after a failure the dataset directories the export made (those left
// empty).
func (s *exportSink) abort() {
	s.bg.stop()
	for _, p := range s.order {
		p.w.Abort()
	}
	if s.dir != nil && !s.done {
		s.dir.Abort()
	}
}

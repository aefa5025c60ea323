package correlate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// BatchRows is how many rows go into one record batch, and so into one
// Parquet row group: large enough for zstd and for readers that parallelise
// per row group (DuckDB's own default is 122,880), small enough that a
// writer holds only a few tens of MB whatever the capture's size.
const BatchRows = 64 * 1024

// statsColumns are the columns, besides timestamps, whose Parquet row groups
// carry min/max statistics: what queries over packets and joins filter on.
var statsColumns = map[string]bool{
	"frame": true, "transport": true, "slid": true, "dlid": true, "src": true, "dst": true,
	"opcode": true, "opcode_name": true, "dest_qp": true, "psn": true,
	"sample_id": true, "source": true,
}

// deltaColumns are the integer columns, besides timestamps, stored with
// DELTA_BINARY_PACKED: counters that mostly step by small amounts, which it
// packs into a few bits a value before zstd sees them (halving the file and
// the compression time of the per-packet table).
var deltaColumns = map[string]bool{"frame": true, "psn": true, "aeth_msn": true, "sample_id": true}

// TableWriter writes record batches of one schema to one file. The data goes
// to a hidden temporary file next to the destination, and only Commit renames
// it to the final name: a failed or interrupted run leaves no file that looks
// complete.
type TableWriter struct {
	path, tmp string
	format    Format
	f         *os.File
	bw        *bufio.Writer
	pq        *parquetWriter
	ipcw      *ipc.FileWriter
	schema    *arrow.Schema // of the Arrow IPC file
	rows      int64         // rows written so far
	closed    bool
	committed bool
}

// CreateTable starts writing path in the given format with the given schema
// (its metadata is stored in the file: Parquet key-value metadata and the
// Arrow schema). The directory must exist.
func CreateTable(path string, format Format, schema *arrow.Schema) (*TableWriter, error) {
	return createTable(path, format, schema, false)
}

// createTable is CreateTable; parallel has each Parquet row group's columns
// encoded on several goroutines (see newParquetWriter), for wide tables
// written fast (export), at the cost of holding the row group's pages.
func createTable(path string, format Format, schema *arrow.Schema, parallel bool) (*TableWriter, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := addPending(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	w := &TableWriter{path: path, tmp: f.Name(), format: format, f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	switch format {
	case FormatParquet:
		opts := []parquet.WriterProperty{
			parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithCompressionLevel(1),        // zstd's fastest: the writer is the pipeline's slow stage
			parquet.WithVersion(parquet.V2_LATEST), // 2.6: timestamps keep ns and isAdjustedToUTC
			parquet.WithMaxRowGroupLength(BatchRows),
			parquet.WithCreatedBy("ibscope"),
			// Dictionaries pay off for strings (addresses, opcode names) and
			// cost a hash lookup per value for the mostly distinct integers
			// (times, PSNs, addresses in memory), which zstd packs well enough.
			parquet.WithDictionaryDefault(false),
			// Min/max statistics let readers skip row groups; they are
			// kept for the columns queries filter on and left out of the
			// rest, which saves a sixth of the writer's time.
			parquet.WithStats(false),
		}
		for _, f := range schema.Fields() {
			if id := f.Type.ID(); id == arrow.STRING || id == arrow.DICTIONARY {
				opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
			}
			if f.Type.ID() == arrow.TIMESTAMP || deltaColumns[f.Name] {
				opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
			}
			if f.Type.ID() == arrow.TIMESTAMP || statsColumns[f.Name] {
				opts = append(opts, parquet.WithStatsFor(f.Name, true))
			}
		}
		props := parquet.NewWriterProperties(opts...)
		w.pq, err = newParquetWriter(w.bw, schema, props, parallel)
	case FormatArrow:
		w.schema = schema
		w.ipcw, err = ipc.NewFileWriter(w.bw, ipc.WithSchema(schema), ipc.WithZstd(),
			ipc.WithCompressConcurrency(runtime.GOMAXPROCS(0)))
	default:
		err = fmt.Errorf("unknown format %d", format)
	}
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return w, nil
}

// Path is the final name the file gets on Commit.
func (w *TableWriter) Path() string { return w.path }

// Rows is the number of rows written so far.
func (w *TableWriter) Rows() int64 { return w.rows }

// Write appends a record batch (one Parquet row group per batch).
func (w *TableWriter) Write(rec arrow.RecordBatch) error {
	var err error
	if w.pq != nil {
		err = w.pq.write(rec)
	} else {
		err = w.writeIPC(rec)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.rows += rec.NumRows()
	return nil
}

// writeIPC writes rec to the Arrow IPC file, first turning any dictionary
// column whose field in the schema is its value type into that type.
func (w *TableWriter) writeIPC(rec arrow.RecordBatch) error {
	var cols []arrow.Array
	for i, f := range w.schema.Fields() {
		c := rec.Column(i)
		if !isDictOf(c.DataType(), f.Type) {
			continue
		}
		if cols == nil {
			cols = append([]arrow.Array(nil), rec.Columns()...)
		}
		d, err := denseStrings(c)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		defer d.Release()
		cols[i] = d
	}
	if cols != nil {
		rec = array.NewRecordBatch(w.schema, cols, rec.NumRows())
		defer rec.Release()
	}
	return w.ipcw.Write(rec)
}

// Close finishes the file under its temporary name (footer, flush, sync);
// Commit then renames it.
func (w *TableWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	if w.pq != nil {
		err = w.pq.close()
	} else {
		err = w.ipcw.Close()
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	// pqarrow closes the sink it was given only when it is an io.Closer;
	// the bufio.Writer is not, so the file is ours to close.
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

// Commit closes the file if needed and renames it to its final name.
func (w *TableWriter) Commit() error {
	if err := w.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file 0600; a result file is for others to read.
	if err := os.Chmod(w.tmp, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := os.Rename(w.tmp, w.path); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.committed = true
	dropPending(w.tmp)
	return nil
}

// Abort drops the temporary file; after Commit it does nothing. It is safe to
// defer right after CreateTable.
func (w *TableWriter) Abort() {
	if w.committed {
		return
	}
	if !w.closed {
		w.closed = true
		w.f.Close()
	}
	// A failed removal leaves a hidden ".NAME.*.tmp" file that no reader
	// mistakes for a result; there is nothing better to do with the error.
	_ = os.Remove(w.tmp)
	dropPending(w.tmp)
}

// pending holds the temporary files of the TableWriters not yet committed
// or aborted, and the directories partitioned exports under way made (parents
// first), for RemovePending.
var pending struct {
	sync.Mutex
	files   map[string]bool
	dirs    []string
	stopped bool
}

func addPendingDirs(dirs []string) {
	pending.Lock()
	pending.dirs = append(pending.dirs, dirs...)
	pending.Unlock()
}

// dropPendingDirs forgets dirs once their export has finished or cleaned up.
func dropPendingDirs(dirs []string) {
	drop := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		drop[d] = true
	}
	pending.Lock()
	defer pending.Unlock()
	kept := pending.dirs[:0]
	for _, d := range pending.dirs {
		if !drop[d] {
			kept = append(kept, d)
		}
	}
	pending.dirs = kept
}

func addPending(tmp string) error {
	pending.Lock()
	defer pending.Unlock()
	if pending.stopped {
		return errors.New("interrupted")
	}
	if pending.files == nil {
		pending.files = map[string]bool{}
	}
	pending.files[tmp] = true
	return nil
}

func dropPending(tmp string) {
	pending.Lock()
	delete(pending.files, tmp)
	pending.Unlock()
}

// RemovePending removes the temporary file of every table being written,
// and the partition directories left empty by that, and makes later
// CreateTable calls fail. A command interrupted by a signal
// calls it before exiting, so that no partial output is left behind even
// under a hidden name. Files already committed stay: they are complete.
func RemovePending() {
	pending.Lock()
	defer pending.Unlock()
	pending.stopped = true
	for tmp := range pending.files {
		// Writers may still hold the file open; unlinking it is enough.
		_ = os.Remove(tmp)
	}
	pending.files = nil
	// Children before parents; os.Remove leaves a directory that holds
	// anything else.
	for i := len(pending.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(pending.dirs[i])
	}
	pending.dirs = nil
}

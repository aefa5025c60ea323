package correlate

import (
	"bufio"
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/version"
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

// createdBy is the Parquet footer's created_by: the program and the
// ibscope version that wrote the file (ibanalyze is the one command that
// writes tables).
var createdBy = version.Application("ibanalyze")

// TableWriter writes record batches of one schema to one file, by
// outfile's rule: the data goes to a hidden temporary file next to the
// destination, and only Commit renames it to the final name, so a failed or
// interrupted run leaves no file that looks complete; a device or FIFO is
// written through.
type TableWriter struct {
	out    *outfile.File
	format Format
	bw     *bufio.Writer
	pq     *parquetWriter
	ipcw   *ipc.FileWriter
	text   *textTable    // CSV or JSON Lines
	schema *arrow.Schema // of the Arrow IPC file
	closed bool
	noRepl bool // Commit refuses to replace an existing file
}

// CreateTable starts writing path in the given format with the given schema
// (its metadata is stored in the file: Parquet key-value metadata and the
// Arrow schema). The directory must exist.
func CreateTable(path string, format Format, schema *arrow.Schema) (*TableWriter, error) {
	out, err := outfile.Create(path)
	if err != nil {
		return nil, err
	}
	return newTable(out, format, schema, false)
}

// newTable starts writing a table to out; parallel has each Parquet row
// group's columns encoded on several goroutines (see newParquetWriter), and
// the rows of CSV and JSON Lines made into text on several, for wide tables
// written fast (export), at the cost of holding the row group's pages.
func newTable(out *outfile.File, format Format, schema *arrow.Schema, parallel bool) (*TableWriter, error) {
	w := &TableWriter{out: out, format: format, bw: bufio.NewWriterSize(out, 1<<20)}
	var err error
	switch format {
	case FormatParquet:
		opts := []parquet.WriterProperty{
			parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithCompressionLevel(1),        // zstd's fastest: the writer is the pipeline's slow stage
			parquet.WithVersion(parquet.V2_LATEST), // 2.6: timestamps keep ns and isAdjustedToUTC
			parquet.WithMaxRowGroupLength(BatchRows),
			parquet.WithCreatedBy(createdBy),
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
	case FormatCSV, FormatJSONL:
		w.text, err = newTextTable(w.bw, schema, format, parallel)
	default:
		err = fmt.Errorf("unknown format %d", format)
	}
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("create %s: %w", out.Name(), err)
	}
	return w, nil
}

// Path is the final name the file gets on Commit.
func (w *TableWriter) Path() string { return w.out.Name() }

// Write appends a record batch (one Parquet row group per batch).
func (w *TableWriter) Write(rec arrow.RecordBatch) error {
	var err error
	switch {
	case w.pq != nil:
		err = w.pq.write(rec)
	case w.text != nil:
		err = w.text.write(rec)
	default:
		err = w.writeIPC(rec)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", w.Path(), err)
	}
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
	switch {
	case w.pq != nil:
		err = w.pq.close()
	case w.ipcw != nil:
		err = w.ipcw.Close()
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err != nil {
		w.out.Abort()
		return fmt.Errorf("write %s: %w", w.Path(), err)
	}
	// pqarrow closes the sink it was given only when it is an io.Closer;
	// the bufio.Writer is not, so the file is ours to close.
	return w.out.Close()
}

// Commit closes the file if needed and renames it to its final name; after
// a failure the temporary file is gone.
func (w *TableWriter) Commit() error {
	if err := w.Close(); err != nil {
		w.out.Abort()
		return err
	}
	if w.noRepl {
		return w.out.CommitNew()
	}
	return w.out.Commit()
}

// Abort drops the temporary file; after Commit it does nothing. It is safe to
// defer right after CreateTable.
func (w *TableWriter) Abort() { w.out.Abort() }

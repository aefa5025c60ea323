package correlate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetWriter writes record batches as Parquet row groups, encoding and
// compressing the columns of each row group on several goroutines. It lays
// out the file itself (magic, column chunks, footer) with arrow-go's page
// writers and metadata builders, so that each column chunk can be written
// the cheapest way its values allow: a column of plain numbers or booleans,
// and any column null in every row of the batch, by plainScratch, and a
// dictionary array of strings by dictScratch, straight from the Arrow
// buffers; the rest (strings, delta-encoded counters) by arrow-go's column
// writers. It stores the Arrow schema as pqarrow does (ARROW:schema), so
// readers restore the Arrow types, timestamps and metadata exactly.
//
// A record column may also be a dictionary array whose value type is the
// field's type: it is written as the column's dictionary page plus indices,
// with no hashing of values, and read back as the field's type.
type parquetWriter struct {
	sink      *tellWriter
	schema    *arrow.Schema
	pqSchema  *schema.Schema
	props     *parquet.WriterProperties
	arrProps  pqarrow.ArrowWriterProperties
	meta      *metadata.FileMetaDataBuilder
	rowGroups int
	workers   []*chunkWorker
	cols      []columnPlan
	err       error // the first write error: the file is then unusable
}

// columnPlan is how one column is written, fixed by the writer properties.
type columnPlan struct {
	descr    *schema.Column
	nullable bool
	encoding parquet.Encoding // of its data pages when not dictionary-encoded
	dict     bool             // dictionary encoding enabled
	stats    bool             // min/max statistics kept
	plain    bool             // plainScratch can write its values (nulls it always can)
	delta    bool             // in DELTA_BINARY_PACKED
	// For dictionary encoding: the encodings of the dictionary page and of
	// the data pages' indices, and the longest min or max statistic kept.
	dictPageEnc, dictIdxEnc parquet.Encoding
	maxStats                int64
}

// chunkWorker is one encoding goroutine's scratch, reused from row group
// to row group.
type chunkWorker struct {
	ctx   context.Context // pqarrow write context (scratch buffers)
	defs  []int16         // definition levels for arrow-go's writers
	plain plainScratch
}

// tellWriter counts what it writes: the page writers place column chunks
// by the offset it reports.
type tellWriter struct {
	w io.Writer
	n int64
}

func (t *tellWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.n += int64(n)
	return n, err
}

func (t *tellWriter) Tell() int64 { return t.n }

// parquetMagic starts and ends every Parquet file.
var parquetMagic = []byte("PAR1")

// pageFlusher is the part of the concrete column writers (file.Int32ColumnChunkWriter,
// ...) that closes and compresses the current page. The interface does not list it.
type pageFlusher interface {
	FlushBufferedDataPages() error
}

// newParquetWriter starts a Parquet file. With parallel, each row group's
// columns are encoded on up to GOMAXPROCS goroutines (4 at most); either
// way a row group's column chunks are held in memory, compressed, until
// the row group is complete (a few MB for a wide table).
func newParquetWriter(w io.Writer, sch *arrow.Schema, props *parquet.WriterProperties, parallel bool) (*parquetWriter, error) {
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	pqSchema, err := pqarrow.ToParquet(sch, props, arrProps)
	if err != nil {
		return nil, err
	}
	meta := make(metadata.KeyValueMetadata, 0, sch.Metadata().Len()+1)
	for i, k := range sch.Metadata().Keys() {
		meta.Append(k, sch.Metadata().Values()[i])
	}
	// What pqarrow.WithStoreSchema stores: an IPC stream holding the schema.
	var sb bytes.Buffer
	sw := ipc.NewWriter(&sb, ipc.WithSchema(sch))
	if err := sw.Close(); err != nil {
		return nil, err
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(sb.Bytes()))
	p := &parquetWriter{sink: &tellWriter{w: w}, schema: sch, pqSchema: pqSchema, props: props, arrProps: arrProps,
		meta: metadata.NewFileMetadataBuilder(pqSchema, props, meta)}
	if _, err := p.sink.Write(parquetMagic); err != nil {
		return nil, err
	}
	workers := 1
	if parallel {
		workers = max(1, min(runtime.GOMAXPROCS(0), 4))
	}
	for range workers {
		p.workers = append(p.workers, &chunkWorker{ctx: pqarrow.NewArrowWriteContext(context.Background(), &p.arrProps)})
	}
	for i, f := range sch.Fields() {
		d := pqSchema.Column(i)
		c := columnPlan{descr: d, nullable: f.Nullable, encoding: props.EncodingFor(d.Path()), dict: props.DictionaryEnabledFor(d.Path()),
			stats:       props.StatisticsEnabledFor(d.Path()) && d.SortOrder() != schema.SortUNKNOWN,
			dictPageEnc: props.DictionaryPageEncoding(), dictIdxEnc: props.DictionaryIndexEncoding(), maxStats: props.MaxStatsSizeFor(d.Path())}
		c.delta = c.encoding == parquet.Encodings.DeltaBinaryPacked
		c.plain = !c.dict && (c.encoding == parquet.Encodings.Plain || c.delta) && plainType(f.Type, d, c.delta) &&
			!(c.stats && f.Type.ID() == arrow.BOOL)
		p.cols = append(p.cols, c)
	}
	return p, nil
}

// chunk is one column chunk of the row group being written: its pages are
// held in pager until the chunk is closed in column order.
type chunk struct {
	meta  *metadata.ColumnChunkMetaDataBuilder
	pager file.PageWriter
	cw    file.ColumnChunkWriter // arrow-go's writer, or nil when plainScratch wrote the pages
	// plainScratch wrote a dictionary page
	hasDict bool
}

// close writes the chunk's pages and metadata at the end of the file.
func (c *chunk) close() error {
	if c.cw != nil {
		return c.cw.Close()
	}
	return c.pager.Close(c.hasDict, false)
}

// write appends rec as one row group.
func (p *parquetWriter) write(rec arrow.RecordBatch) error {
	if p.err != nil {
		return p.err
	}
	if rec.NumCols() != int64(p.schema.NumFields()) {
		return fmt.Errorf("record has %d columns, schema %d", rec.NumCols(), p.schema.NumFields())
	}
	for i, f := range p.schema.Fields() {
		if t := rec.Column(i).DataType(); !arrow.TypeEqual(t, f.Type) && !isDictOf(t, f.Type) {
			return fmt.Errorf("column %s: record has type %s, schema %s", f.Name, t, f.Type)
		}
	}
	if p.err = p.writeRowGroup(rec); p.err != nil {
		return p.err
	}
	return nil
}

func (p *parquetWriter) writeRowGroup(rec arrow.RecordBatch) error {
	ordinal := int16(p.rowGroups)
	p.rowGroups++
	rg := p.meta.AppendRowGroup()
	chunks := make([]chunk, rec.NumCols())
	for i := range chunks {
		c := &chunks[i]
		c.meta = rg.NextColumnChunk()
		path := c.meta.Descr().Path()
		var err error
		c.pager, err = file.NewPageWriter(p.sink, p.props.CompressionFor(path), p.props.CompressionLevelFor(path), c.meta, ordinal, int16(i),
			p.props.Allocator(), true, nil, nil)
		if err != nil {
			return err
		}
	}
	// Columns go to the workers in order; each encodes its columns and
	// compresses their pages into the chunk's in-memory buffer.
	var next atomic.Int64
	errs := make([]error, len(p.workers))
	work := func(w int) {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(chunks) {
				return
			}
			if err := p.writeChunk(p.workers[w], &chunks[i], i, rec.Column(i)); err != nil {
				errs[w] = fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
				return
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < len(p.workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	// Then the chunks go to the file in column order.
	start := p.sink.Tell()
	for i := range chunks {
		if err := chunks[i].close(); err != nil {
			return fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
		}
	}
	rg.SetNumRows(int(rec.NumRows()))
	return rg.Finish(p.sink.Tell()-start, ordinal)
}

// writeChunk encodes col as column i of the row group into c, with worker
// w's scratch.
func (p *parquetWriter) writeChunk(w *chunkWorker, c *chunk, i int, col arrow.Array) error {
	plan := &p.cols[i]
	if col.Data().Offset() == 0 && col.Len() > 0 {
		if plan.plain || (plan.nullsOnly() && col.NullN() == col.Len()) {
			return w.plain.write(c, plan, col)
		}
		if d, ok := col.(*array.Dictionary); ok && plan.dict && plan.descr.PhysicalType() == parquet.Types.ByteArray {
			if entries, ok := w.plain.dict.dictEntries(d); ok {
				return w.plain.writeDict(c, plan, d, entries)
			}
		}
	}
	c.cw = file.NewColumnChunkWriter(c.meta, c.pager, p.props)
	return p.writeColumn(w, c.cw, i, col)
}

// writeColumn writes col as column i of the row group through arrow-go's
// column writer cw, using worker w's scratch.
func (p *parquetWriter) writeColumn(w *chunkWorker, cw file.ColumnChunkWriter, i int, col arrow.Array) error {
	var defs []int16
	nullable := p.cols[i].nullable
	if nullable {
		// One flat optional column: level 1 for a value, 0 for a null.
		n := col.Len()
		if cap(w.defs) < n {
			w.defs = make([]int16, n)
		}
		defs = w.defs[:n]
		if col.NullN() == 0 {
			for j := range defs {
				defs[j] = 1
			}
		} else {
			bm, off := col.NullBitmapBytes(), col.Data().Offset()
			for j := range defs {
				k := off + j
				defs[j] = int16(bm[k>>3] >> (k & 7) & 1)
			}
		}
	}
	if err := pqarrow.WriteArrowToColumn(w.ctx, cw, col, defs, nil, nullable); err != nil {
		return err
	}
	// Compress the last page here, in parallel, rather than when the row
	// group is written out. Dictionary-encoded columns keep their pages
	// until the dictionary page is written (it must come first); their
	// indices are small.
	if f, ok := cw.(pageFlusher); ok && !p.cols[i].dict {
		return f.FlushBufferedDataPages()
	}
	return nil
}

// close writes the footer: the file's metadata, its length and the magic.
func (p *parquetWriter) close() error {
	if p.err != nil {
		return p.err
	}
	fm, err := p.meta.Finish()
	if err != nil {
		return err
	}
	n, err := fm.WriteTo(p.sink, nil)
	if err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(n))
	copy(tail[4:], parquetMagic)
	_, err = p.sink.Write(tail[:])
	return err
}

// isDictOf reports whether t is a dictionary type with value type v.
func isDictOf(t, v arrow.DataType) bool {
	d, ok := t.(*arrow.DictionaryType)
	return ok && arrow.TypeEqual(d.ValueType, v)
}

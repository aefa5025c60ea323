package correlate

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetWriter writes record batches as Parquet row groups, encoding and
// compressing the columns of each row group on several goroutines. It stores
// the Arrow schema as pqarrow does (ARROW:schema), so readers restore the
// Arrow types, timestamps and metadata exactly.
//
// A record column may also be a dictionary array whose value type is the
// field's type: it is written as the column's dictionary page plus indices,
// with no hashing of values, and read back as the field's type.
type parquetWriter struct {
	fw       *file.Writer
	schema   *arrow.Schema
	workers  int
	ctxs     []context.Context // one pqarrow write context per worker (they hold scratch buffers)
	defs     [][]int16         // definition-level scratch, one per worker
	pageable []bool            // columns whose pages may be compressed early (not dictionary-encoded)
}

// pageFlusher is the part of the concrete column writers (file.Int32ColumnChunkWriter,
// ...) that closes and compresses the current page. The interface does not list it.
type pageFlusher interface {
	FlushBufferedDataPages() error
}

// newParquetWriter starts a Parquet file. With parallel, each row group's
// columns are encoded on up to GOMAXPROCS goroutines, which needs every
// column's page buffers in memory at once (a few tens of MB for a wide
// table); without, columns are written one after the other, as pqarrow does.
func newParquetWriter(w io.Writer, schema *arrow.Schema, props *parquet.WriterProperties, parallel bool) (*parquetWriter, error) {
	arrProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	pqSchema, err := pqarrow.ToParquet(schema, props, arrProps)
	if err != nil {
		return nil, err
	}
	meta := make(metadata.KeyValueMetadata, 0, schema.Metadata().Len()+1)
	for i, k := range schema.Metadata().Keys() {
		meta.Append(k, schema.Metadata().Values()[i])
	}
	// What pqarrow.WithStoreSchema stores: an IPC stream holding the schema.
	var sch bytes.Buffer
	sw := ipc.NewWriter(&sch, ipc.WithSchema(schema))
	if err := sw.Close(); err != nil {
		return nil, err
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(sch.Bytes()))
	fw, err := file.NewParquetWriterWithError(w, pqSchema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	p := &parquetWriter{fw: fw, schema: schema, workers: 1}
	if parallel {
		p.workers = max(1, min(runtime.GOMAXPROCS(0), 4))
	}
	for range p.workers {
		p.ctxs = append(p.ctxs, pqarrow.NewArrowWriteContext(context.Background(), &arrProps))
		p.defs = append(p.defs, nil)
	}
	for _, f := range schema.Fields() {
		p.pageable = append(p.pageable, !props.DictionaryEnabledFor(f.Name))
	}
	return p, nil
}

// write appends rec as one row group.
func (p *parquetWriter) write(rec arrow.RecordBatch) error {
	if rec.NumCols() != int64(p.schema.NumFields()) {
		return fmt.Errorf("record has %d columns, schema %d", rec.NumCols(), p.schema.NumFields())
	}
	for i, f := range p.schema.Fields() {
		if t := rec.Column(i).DataType(); !arrow.TypeEqual(t, f.Type) && !isDictOf(t, f.Type) {
			return fmt.Errorf("column %s: record has type %s, schema %s", f.Name, t, f.Type)
		}
	}
	if p.workers == 1 {
		rgw, err := p.fw.AppendRowGroupChecked()
		if err != nil {
			return err
		}
		for i, col := range rec.Columns() {
			cw, err := rgw.NextColumn()
			if err == nil {
				err = p.writeColumn(0, cw, i, col)
			}
			if err != nil {
				return fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
			}
		}
		return rgw.Close()
	}
	rgw, err := p.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	// Columns go to the workers in order; each encodes its columns and
	// compresses their pages into the row group's in-memory buffers. The
	// row group is written out, column by column, when the next one starts
	// or the file closes.
	var next atomic.Int64
	errs := make([]error, p.workers)
	var wg sync.WaitGroup
	for w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= int(rec.NumCols()) {
					return
				}
				cw, err := rgw.Column(i)
				if err == nil {
					err = p.writeColumn(w, cw, i, rec.Column(i))
				}
				if err != nil {
					errs[w] = fmt.Errorf("column %s: %w", p.schema.Field(i).Name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeColumn writes col as column i of the row group through cw, using
// worker w's scratch.
func (p *parquetWriter) writeColumn(w int, cw file.ColumnChunkWriter, i int, col arrow.Array) error {
	var err error
	var defs []int16
	nullable := p.schema.Field(i).Nullable
	if nullable {
		// One flat optional column: level 1 for a value, 0 for a null.
		n := col.Len()
		if cap(p.defs[w]) < n {
			p.defs[w] = make([]int16, n)
		}
		defs = p.defs[w][:n]
		switch col.NullN() {
		case 0:
			for j := range defs {
				defs[j] = 1
			}
		case n: // a header no row of the batch has: most columns of most captures
			clear(defs)
		default:
			bm, off := col.NullBitmapBytes(), col.Data().Offset()
			for j := range defs {
				k := off + j
				defs[j] = int16(bm[k>>3] >> (k & 7) & 1)
			}
		}
	}
	done := false
	if nullable && col.NullN() == col.Len() {
		// A header absent from every row of the batch: levels only.
		if done, err = writeNulls(cw, defs); err != nil {
			return err
		}
	} else if d, ok := col.(*array.Dictionary); ok {
		if done, err = writeDictDirect(cw, d, defs); err != nil {
			return err
		}
	}
	if !done {
		if err := pqarrow.WriteArrowToColumn(p.ctxs[w], cw, col, defs, nil, nullable); err != nil {
			return err
		}
	}
	// Compress the last page here, in parallel, rather than when the row
	// group is written out. Dictionary-encoded columns keep their pages
	// until the dictionary page is written (it must come first); their
	// indices are small.
	if f, ok := cw.(pageFlusher); ok && p.pageable[i] {
		return f.FlushBufferedDataPages()
	}
	return nil
}

// dictEncoder is the part of a column's dictionary encoder (an internal
// type of the parquet package) that writeDictDirect uses.
type dictEncoder interface {
	Encoding() parquet.Encoding
	NormalizeDict(arrow.Array) (arrow.Array, error)
	PutDictionary(arrow.Array) error
	PreservedDictionary() arrow.Array
	NumEntries() int
}

// writeDictDirect writes a dictionary array as the column chunk's
// dictionary plus indices, as pqarrow does for a column's first dictionary
// array, except that the statistics come from the dictionary entries the
// indices use, found by a pass over them, rather than from a hash of every
// index (which cost more than the rest of the column). It reports false,
// having written nothing, when the column writer is not in that state;
// the caller then leaves the column to pqarrow.
func writeDictDirect(cw file.ColumnChunkWriter, d *array.Dictionary, defs []int16) (bool, error) {
	enc, ok := cw.CurrentEncoder().(dictEncoder)
	if !ok || enc.Encoding() != parquet.Encodings.PlainDict || enc.PreservedDictionary() != nil || enc.NumEntries() != 0 {
		return false, nil
	}
	if !arrow.IsBaseBinary(d.Dictionary().DataType().ID()) {
		return false, nil
	}
	norm, err := enc.NormalizeDict(d.Dictionary())
	if err != nil {
		return false, nil
	}
	defer norm.Release()
	if err := enc.PutDictionary(norm); err != nil || enc.NumEntries() != norm.Len() {
		// Duplicate entries: the encoder's indices would not be the
		// array's; the caller writes the values in plain encoding.
		cw.FallbackToPlain()
		return false, nil
	}
	if stats := cw.PageStatistics(); stats != nil {
		used := make([]bool, norm.Len())
		nulls := usedEntries(d, defs, used)
		var take []int32
		for k, u := range used {
			if u {
				take = append(take, int32(k))
			}
		}
		ref := norm
		if len(take) < norm.Len() {
			ti := array.NewInt32Builder(memory.DefaultAllocator)
			ti.AppendValues(take, nil)
			idx := ti.NewArray()
			ti.Release()
			r, err := compute.TakeArray(context.Background(), norm, idx)
			idx.Release()
			if err != nil {
				return true, err
			}
			defer r.Release()
			ref = r
		}
		stats.IncNulls(int64(nulls))
		stats.IncNumValues(int64(d.Len() - nulls))
		if err := stats.UpdateFromArrow(ref, false); err != nil {
			return true, err
		}
	}
	return true, cw.WriteDictIndices(d.Indices(), defs, nil)
}

// usedEntries marks in used the dictionary entries that d's valid rows
// (defs[i] == 1, or every row when defs is nil) refer to, and returns how
// many rows are null.
func usedEntries(d *array.Dictionary, defs []int16, used []bool) (nulls int) {
	valid := func(i int) bool { return defs == nil || defs[i] == 1 }
	mark := func(k int) {
		if k >= 0 && k < len(used) {
			used[k] = true
		}
	}
	switch ix := d.Indices().(type) {
	case *array.Int32:
		for i, k := range ix.Int32Values() {
			if valid(i) {
				mark(int(k))
			}
		}
	case *array.Uint8:
		for i, k := range ix.Uint8Values() {
			if valid(i) {
				mark(int(k))
			}
		}
	default:
		for i := range d.Len() {
			if valid(i) {
				mark(d.GetValueIndex(i))
			}
		}
	}
	if defs == nil {
		return 0
	}
	for _, l := range defs {
		nulls += int(1 - l)
	}
	return nulls
}

// writeNulls writes a column chunk's worth of nulls (defs all 0) without
// converting the values of an array that has none. It reports false, having
// written nothing, for a physical type it does not handle.
func writeNulls(cw file.ColumnChunkWriter, defs []int16) (bool, error) {
	var err error
	switch cw := cw.(type) {
	case *file.Int32ColumnChunkWriter:
		_, err = cw.WriteBatch(nil, defs, nil)
	case *file.Int64ColumnChunkWriter:
		_, err = cw.WriteBatch(nil, defs, nil)
	case *file.BooleanColumnChunkWriter:
		_, err = cw.WriteBatch(nil, defs, nil)
	case *file.ByteArrayColumnChunkWriter:
		_, err = cw.WriteBatch(nil, defs, nil)
	default:
		return false, nil
	}
	return true, err
}

func (p *parquetWriter) close() error { return p.fw.Close() }

// isDictOf reports whether t is a dictionary type with value type v.
func isDictOf(t, v arrow.DataType) bool {
	d, ok := t.(*arrow.DictionaryType)
	return ok && arrow.TypeEqual(d.ValueType, v)
}

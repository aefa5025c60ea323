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
	"github.com/apache/arrow-go/v18/arrow/ipc"
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

func newParquetWriter(w io.Writer, schema *arrow.Schema, props *parquet.WriterProperties) (*parquetWriter, error) {
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
	p := &parquetWriter{fw: fw, schema: schema, workers: max(1, min(runtime.GOMAXPROCS(0), 4))}
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
				if err := p.writeColumn(w, rgw, i, rec.Column(i)); err != nil {
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

func (p *parquetWriter) writeColumn(w int, rgw file.BufferedRowGroupWriter, i int, col arrow.Array) error {
	cw, err := rgw.Column(i)
	if err != nil {
		return err
	}
	var defs []int16
	nullable := p.schema.Field(i).Nullable
	if nullable {
		// One flat optional column: level 1 for a value, 0 for a null.
		n := col.Len()
		if cap(p.defs[w]) < n {
			p.defs[w] = make([]int16, n)
		}
		defs = p.defs[w][:n]
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
	if err := pqarrow.WriteArrowToColumn(p.ctxs[w], cw, col, defs, nil, nullable); err != nil {
		return err
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

func (p *parquetWriter) close() error { return p.fw.Close() }

// isDictOf reports whether t is a dictionary type with value type v.
func isDictOf(t, v arrow.DataType) bool {
	d, ok := t.(*arrow.DictionaryType)
	return ok && arrow.TypeEqual(d.ValueType, v)
}

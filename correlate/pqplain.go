package correlate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// plainScratch writes a column chunk as one PLAIN data page straight from
// the Arrow array's buffers: its definition levels are the validity bitmap
// itself (a bit-packed run of width 1, or one RLE run when every row is
// valid or every row null) and its values those of the valid rows. arrow-go's
// column writers take levels as one int16 per row, count and RLE-encode
// them value by value; for the per-packet table, whose rows have a handful
// of its hundred-odd columns, that was most of the writing. It is one
// encoding goroutine's scratch, reused from chunk to chunk.
type plainScratch struct {
	page []byte       // the uncompressed page: levels then values
	comp bytes.Buffer // the compressed page
	i32  []int32
	i64  []int64
	dict dictScratch
}

// plainType reports whether plainScratch can write the values of an Arrow
// type stored as the Parquet physical type phys: integers and booleans.
// With delta, it is to write them in DELTA_BINARY_PACKED: integers, and
// timestamps stored in their own unit.
func plainType(t arrow.DataType, d *schema.Column, delta bool) bool {
	phys := d.PhysicalType()
	if delta && t.ID() == arrow.BOOL {
		return false
	}
	switch t.ID() {
	case arrow.TIMESTAMP:
		ts, ok := d.LogicalType().(schema.TimestampLogicalType)
		unit := map[arrow.TimeUnit]schema.TimeUnitType{arrow.Nanosecond: schema.TimeUnitNanos, arrow.Microsecond: schema.TimeUnitMicros,
			arrow.Millisecond: schema.TimeUnitMillis}[t.(*arrow.TimestampType).Unit]
		return delta && phys == parquet.Types.Int64 && ok && unit != schema.TimeUnitUnknown && ts.TimeUnit() == unit
	case arrow.INT8, arrow.UINT8, arrow.INT16, arrow.UINT16, arrow.INT32, arrow.UINT32:
		return phys == parquet.Types.Int32
	case arrow.INT64, arrow.UINT64:
		return phys == parquet.Types.Int64
	case arrow.BOOL:
		return phys == parquet.Types.Boolean
	}
	return false
}

// nullsOnly reports whether plainScratch can write a chunk of plan's column
// in which every row is null: levels only, in the column's own encoding.
func (plan *columnPlan) nullsOnly() bool {
	return plan.nullable && (plan.encoding == parquet.Encodings.Plain || plan.encoding == parquet.Encodings.DeltaBinaryPacked)
}

// write encodes col (offset 0, at least one row; plainType or all null) as
// chunk c's one data page.
func (s *plainScratch) write(c *chunk, plan *columnPlan, col arrow.Array) error {
	n, nulls := col.Len(), col.NullN()
	if !plan.nullable && nulls > 0 {
		return fmt.Errorf("%d nulls in a column that is not nullable", nulls)
	}
	s.page = s.page[:0]
	if plan.nullable {
		s.page = appendDefLevels(s.page, col, n, nulls)
	}
	var st metadata.TypedStatistics
	if plan.stats {
		st = metadata.NewStatistics(plan.descr, memory.DefaultAllocator)
	}
	enc := parquet.Encodings.Plain
	switch {
	case nulls == n:
		// No values: the page says the column's encoding, which the chunk's
		// metadata lists.
		enc = plan.encoding
		if enc == parquet.Encodings.DeltaBinaryPacked { // the header alone
			s.page = appendDelta(s.page, s.i64[:0])
		}
		if st != nil {
			st.IncNulls(int64(n))
		}
	case plan.descr.PhysicalType() == parquet.Types.Int32:
		s.i32 = compactInt32(s.i32[:0], col, nulls)
		if plan.delta {
			enc = parquet.Encodings.DeltaBinaryPacked
			s.page = appendDelta(s.page, s.i32)
		} else {
			s.page = append(s.page, arrow.Int32Traits.CastToBytes(s.i32)...)
		}
		if st != nil {
			st.(*metadata.Int32Statistics).Update(s.i32, int64(nulls))
		}
	case plan.descr.PhysicalType() == parquet.Types.Int64:
		s.i64 = compactInt64(s.i64[:0], col, nulls)
		if plan.delta {
			enc = parquet.Encodings.DeltaBinaryPacked
			s.page = appendDelta(s.page, s.i64)
		} else {
			s.page = append(s.page, arrow.Int64Traits.CastToBytes(s.i64)...)
		}
		if st != nil {
			st.(*metadata.Int64Statistics).Update(s.i64, int64(nulls))
		}
	case plan.descr.PhysicalType() == parquet.Types.Boolean && st == nil:
		s.page = appendBits(s.page, col, nulls)
	default:
		return fmt.Errorf("no plain encoding of %s as %s", col.DataType(), plan.descr.PhysicalType())
	}
	var es metadata.EncodedStatistics
	if st != nil {
		var err error
		if es, err = st.Encode(); err != nil {
			return err
		}
		es.Signed = plan.descr.SortOrder() == schema.SortSIGNED
	}
	return s.writePage(c, enc, n, es)
}

// writePage compresses the page in s.page, n rows in the given encoding with
// statistics es, into chunk c's buffer.
func (s *plainScratch) writePage(c *chunk, enc parquet.Encoding, n int, es metadata.EncodedStatistics) error {
	if len(s.page) > math.MaxInt32 {
		return fmt.Errorf("page of %d bytes (at most %d)", len(s.page), math.MaxInt32)
	}
	data := s.page
	if c.pager.HasCompressor() {
		s.comp.Reset()
		data = c.pager.Compress(&s.comp, s.page)
	}
	page := file.NewDataPageV1WithConfig(memory.NewBufferBytes(data), parquet.Encodings.RLE, parquet.Encodings.RLE,
		file.DataPageConfig{Num: int32(n), Encoding: enc, UncompressedSize: int32(len(s.page)), Stats: es})
	_, err := c.pager.WriteDataPage(page) // copies the page into the chunk's buffer
	page.Release()
	if err != nil {
		return err
	}
	if es.IsSet() {
		c.meta.SetStats(es)
	}
	return nil
}

// appendDefLevels appends the definition levels of a flat optional column
// as a data page (v1) holds them: their length (4 bytes), then the
// RLE/bit-packed hybrid encoding at bit width 1, where a valid row is 1.
// An Arrow validity bitmap is already that bit-packing, least significant
// bit first.
func appendDefLevels(dst []byte, col arrow.Array, n, nulls int) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	switch nulls {
	case 0: // one RLE run of 1s
		dst = append(binary.AppendUvarint(dst, uint64(n)<<1), 1)
	case n: // one RLE run of 0s
		dst = append(binary.AppendUvarint(dst, uint64(n)<<1), 0)
	default: // one bit-packed run of ceil(n/8) groups of 8 levels
		groups := (n + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		dst = append(dst, col.NullBitmapBytes()[:groups]...)
		if r := n % 8; r != 0 {
			dst[len(dst)-1] &= byte(1)<<r - 1
		}
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// compactInt32 appends the valid values of col, an integer column stored as
// INT32, converted as Parquet stores them (sign- or zero-extended).
func compactInt32(dst []int32, col arrow.Array, nulls int) []int32 {
	raw, bm := col.Data().Buffers()[1].Bytes(), col.NullBitmapBytes()
	n := col.Len()
	switch col.DataType().ID() {
	case arrow.INT8:
		return compact(dst, arrow.Int8Traits.CastFromBytes(raw)[:n], bm, nulls)
	case arrow.UINT8:
		return compact(dst, arrow.Uint8Traits.CastFromBytes(raw)[:n], bm, nulls)
	case arrow.INT16:
		return compact(dst, arrow.Int16Traits.CastFromBytes(raw)[:n], bm, nulls)
	case arrow.UINT16:
		return compact(dst, arrow.Uint16Traits.CastFromBytes(raw)[:n], bm, nulls)
	case arrow.UINT32:
		return compact(dst, arrow.Uint32Traits.CastFromBytes(raw)[:n], bm, nulls)
	}
	return compact(dst, arrow.Int32Traits.CastFromBytes(raw)[:n], bm, nulls)
}

// compactInt64 is compactInt32 for columns stored as INT64.
func compactInt64(dst []int64, col arrow.Array, nulls int) []int64 { // also timestamps
	raw, bm := col.Data().Buffers()[1].Bytes(), col.NullBitmapBytes()
	n := col.Len()
	if col.DataType().ID() == arrow.UINT64 {
		return compact(dst, arrow.Uint64Traits.CastFromBytes(raw)[:n], bm, nulls)
	}
	return compact(dst, arrow.Int64Traits.CastFromBytes(raw)[:n], bm, nulls)
}

// compact appends to dst the values whose bit in the validity bitmap bm is
// set (all of them when nulls is 0), converted to the stored type.
func compact[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64, S int32 | int64](dst []S, vals []T, bm []byte, nulls int) []S {
	// Room for every value, written by index: append's checks were most of
	// the loop.
	at := len(dst)
	dst = slices.Grow(dst, len(vals)-nulls)[:at+len(vals)-nulls]
	out := dst[at:]
	if nulls == 0 {
		for j, v := range vals {
			out[j] = S(v)
		}
		return dst
	}
	j := 0
	for g := 0; g*8 < len(vals) && j < len(out); g++ {
		b, base := bm[g], g*8
		if b == 0xFF && base+8 <= len(vals) && j+8 <= len(out) {
			for k, v := range vals[base : base+8] {
				out[j+k] = S(v)
			}
			j += 8
			continue
		}
		for ; b != 0 && j < len(out); b &= b - 1 {
			if k := base + bits.TrailingZeros8(b); k < len(vals) {
				out[j] = S(vals[k])
				j++
			}
		}
	}
	return dst[:at+j]
}

// appendBits appends the values of the valid rows of col, a boolean column,
// as PLAIN stores booleans: bit-packed, least significant bit first.
func appendBits(dst []byte, col arrow.Array, nulls int) []byte {
	n := col.Len()
	vals := col.Data().Buffers()[1].Bytes()
	if nulls == 0 {
		dst = append(dst, vals[:(n+7)/8]...)
		if r := n % 8; r != 0 {
			dst[len(dst)-1] &= byte(1)<<r - 1
		}
		return dst
	}
	bm := col.NullBitmapBytes()
	var acc byte
	j := 0
	for i := range n {
		if bm[i>>3]>>(i&7)&1 == 0 {
			continue
		}
		acc |= (vals[i>>3] >> (i & 7) & 1) << (j & 7)
		j++
		if j&7 == 0 {
			dst = append(dst, acc)
			acc = 0
		}
	}
	if j&7 != 0 {
		dst = append(dst, acc)
	}
	return dst
}

// Blocks of DELTA_BINARY_PACKED as arrow-go and parquet-mr write them: 128
// values in 4 miniblocks of 32.
const (
	deltaBlock     = 128
	deltaMiniBlock = 32
)

// appendDelta appends vals in DELTA_BINARY_PACKED: a header (block size,
// miniblocks per block, value count, first value), then per block of 128
// deltas its smallest delta and, per miniblock of 32, the deltas less that
// bit-packed at the narrowest width that holds them. Deltas wrap around in
// the values' own width, as readers undo them.
func appendDelta[T int32 | int64](dst []byte, vals []T) []byte {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaBlock/deltaMiniBlock)
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	if len(vals) == 0 {
		return binary.AppendVarint(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(vals[0]))
	mask := ^uint64(0)
	if unsafe.Sizeof(vals[0]) == 4 {
		mask = math.MaxUint32
	}
	var deltas [deltaBlock]uint64
	for start := 1; start < len(vals); start += deltaBlock {
		block := vals[start-1 : min(start+deltaBlock, len(vals))]
		minDelta := block[1] - block[0]
		for i := 2; i < len(block); i++ {
			minDelta = min(minDelta, block[i]-block[i-1])
		}
		for i := 1; i < len(block); i++ {
			deltas[i-1] = uint64(block[i]-block[i-1]-minDelta) & mask
		}
		dst = binary.AppendVarint(dst, int64(minDelta))
		widths := len(dst)
		dst = append(dst, make([]byte, deltaBlock/deltaMiniBlock)...) // unused miniblocks keep width 0
		for m, lo := 0, 0; lo < len(block)-1; m, lo = m+1, lo+deltaMiniBlock {
			mini := deltas[lo:min(lo+deltaMiniBlock, len(block)-1)]
			var or uint64
			for _, d := range mini {
				or |= d
			}
			w := bits.Len64(or)
			dst[widths+m] = byte(w)
			dst = appendPacked(dst, mini, w, deltaMiniBlock)
		}
	}
	return dst
}

// appendPacked appends vals (each below 1<<width) bit-packed, least
// significant bit first, padded with 0s to n values.
func appendPacked(dst []byte, vals []uint64, width, n int) []byte {
	if width == 0 {
		return dst
	}
	var acc uint64 // bits not yet appended, the first at bit 0
	nbits := 0
	put := func(v uint64) {
		acc |= v << nbits
		if nbits+width < 64 {
			nbits += width
		} else {
			dst = binary.LittleEndian.AppendUint64(dst, acc)
			used := 64 - nbits // bits of v that went in
			nbits += width - 64
			acc = 0
			if used < 64 {
				acc = v >> used
			}
		}
	}
	for _, v := range vals {
		put(v)
	}
	for range n - len(vals) {
		put(0)
	}
	for ; nbits > 0; nbits -= 8 {
		dst = append(dst, byte(acc))
		acc >>= 8
	}
	return dst
}

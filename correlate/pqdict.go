package correlate

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// dictScratch writes a column chunk from an Arrow dictionary array of
// strings whose entries are distinct (the packet table's addresses, file
// names, transports, directions and opcode names): the entries as the
// chunk's dictionary page, the indices of the valid rows as one data page.
// arrow-go's column writer, even handed the dictionary, takes the levels as
// an int16 per row and RLE-encodes each index on its own; this packs them
// in one pass, and the chunk's statistics come from the entries used.
type dictScratch struct {
	dict []byte // the dictionary page: PLAIN byte arrays
	used []bool // entries the valid rows use
	seen map[string]struct{}
	vals []parquet.ByteArray // the entries used, for statistics
}

// dictEntries returns the entries of d's dictionary when dictScratch can
// write d: strings, none repeated (a repeated entry would read back as a
// category twice in pandas).
func (s *dictScratch) dictEntries(d *array.Dictionary) (*array.String, bool) {
	entries, ok := d.Dictionary().(*array.String)
	if !ok || entries.Len() == 0 {
		return nil, false
	}
	switch d.Indices().DataType().ID() {
	case arrow.UINT8, arrow.INT8, arrow.UINT16, arrow.INT16, arrow.INT32, arrow.UINT32:
	default:
		return nil, false
	}
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	clear(s.seen)
	for i := range entries.Len() {
		v := entries.Value(i)
		if _, dup := s.seen[v]; dup {
			return nil, false
		}
		s.seen[v] = struct{}{}
	}
	return entries, true
}

// writeDict writes d (offset 0, at least one valid row, entries from
// dictEntries) as chunk c: dictionary page, then data page.
func (p *plainScratch) writeDict(c *chunk, plan *columnPlan, d *array.Dictionary, entries *array.String) error {
	s := &p.dict
	n, nulls := d.Len(), d.NullN()
	// The valid rows' indices, checked and their entries marked.
	p.i32 = compactInt32(p.i32[:0], d.Indices(), nulls)
	m := entries.Len()
	if cap(s.used) < m {
		s.used = make([]bool, m)
	}
	s.used = s.used[:m]
	clear(s.used)
	for _, k := range p.i32 {
		if uint32(k) >= uint32(m) {
			return fmt.Errorf("dictionary index %d out of %d entries", k, m)
		}
		s.used[k] = true
	}
	var es metadata.EncodedStatistics
	if plan.stats {
		s.vals = s.vals[:0]
		for k, u := range s.used {
			if u {
				s.vals = append(s.vals, parquet.ByteArray(entries.Value(k)))
			}
		}
		st := metadata.NewStatistics(plan.descr, memory.DefaultAllocator).(*metadata.ByteArrayStatistics)
		st.Update(s.vals, int64(nulls))
		var err error
		if es, err = st.Encode(); err != nil {
			return err
		}
		es.ApplyStatSizeLimits(int(plan.maxStats))
	}

	s.dict = s.dict[:0]
	for k := range m {
		v := entries.Value(k)
		s.dict = binary.LittleEndian.AppendUint32(s.dict, uint32(len(v)))
		s.dict = append(s.dict, v...)
	}
	dp := file.NewDictionaryPage(memory.NewBufferBytes(s.dict), int32(m), plan.dictPageEnc)
	_, err := c.pager.WriteDictionaryPage(dp) // compresses the page into the chunk's buffer
	dp.Release()
	if err != nil {
		return err
	}

	p.page = p.page[:0]
	if plan.nullable {
		p.page = appendDefLevels(p.page, d, n, nulls)
	}
	width := max(1, bits.Len32(uint32(m-1)))
	p.page = append(p.page, byte(width))
	p.page = appendHybrid(p.page, p.i32, width)
	if err := p.writePage(c, plan.dictIdxEnc, n, es); err != nil {
		return err
	}
	c.hasDict = true
	return nil
}

// minRun is the shortest run of one index written as an RLE run rather
// than among bit-packed ones.
const minRun = 16

// appendHybrid appends vals (each below 1<<width) in Parquet's RLE/bit-packed
// hybrid encoding: runs of one value as RLE runs, the rest bit-packed in
// groups of 8, least significant bit first. A bit-packed run ends only where
// an RLE run starts, or at the end, where its last group is padded with 0s.
func appendHybrid(dst []byte, vals []int32, width int) []byte {
	vbytes := (width + 7) / 8
	lit := 0 // start of the values not yet written, all bit-packed
	for i := 0; i < len(vals); {
		r := 1
		for i+r < len(vals) && vals[i+r] == vals[i] {
			r++
		}
		if r < minRun {
			i += 8 // a group of 8 into the bit-packed run
			continue
		}
		dst = appendBitPacked(dst, vals[lit:i], width)
		dst = binary.AppendUvarint(dst, uint64(r)<<1)
		for b := range vbytes {
			dst = append(dst, byte(uint32(vals[i])>>(8*b)))
		}
		i += r
		lit = i
	}
	return appendBitPacked(dst, vals[lit:], width)
}

// appendBitPacked appends vals as one bit-packed run (nothing when empty),
// the last group padded with 0s.
func appendBitPacked(dst []byte, vals []int32, width int) []byte {
	if len(vals) == 0 {
		return dst
	}
	groups := (len(vals) + 7) / 8
	dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
	switch width { // the widths of two entries (addresses) and of opcodes, byte by byte
	case 1:
		for g := range groups {
			var b byte
			for k, v := range vals[g*8 : min(g*8+8, len(vals))] {
				b |= byte(v&1) << k
			}
			dst = append(dst, b)
		}
		return dst
	case 8:
		for _, v := range vals {
			dst = append(dst, byte(v))
		}
		return append(dst, make([]byte, groups*8-len(vals))...)
	}
	var acc uint64
	nbits := 0
	for _, v := range vals {
		acc |= uint64(uint32(v)) << nbits
		nbits += width
		for nbits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	// Pad to whole groups: groups*width bits in all.
	for pad := (groups*8 - len(vals)) * width; pad > 0; pad -= 8 {
		nbits += min(pad, 8)
		for nbits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nbits -= 8
		}
	}
	if nbits > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

package capfile

import (
	"encoding/binary"

	"github.com/ibscope/ibscope/decode"
)

// A stream reads the plain pcap records of a file read on the caller's
// goroutine (the common case: one capture, one core; or the file of a
// rotated set being read) itself, the record's header and the frame's
// decoding in one call: the general path (Next, advance, read,
// Reader.Next, record, each a call, and the merge of the files) was ~200
// of the ~720 instructions a frame of decode --summary --no-crc took. Any
// record it does not take as it is (the file's end, a record not whole in
// the buffer, a damaged or strange header, pcapng, ERF) is left to the
// general path, unread.

// nextPlain does what advance does for file sf's next records while
// they are plain pcap records or pcapng enhanced packet blocks whole in the
// read buffer, with what record and Reader.Next do for each. It reports whether it settled on a frame to
// hand out; false, it has read nothing more, and advance goes on from there.
func (s *Stream) nextPlain(sf *streamFile) bool {
	if !sf.plain {
		return false
	}
	// sf.cur is &sf.f already: read gave it for every frame before.
	r, f := sf.r, &sf.f
	b := r.br
	for {
		if r.err != nil || s.opts.Stop != nil && s.opts.Stop.Load() {
			return false
		}
		var data []byte
		if !r.isNG {
			rec := b.buf[b.r:b.w]
			if len(rec) < 16 {
				return false
			}
			sec, sub, capLen, wireLen := r.pcapRecordHeader(rec)
			subNs := int64(sub) * r.nsPerTs
			n := 16 + int(capLen)
			if capLen > maxRecordLen || len(rec) < n || wireLen < capLen || subNs >= 1e9 {
				return false // record says why, or reads on
			}
			// Read what is needed before writing f, which the compiler cannot
			// tell apart from the reader's fields.
			frame, offset := r.frames+1, r.offset
			b.r += n
			r.frames, r.offset = frame, offset+int64(n)
			f.Dir = decode.DirectionUnknown
			f.Number, f.Offset = frame, offset
			f.TsNs, f.NoTs = int64(sec)*1e9+subNs, false
			f.CapLen, f.WireLen = int(capLen), int(wireLen)
			data = rec[16:n]
		} else {
			var ok bool
			if data, ok = r.plainBlock(f); !ok {
				return false
			}
		}
		offset := f.Offset
		var err error
		if s.opts.HeadsOnly {
			err = r.dec.DecodeHead(data, f)
		} else {
			err = r.dec.Decode(data, f)
		}
		if err != nil {
			// As advance: counted and told, handed out with Undecoded.
			s.frameFailed(sf, r.decodeError(f, err))
			if !s.opts.Undecoded {
				sf.err = nil
				continue
			}
			if offset > 0 {
				sf.doneB = min(offset, sf.size)
			}
			sf.keyNs, sf.ok = f.TsNs, true
			return true
		}
		s.stats.Frames++
		if offset > 0 {
			sf.doneB = min(offset, sf.size)
		}
		if !s.stampedPlain(sf, f.TsNs) {
			s.stamp(sf, f)
		}
		sf.keyNs = f.TsNs
		if s.opts.Keep != nil && !s.opts.Keep(f) {
			continue
		}
		if sf.err != nil { // a pointer written only when it changes: no write barrier
			sf.err = nil
		}
		sf.ok = true
		return true
	}
}

// stampedPlain counts f's timestamp ts as stamp would, reporting whether
// it could: a time that neither shows a finer resolution nor steps back,
// inlined where stamp's call was a tenth of nextPlain's path.
func (s *Stream) stampedPlain(sf *streamFile, ts int64) bool {
	if s.dataResNs > 1 && ts%s.dataResNs != 0 || sf.started && ts < sf.lastTsNs {
		return false
	}
	s.stamps++
	sf.started, sf.lastTsNs = true, ts
	return true
}

// plainBlock is what recordNG does for a little-endian enhanced packet
// block whole in the buffer, of a known interface, with a timestamp in range
// and a captured length within its original one: it fills f's record fields,
// consumes the block and returns the packet. For any other block it returns
// false, having read nothing: recordNG reads it, and says why when it fails.
// Comparisons are made in uint64: no length in the block overflows them.
func (r *Reader) plainBlock(f *decode.Frame) ([]byte, bool) {
	if r.ngOrder != binary.LittleEndian {
		return nil, false
	}
	b := r.br
	block := b.buf[b.r:b.w]
	if len(block) < 32 || binary.LittleEndian.Uint32(block) != ngBlockEnhancedPacket {
		return nil, false
	}
	n := binary.LittleEndian.Uint32(block[4:])
	if n < 32 || n%4 != 0 || n > ngMaxBlockLen || uint64(len(block)) < uint64(n) {
		return nil, false
	}
	block = block[:n]
	if binary.LittleEndian.Uint32(block[n-4:]) != n {
		return nil, false
	}
	ifIndex := binary.LittleEndian.Uint32(block[8:])
	tsUnits := uint64(binary.LittleEndian.Uint32(block[12:]))<<32 | uint64(binary.LittleEndian.Uint32(block[16:]))
	capLen, wireLen := binary.LittleEndian.Uint32(block[20:]), binary.LittleEndian.Uint32(block[24:])
	if uint64(ifIndex) >= uint64(len(r.ngIfaces)) || uint64(capLen) > uint64(n-32) || wireLen < capLen {
		return nil, false
	}
	ifc := &r.ngIfaces[ifIndex]
	ns, ok := ngTimestampNs(tsUnits, ifc.tsResol, ifc.tsOffsetS)
	if !ok {
		return nil, false
	}
	dir := decode.DirectionUnknown
	if opts := 28 + int(capLen+3)&^3; opts <= int(n)-4 {
		dir = ngDirection(block[opts:n-4], binary.LittleEndian)
	}
	r.frames++
	f.Number, f.Offset = r.frames, r.offset
	f.CapLen, f.WireLen = int(capLen), int(wireLen)
	f.Dir, f.NoTs, f.TsNs = dir, false, ns
	b.r += int(n)
	r.offset += int64(n)
	r.dec.LinkType = ifc.linkType
	return block[28 : 28+capLen], true
}

// nextAhead is nextPlain for a file read ahead with heads: while
// the frames of the batch at hand decoded and have timestamps, it takes
// them from their heads itself, with what advance and readAhead.next do
// for each (the calls of the general path were 8 % of ipd's -j 2 CPU time,
// all of it on the caller's goroutine, which bounds the wall time). Any
// other frame, and the batch's end, is left to the general path.
func (s *Stream) nextAhead(sf *streamFile) bool {
	a := sf.ahead
	if a == nil {
		return false
	}
	for {
		b := a.cur
		if b == nil || a.i >= b.n || b.heads == nil || s.opts.Stop != nil && s.opts.Stop.Load() {
			return false
		}
		h := &b.heads[a.i]
		if h.failed || h.noTs {
			return false
		}
		a.i++
		f := &a.view
		h.put(f)
		f.Number += a.base
		sf.cur = f
		s.stats.Frames++
		if f.Offset > 0 {
			sf.doneB = min(f.Offset, sf.size)
		}
		if !s.stampedPlain(sf, f.TsNs) {
			s.stamp(sf, f)
		}
		sf.keyNs = f.TsNs
		if s.opts.Keep != nil && !s.opts.Keep(f) {
			continue
		}
		if sf.err != nil {
			sf.err = nil
		}
		sf.ok = true
		return true
	}
}

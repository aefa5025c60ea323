package capfile

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/ibscope/ibscope/decode"
)

// Raw ERF files (what ibcap --format erf-raw, Endace's tools and tshark -F
// erf write): ERF records back to back, with no file header. Each record
// is read as a record of a pcap of link type 197 is, so a raw ERF file and
// its erf-pcap twin decode to the same frames.

// ERF record types (ERF types reference): 1 to 27 are packet and meta
// records; 48 is padding, which holds no packet.
const (
	erfTypeMaxKnown = 27
	erfTypePad      = 48
)

// looksLikeERF reports whether the file starts with ERF records: its
// first packet record (after any padding records, which must be whole and
// make sense too) has a known type, a length that covers its headers and
// that the file holds, and a timestamp after 1970 (ERF has no magic
// number: Wireshark guesses from the records too). The file is recognised
// by that first good record alone, so that damage further on is reported
// where it is, after the records before it are read, rather than the
// whole file refused as not a capture. Padding alone is not enough: a
// text file with '0' (type 48) at byte 8 would pass for it.
func looksLikeERF(r *Reader) bool {
	off := 0
	for {
		hdr, _ := r.br.Peek(off + decode.ERFHeaderLen)
		if len(hdr) < off+decode.ERFHeaderLen {
			return false // no packet record, or one cut short, before the end
		}
		h := hdr[off:]
		rlen, ok := erfRecordLen(h)
		if !ok || binary.LittleEndian.Uint64(h)>>32 == 0 {
			return false
		}
		if rec, _ := r.br.Peek(off + rlen); len(rec) < off+rlen {
			return false // cut short, or padding past the read buffer
		}
		if h[8]&0x7F != erfTypePad {
			return true
		}
		off += rlen
	}
}

// erfRecordLen is the length of the record whose header h starts, when its
// type is known and its length at least its headers.
func erfRecordLen(h []byte) (int, bool) {
	typ := h[8] & 0x7F
	if typ == 0 || (typ > erfTypeMaxKnown && typ != erfTypePad) {
		return 0, false
	}
	rlen := int(binary.BigEndian.Uint16(h[10:]))
	least := decode.ERFHeaderLen
	if h[8]&0x80 != 0 {
		least += decode.ERFExtHeaderLen
	}
	if decode.IsERFEthernet(typ) {
		least += 2
	}
	return rlen, rlen >= least
}

// openERF reads a raw ERF file: its frames are ERF records, as in a pcap
// of link type 197; timestamps are binary fractions of a second, read to
// the ns.
func (r *Reader) openERF() (*Reader, error) {
	r.isERF = true
	r.linkType = decode.LinkTypeERF
	r.nsPerTs = 1
	r.dec = decode.Decoder{LinkType: decode.LinkTypeERF, CheckCRC: true}
	return r, nil
}

// recordERF reads the next record, skipping padding records.
func (r *Reader) recordERF(f *decode.Frame) ([]byte, error) {
	f.Dir = decode.DirectionUnknown
	for {
		if r.stopped() {
			return nil, io.EOF
		}
		hdr, err := r.br.Peek(decode.ERFHeaderLen)
		if len(hdr) < decode.ERFHeaderLen {
			if len(hdr) == 0 && (err == nil || err == io.EOF) {
				r.err = io.EOF
				return nil, io.EOF
			}
			return nil, r.fail(headerCut(err, "ERF record header", len(hdr), decode.ERFHeaderLen))
		}
		rlen, ok := erfRecordLen(hdr)
		if !ok {
			return nil, r.fail(fmt.Errorf("ERF record of type %d claims %d bytes, not a known type or shorter than its headers; the file is damaged", hdr[8]&0x7F, binary.BigEndian.Uint16(hdr[10:])))
		}
		rec, err := r.br.Peek(rlen)
		if len(rec) < rlen {
			return nil, r.fail(fmt.Errorf("last ERF record cut short: its header says %d bytes, file has %d (%v)", rlen, len(rec), errOrEOF(err)))
		}
		r.br.Discard(rlen)
		offset := r.offset
		r.offset += int64(rlen)
		if hdr[8]&0x7F == erfTypePad {
			continue
		}
		r.frames++
		f.Number, f.Offset = r.frames, offset
		f.TsNs, f.NoTs = decode.ERFTimeToNs(binary.LittleEndian.Uint64(rec)), false
		// As the pcap record holding it would say: the whole record, and
		// on the wire the part of the packet a snap length cut off too.
		var e decode.ERF
		f.CapLen, f.WireLen = rlen, rlen
		if e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback) == nil {
			f.WireLen += max(int(e.WLen)-len(e.Payload), 0)
		}
		return rec, nil
	}
}

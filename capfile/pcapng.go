package capfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strings"

	"github.com/ibscope/ibscope/decode"
)

// pcapng, read block by block out of the Reader's buffer like classic pcap.
// Each section (a Section Header Block and what follows it up to the next)
// has its own byte order and its own interfaces: `cat a.pcapng b.pcapng` is
// a valid file whose second half numbers its interfaces from 0 again.

// pcapng block types and the section byte-order magic.
const (
	ngBlockSection        = 0x0A0D0D0A
	ngBlockInterface      = 1
	ngBlockPacketObsolete = 2
	ngBlockSimplePacket   = 3
	ngBlockEnhancedPacket = 6
	ngByteOrderMagic      = 0x1A2B3C4D
	ngMaxBlockLen         = maxRecordLen + 64 // a packet block: the record, its header and some options
	ngMaxInterfaces       = 1 << 16           // per section; more means a damaged file
)

// pcapng interface description options used here.
const (
	ngOptEnd      = 0
	ngOptTsResol  = 9
	ngOptTsOffset = 14
)

// ngInterface is what a packet needs from its Interface Description Block.
type ngInterface struct {
	linkType  int
	snapLen   int
	tsResol   uint8  // if_tsresol as stored: high bit set for 2^-n, else 10^-n
	tsOffsetS int64  // if_tsoffset, seconds added to every timestamp
	speedBps  uint64 // if_speed, bits per second; 0 when not said
	name      string // if_name when it is a plain name (ngPortName), else ""
}

// ngDefaultTsResol is if_tsresol when the option is absent: microseconds.
const ngDefaultTsResol = 6

// openNG reads the first section header. The interfaces are read as the
// blocks come, but the first one is looked for now so that LinkType can tell.
func (r *Reader) openNG() (*Reader, error) {
	r.isNG = true
	r.nsPerTs = 1
	if _, _, err := r.ngBlocksToPacket(); err != nil {
		var fe *FileError
		if errors.As(err, &fe) && fe.Offset == 0 {
			return nil, err // not even a section header: not a pcapng file
		}
		r.err = err // reported with the first frame
	}
	r.linkType = decode.LinkTypeEthernet
	if len(r.ngIfaces) > 0 {
		r.linkType = r.ngIfaces[0].linkType
	}
	r.dec = decode.Decoder{LinkType: r.linkType, CheckCRC: true}
	return r, nil
}

// ngBlock returns the whole block at the read position, its type and the
// byte order of its section (a section header sets its own), without
// consuming it. io.EOF means the file ends cleanly before it.
func (r *Reader) ngBlock() (block []byte, typ uint32, order binary.ByteOrder, err error) {
	hdr, perr := r.br.Peek(12)
	if len(hdr) == 0 && (perr == io.EOF || perr == nil) {
		return nil, 0, nil, io.EOF
	}
	if len(hdr) < 12 {
		return nil, 0, nil, r.ngFail(headerCut(perr, "pcapng block header", len(hdr), 12))
	}
	order = r.ngOrder
	if order == nil { // before the first section header: it must come now
		order = binary.LittleEndian
	}
	typ = order.Uint32(hdr)
	if typ == ngBlockSection || r.ngOrder == nil {
		if binary.LittleEndian.Uint32(hdr) != ngBlockSection {
			return nil, 0, nil, r.ngFail(fmt.Errorf("pcapng: no section header block first (block type 0x%08x)", binary.BigEndian.Uint32(hdr)))
		}
		typ = ngBlockSection
		switch {
		case binary.LittleEndian.Uint32(hdr[8:]) == ngByteOrderMagic:
			order = binary.LittleEndian
		case binary.BigEndian.Uint32(hdr[8:]) == ngByteOrderMagic:
			order = binary.BigEndian
		default:
			return nil, 0, nil, r.ngFail(fmt.Errorf("pcapng section header: byte-order magic 0x%08x is neither 0x1a2b3c4d nor its swap", binary.BigEndian.Uint32(hdr[8:])))
		}
	}
	n := order.Uint32(hdr[4:])
	if n < 12 || n%4 != 0 || n > ngMaxBlockLen {
		return nil, 0, nil, r.ngFail(fmt.Errorf("pcapng block of type %d claims %d bytes (not a multiple of 4 from 12 to %d); the file is damaged", typ, n, ngMaxBlockLen))
	}
	block, perr = r.br.Peek(int(n))
	if len(block) < int(n) {
		return nil, 0, nil, r.ngFail(fmt.Errorf("last block cut short: block of type %d says %d bytes, file has %d (%v)", typ, n, len(block), errOrEOF(perr)))
	}
	if trail := order.Uint32(block[n-4:]); trail != n {
		return nil, 0, nil, r.ngFail(fmt.Errorf("pcapng block of type %d: length %d at its start but %d at its end; the file is damaged", typ, n, trail))
	}
	return block, typ, order, nil
}

// ngFail makes a sticky FileError at the current block.
func (r *Reader) ngFail(err error) error {
	r.err = &FileError{Name: r.name, Frame: r.frames + 1, Offset: r.offset, Err: err}
	return r.err
}

// ngConsume moves past a block of n bytes.
func (r *Reader) ngConsume(n int) {
	r.br.Discard(n)
	r.offset += int64(n)
}

// ngBlocksToPacket reads the blocks before the next packet block: section
// headers (a new byte order, a new interface table) and interface
// descriptions; others are skipped. It returns the packet block next (not
// consumed) and its type, io.EOF at the end, or a FileError.
func (r *Reader) ngBlocksToPacket() ([]byte, uint32, error) {
	for {
		if r.stopped() {
			return nil, 0, io.EOF
		}
		block, typ, order, err := r.ngBlock()
		if err != nil {
			return nil, 0, err
		}
		switch typ {
		case ngBlockEnhancedPacket, ngBlockSimplePacket, ngBlockPacketObsolete:
			return block, typ, nil
		case ngBlockSection:
			if len(block) < 28 {
				return nil, 0, r.ngFail(fmt.Errorf("pcapng section header of %d bytes, below the 28 it needs", len(block)))
			}
			if major := order.Uint16(block[12:]); major != 1 {
				return nil, 0, r.ngFail(fmt.Errorf("pcapng section header: version %d.%d, only 1.x is defined", major, order.Uint16(block[14:])))
			}
			r.ngOrder = order
			r.ngIfaces = r.ngIfaces[:0]
			if r.captureHost == "" {
				r.captureHost = ngCaptureHost(block[24:len(block)-4], order)
			}
		case ngBlockInterface:
			if err := r.ngInterface(block, order); err != nil {
				return nil, 0, r.ngFail(err)
			}
		}
		r.ngConsume(len(block))
	}
}

// ngInterface adds the interface a description block describes.
func (r *Reader) ngInterface(block []byte, order binary.ByteOrder) error {
	if len(block) < 20 {
		return fmt.Errorf("pcapng interface description of %d bytes, below the 20 it needs", len(block))
	}
	if len(r.ngIfaces) >= ngMaxInterfaces {
		return fmt.Errorf("pcapng section describes more than %d interfaces; the file is damaged", ngMaxInterfaces)
	}
	ifc := ngInterface{
		linkType: int(order.Uint16(block[8:])),
		snapLen:  int(order.Uint32(block[12:])),
		tsResol:  ngDefaultTsResol,
	}
	opts := block[16 : len(block)-4]
	for len(opts) >= 4 {
		code, n := order.Uint16(opts), int(order.Uint16(opts[2:]))
		if code == ngOptEnd {
			break
		}
		if 4+n > len(opts) {
			return fmt.Errorf("pcapng interface %d: option %d of %d bytes runs past the block", len(r.ngIfaces), code, n)
		}
		val := opts[4 : 4+n]
		switch {
		case code == ngOptTsResol && n >= 1:
			ifc.tsResol = val[0]
		case code == ngOptTsOffset && n >= 8:
			ifc.tsOffsetS = int64(order.Uint64(val))
		case code == NgOptIfSpeed && n >= 8:
			ifc.speedBps = order.Uint64(val)
		case code == NgOptIfName:
			ifc.name = ngPortName(val)
		}
		opts = opts[4+(n+3)&^3:]
	}
	r.ngIfaces = append(r.ngIfaces, ifc)
	return nil
}

// ngPortName is an if_name as a plot or report may print it: 1 to 64
// bytes of printable ASCII ("s1/1", "mlx5_0"), else "".
func ngPortName(v []byte) string {
	v = bytes.TrimRight(v, "\x00")
	if len(v) == 0 || len(v) > 64 {
		return ""
	}
	for _, b := range v {
		if b < 0x20 || b > 0x7e {
			return ""
		}
	}
	return string(v)
}

// ngDirection reads the direction an enhanced packet block's options
// record (epb_flags bits 0-1); options that do not parse say nothing.
func ngDirection(opts []byte, order binary.ByteOrder) decode.Direction {
	for len(opts) >= 4 {
		code, n := order.Uint16(opts), int(order.Uint16(opts[2:]))
		if code == ngOptEnd || 4+n > len(opts) {
			break
		}
		if code == NgOptEPBFlags && n >= 4 {
			if d := decode.Direction(order.Uint32(opts[4:]) & 3); d <= decode.DirectionOutbound {
				return d
			}
			break
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	return decode.DirectionUnknown
}

// ngCaptureHost is the host a section header's options name in a
// "capture host: " comment (NgCaptureHost), "" when none does or the name
// is not one a host can have (letters, digits, '.', '-', '_'; at most 253
// bytes): the name ends up in other files' metadata, so nothing else passes.
func ngCaptureHost(opts []byte, order binary.ByteOrder) string {
	for len(opts) >= 4 {
		code, n := order.Uint16(opts), int(order.Uint16(opts[2:]))
		if code == ngOptEnd || 4+n > len(opts) {
			break
		}
		if v := string(opts[4 : 4+n]); code == NgOptComment && strings.HasPrefix(v, ngCaptureHostPrefix) {
			if host := v[len(ngCaptureHostPrefix):]; validHostName(host) {
				return host
			}
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	return ""
}

// validHostName reports whether s is 1 to 253 bytes of letters, digits,
// '.', '-' and '_'.
func validHostName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (r *Reader) recordNG(f *decode.Frame) ([]byte, error) {
	block, typ, err := r.ngBlocksToPacket()
	if err != nil {
		if err == io.EOF {
			r.err = io.EOF
		}
		return nil, err
	}
	order := r.ngOrder
	var ifIndex int
	var tsUnits uint64
	var capLen, wireLen uint32
	var data []byte
	dir := decode.DirectionUnknown
	hasTs := true
	switch typ {
	case ngBlockEnhancedPacket, ngBlockPacketObsolete:
		if len(block) < 32 {
			return nil, r.ngFail(fmt.Errorf("pcapng packet block of %d bytes, below the 32 it needs", len(block)))
		}
		if typ == ngBlockEnhancedPacket {
			ifIndex = int(order.Uint32(block[8:]))
		} else {
			ifIndex = int(order.Uint16(block[8:]))
		}
		tsUnits = uint64(order.Uint32(block[12:]))<<32 | uint64(order.Uint32(block[16:]))
		capLen, wireLen = order.Uint32(block[20:]), order.Uint32(block[24:])
		if int64(capLen) > int64(len(block)-32) {
			return nil, r.ngFail(fmt.Errorf("pcapng packet block claims %d captured bytes in a %d-byte block; the file is damaged", capLen, len(block)))
		}
		data = block[28 : 28+capLen]
		if opts := 28 + int(capLen+3)&^3; typ == ngBlockEnhancedPacket && opts <= len(block)-4 {
			dir = ngDirection(block[opts:len(block)-4], order)
		}
	case ngBlockSimplePacket:
		if len(block) < 16 {
			return nil, r.ngFail(fmt.Errorf("pcapng simple packet block of %d bytes, below the 16 it needs", len(block)))
		}
		hasTs = false
		wireLen = order.Uint32(block[8:])
		capLen = min(wireLen, uint32(len(block)-16))
		if len(r.ngIfaces) > 0 && r.ngIfaces[0].snapLen > 0 {
			capLen = min(capLen, uint32(r.ngIfaces[0].snapLen))
		}
		data = block[12 : 12+capLen]
	}
	if ifIndex >= len(r.ngIfaces) {
		return nil, r.ngFail(fmt.Errorf("pcapng packet on interface %d, but its section describes %d", ifIndex, len(r.ngIfaces)))
	}
	ifc := &r.ngIfaces[ifIndex]
	r.frames++
	f.Number, f.Offset = r.frames, r.offset
	f.CapLen, f.WireLen = int(capLen), int(wireLen)
	f.Dir = dir
	f.NoTs = !hasTs
	f.TsNs = 0
	r.ngConsume(len(block))
	r.dec.LinkType = ifc.linkType
	if hasTs {
		ns, ok := ngTimestampNs(tsUnits, ifc.tsResol, ifc.tsOffsetS)
		if !ok {
			f.NoTs = true
			return data, &recordError{fmt.Sprintf("timestamp %d in units of %s plus %d s offset is not a time from 1678 to 2262 in ns; frame skipped",
				tsUnits, ngResolName(ifc.tsResol), ifc.tsOffsetS)}
		}
		f.TsNs = ns
	}
	if wireLen < capLen {
		return data, &recordError{fmt.Sprintf("packet block: original length %d below captured length %d; frame skipped", wireLen, capLen)}
	}
	return data, nil
}

// ngTimestampNs converts a timestamp of units of the interface's resolution
// (10^-n or 2^-n s) plus offsetS seconds to ns since the epoch, exactly
// (rounded down below 1 ns) in 128-bit integer arithmetic. ok is false when
// the time does not fit in int64 ns.
func ngTimestampNs(units uint64, resol uint8, offsetS int64) (ns int64, ok bool) {
	var q uint64
	if resol&0x80 != 0 { // 2^-n s: units*1e9 >> n
		n := uint(resol & 0x7f)
		hi, lo := bits.Mul64(units, 1e9)
		switch {
		case n >= 128:
			q = 0
		case n >= 64:
			q = hi >> (n - 64)
		case n == 0:
			if hi != 0 {
				return 0, false
			}
			q = lo
		default:
			if hi>>n != 0 {
				return 0, false
			}
			q = hi<<(64-n) | lo>>n
		}
	} else { // 10^-n s
		n := int(resol)
		switch {
		case n <= 9:
			hi, lo := bits.Mul64(units, pow10[9-n])
			if hi != 0 {
				return 0, false
			}
			q = lo
		case n-9 < len(pow10):
			q = units / pow10[n-9]
		default: // 10^(n-9) > 2^64 > units
			q = 0
		}
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	offHi, offNs := bits.Mul64(uint64(max(offsetS, -offsetS)), 1e9)
	if offsetS == math.MinInt64 || offHi != 0 || offNs > math.MaxInt64 {
		return 0, false
	}
	ns = int64(q)
	if offsetS < 0 {
		return ns - int64(offNs), true // both in range: cannot overflow
	}
	if ns > math.MaxInt64-int64(offNs) {
		return 0, false
	}
	return ns + int64(offNs), true
}

// pow10[i] is 10^i, up to the largest that fits in uint64.
var pow10 = func() []uint64 {
	p := []uint64{1}
	for i := 1; i <= 19; i++ {
		p = append(p, p[i-1]*10)
	}
	return p
}()

func ngResolName(resol uint8) string {
	if resol&0x80 != 0 {
		return fmt.Sprintf("2^-%d s", resol&0x7f)
	}
	return fmt.Sprintf("10^-%d s", resol)
}

package decode

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// fieldKind is how a MAD field's bytes read.
type fieldKind uint8

const (
	kindUint   fieldKind = iota // bits big-endian, at most 64
	kindGID                     // 16 bytes, printed as an IPv6 address
	kindIPv4                    // the last 4 bytes of 16 (an IPv4-mapped GID or address)
	kindBytes                   // raw bytes, printed as hex
	kindString                  // NUL-padded text (NodeDescription, ServiceName)
)

// madField is one field of a management datagram layout: bits
// [bit, bit+bits) of the big-endian bytes starting at off (bit 0 is the
// most significant bit of byte off), or size bytes for the other kinds.
// The layouts are the IBA's (chapters 12-16), named as the spec names the
// fields, in JSON's snake_case; ws is the Wireshark 4.0 field that shows
// the same value ("" where 4.0 has none), which the interop test compares.
type madField struct {
	key  string
	off  int
	bit  uint8
	bits uint8
	kind fieldKind
	size int
	ws   string
}

// end is the byte just past the field.
func (f *madField) end() int {
	if f.kind != kindUint {
		return f.off + f.size
	}
	return f.off + (int(f.bit)+int(f.bits)+7)/8
}

// uintAt reads the field as an unsigned integer from b (the layout's bytes);
// ok is false when b ends before the field.
func (f *madField) uintAt(b []byte) (v uint64, ok bool) {
	end := f.end()
	if end > len(b) || f.kind != kindUint {
		return 0, false
	}
	for _, c := range b[f.off:end] {
		v = v<<8 | uint64(c)
	}
	span := uint(end-f.off) * 8
	v >>= span - uint(f.bit) - uint(f.bits)
	if f.bits < 64 {
		v &= 1<<f.bits - 1
	}
	return v, true
}

// fu is a whole-byte unsigned field of n bytes (n ≤ 8).
func fu(key string, off, n int, ws string) madField {
	return madField{key: key, off: off, bits: uint8(n * 8), ws: ws}
}

// fb is a bit field of bits bits starting bit bits into byte off.
func fb(key string, off int, bit, bits uint8, ws string) madField {
	return madField{key: key, off: off, bit: bit, bits: bits, ws: ws}
}

// fgid is a 16-byte GID.
func fgid(key string, off int, ws string) madField {
	return madField{key: key, off: off, kind: kindGID, size: 16, ws: ws}
}

// fraw is n raw bytes.
func fraw(key string, off, n int, ws string) madField {
	return madField{key: key, off: off, kind: kindBytes, size: n, ws: ws}
}

// fstr is n bytes of NUL-padded text.
func fstr(key string, off, n int, ws string) madField {
	return madField{key: key, off: off, kind: kindString, size: n, ws: ws}
}

// madLayout is one structure of a MAD (a class header, an attribute, a CM
// message): its JSON key and its fields, offsets relative to its start.
type madLayout struct {
	key    string
	fields []madField
}

// appendLayout appends `,"key":{...}` for the fields of l that b holds
// (a capture cut short leaves the rest out); nothing when b holds none.
func appendLayout(dst []byte, l *madLayout, b []byte) []byte {
	n := 0
	for i := range l.fields {
		f := &l.fields[i]
		if f.end() > len(b) {
			continue
		}
		if n == 0 {
			dst = appendKey(dst, l.key)
			dst = append(dst, '{')
		} else {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		dst = appendFieldValue(dst, f, b)
	}
	if n > 0 {
		dst = append(dst, '}')
	}
	return dst
}

// appendFieldValue appends the JSON value of f in b (which holds it).
func appendFieldValue(dst []byte, f *madField, b []byte) []byte {
	switch f.kind {
	case kindGID:
		dst = append(dst, '"')
		dst = netip.AddrFrom16([16]byte(b[f.off : f.off+16])).AppendTo(dst)
		return append(dst, '"')
	case kindIPv4:
		dst = append(dst, '"')
		dst = netip.AddrFrom4([4]byte(b[f.off+12 : f.off+16])).AppendTo(dst)
		return append(dst, '"')
	case kindBytes:
		dst = append(dst, '"')
		for _, c := range b[f.off : f.off+f.size] {
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xF])
		}
		return append(dst, '"')
	case kindString:
		s := b[f.off : f.off+f.size]
		for i, c := range s {
			if c == 0 {
				s = s[:i]
				break
			}
		}
		return appendJSONText(dst, s)
	}
	v, _ := f.uintAt(b)
	return strconv.AppendUint(dst, v, 10)
}

// be16, be24, be32 and be64 read big-endian values at off of b, 0 past its end.
func be16(b []byte, off int) uint16 {
	if off+2 > len(b) {
		return 0
	}
	return binary.BigEndian.Uint16(b[off:])
}

func be24(b []byte, off int) uint32 {
	if off+3 > len(b) {
		return 0
	}
	return uint32(b[off])<<16 | uint32(b[off+1])<<8 | uint32(b[off+2])
}

func be32(b []byte, off int) uint32 {
	if off+4 > len(b) {
		return 0
	}
	return binary.BigEndian.Uint32(b[off:])
}

func be64(b []byte, off int) uint64 {
	if off+8 > len(b) {
		return 0
	}
	return binary.BigEndian.Uint64(b[off:])
}

// byteAt is b[i], 0 past its end.
func byteAt(b []byte, i int) byte {
	if i >= len(b) {
		return 0
	}
	return b[i]
}

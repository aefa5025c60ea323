package decode

import (
	"encoding/binary"
	"hash/crc32"
)

// ICRC covers the invariant part of a transport packet: CRC-32 (the Ethernet
// polynomial) over the packet with the fields that switches and routers may
// change set to all 1s, stored least-significant byte first. The fields are:
//   - native IB: LRH.VL, or the whole LRH when a GRH follows it (checked on
//     real captures: with a GRH every LRH bit counts as variant);
//   - GRH: traffic class, flow label, hop limit;
//   - RoCEv2: an 8-byte all-ones pseudo-LRH, IPv4 TOS, TTL and header
//     checksum (IPv6: traffic class, flow label, hop limit), UDP checksum;
//   - RoCEv1: the all-ones pseudo-LRH, then the GRH as above;
//   - BTH resv8a (the byte holding FECN and BECN).
//
// VCRC covers LRH through ICRC: CRC-16 with polynomial 0x100B, in its
// reflected form 0xD008, seed 0xFFFF and final XOR 0xFFFF, stored
// least-significant byte first. The link packet's LPCRC is the same CRC over
// its first four bytes.

var pseudoLRH = [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// icrcBuf holds the masked prefix of a transport packet (an LRH or the
// pseudo-LRH, an IPv4 header with options or a GRH or IPv6 header, the UDP
// header, the BTH). With carry-less folding (crcfold.go) it takes the first
// bytes of the rest, up to where the rest is whole 16-byte blocks, and the
// rest is folded in place. Otherwise it takes as much of the rest as fits,
// so that the ICRC takes one hash/crc32 pass, or two of at least 64 bytes
// each: hash/crc32 runs its carry-less-multiply code from 64 bytes on and
// is twice as slow per call below (48 bytes cost as much as 180). The
// Decoder keeps one: crc32.Update makes what it is given escape, so a
// buffer on the stack would cost an allocation per packet.
type icrcBuf [icrcBufLen]byte

const (
	icrcBufLen = 256 // the longest prefix (8+60+8+12 = 88 bytes) leaves room for 168
	crcFastMin = 64  // bytes from which crc32.Update takes its fast path
)

// putGRH copies a GRH (or IPv6 header) to b[n:] with its variant fields
// (traffic class, flow label, hop limit) set to 1s, and returns its length.
func (b *icrcBuf) putGRH(n int, grh []byte) int {
	*(*[GRHLen]byte)(b[n:]) = [GRHLen]byte(grh) // a fixed-size copy is a few moves, not a memmove call
	b[n] |= 0x0F                                // traffic class high nibble
	b[n+1], b[n+2], b[n+3] = 0xFF, 0xFF, 0xFF
	b[n+7] = 0xFF // hop limit
	return GRHLen
}

// putBTH copies a BTH to b[n:] with resv8a (the FECN/BECN byte) set to 1s.
func (b *icrcBuf) putBTH(n int, bth []byte) int {
	*(*[BTHLen]byte)(b[n:]) = [BTHLen]byte(bth)
	b[n+4] = 0xFF
	return BTHLen
}

// start returns where the masked prefix of an ICRC message of msgLen bytes
// (pseudo-LRH included) goes in b: 0 for hash/crc32, and for folding as many
// zero bytes in as make the prefix and the rest's first msgLen%16 bytes end
// on a 16-byte boundary.
func (b *icrcBuf) start(msgLen int) int {
	if !useFold {
		return 0
	}
	s := -msgLen & 15
	clear(b[:s])
	return s
}

// finish runs the CRC over b[s:n] (the masked prefix) followed by the packet
// after the BTH up to the ICRC.
func (b *icrcBuf) finish(s, n int, afterBTH []byte) uint32 {
	if useFold {
		// The seed (all 1s) goes into the first four bytes; the zeros in
		// front of them leave the CRC from a zero register as it is.
		r := len(afterBTH) % 16
		copy(b[n:n+r], afterBTH[:r])
		b[s], b[s+1], b[s+2], b[s+3] = ^b[s], ^b[s+1], ^b[s+2], ^b[s+3]
		return ^ieeeReduce(crcFold(&ieeeFold, b[:n+r], afterBTH[r:]))
	}
	return b.crc32(n, afterBTH)
}

// crc32 is finish with hash/crc32, for a prefix at b[:n]: it copies the
// rest into b as far as it fits while leaving any rest at least crcFastMin long.
func (b *icrcBuf) crc32(n int, afterBTH []byte) uint32 {
	k := len(afterBTH)
	if space := len(b) - n; k > space {
		k = min(space, k-crcFastMin)
	}
	copy(b[n:n+k], afterBTH[:k])
	crc := crc32.Update(0, crc32.IEEETable, b[:n+k])
	if k == len(afterBTH) {
		return crc
	}
	return crc32.Update(crc, crc32.IEEETable, afterBTH[k:])
}

func (b *icrcBuf) native(lrhToICRC []byte) uint32 {
	s := b.start(len(lrhToICRC))
	n := s + LRHLen
	copy(b[s:n], lrhToICRC[:LRHLen])
	rest := lrhToICRC[LRHLen:]
	if b[s+1]&3 == LNHGlobal {
		copy(b[s:n], pseudoLRH[:])
		n += b.putGRH(n, rest)
		rest = rest[GRHLen:]
	} else {
		b[s] |= 0xF0 // VL
	}
	n += b.putBTH(n, rest)
	return b.finish(s, n, rest[BTHLen:])
}

func (b *icrcBuf) roceV1(grhToICRC []byte) uint32 {
	s := b.start(LRHLen + len(grhToICRC))
	n := s + copy(b[s:], pseudoLRH[:])
	n += b.putGRH(n, grhToICRC)
	n += b.putBTH(n, grhToICRC[GRHLen:])
	return b.finish(s, n, grhToICRC[GRHLen+BTHLen:])
}

func (b *icrcBuf) roceV2(ip, udpToICRC []byte) uint32 {
	s := b.start(LRHLen + len(ip) + len(udpToICRC))
	*(*[LRHLen]byte)(b[s:]) = pseudoLRH
	n := s + LRHLen
	if ip[0]>>4 == 4 {
		v4 := n
		if len(ip) == 20 {
			*(*[20]byte)(b[n:]) = [20]byte(ip)
			n += 20
		} else {
			n += copy(b[n:n+60], ip)
		}
		b[v4+1] = 0xFF                  // TOS (DSCP and ECN)
		b[v4+8] = 0xFF                  // TTL
		b[v4+10], b[v4+11] = 0xFF, 0xFF // header checksum
	} else {
		n += b.putGRH(n, ip) // the IPv6 header's variant fields sit where the GRH's do
	}
	*(*[8]byte)(b[n:]) = [8]byte(udpToICRC)
	b[n+6], b[n+7] = 0xFF, 0xFF // UDP checksum
	n += 8
	n += b.putBTH(n, udpToICRC[8:])
	return b.finish(s, n, udpToICRC[8+BTHLen:])
}

// roceV2IPv4 is roceV2 for an IPv4 header without options, where the CPU
// folds with PCLMULQDQ and PSHUFB (useFoldIPv4): msg runs from the IP
// header through the byte before the ICRC, at least ipUDPBTHLen bytes.
// icrcIPv4 builds the masked prefix (pseudo-LRH, IP, UDP, BTH: 48 bytes,
// whole blocks) in registers and folds the rest of the packet in place; the
// general path's copies, masks and variable offsets took four times the
// instructions, and building the prefix in a buffer to fold from stalled
// every load of it (see icrcIPv4).
func roceV2IPv4(msg []byte) uint32 {
	_ = msg[ipUDPBTHLen-1]
	return ^icrcIPv4(&ieeeFold, msg)
}

// ipUDPBTHLen is the length of an IPv4 header without options, a UDP
// header and a BTH.
const ipUDPBTHLen = 20 + 8 + BTHLen

// ICRCNative computes the ICRC of a native IB packet given from its LRH
// through the byte before the ICRC.
func ICRCNative(lrhToICRC []byte) uint32 {
	var b icrcBuf
	return b.native(lrhToICRC)
}

// ICRCRoCEv1 computes the ICRC of a RoCEv1 packet given from its GRH through
// the byte before the ICRC.
func ICRCRoCEv1(grhToICRC []byte) uint32 {
	var b icrcBuf
	return b.roceV1(grhToICRC)
}

// ICRCRoCEv2 computes the ICRC of a RoCEv2 packet: ip is the IPv4 or IPv6
// header (with options), udpToICRC the UDP header through the byte before the ICRC.
func ICRCRoCEv2(ip, udpToICRC []byte) uint32 {
	var b icrcBuf
	return b.roceV2(ip, udpToICRC)
}

// vcrcTables are slicing-by-16 tables for the VCRC: vcrcTables[0] is the
// classic byte table; vcrcTables[k][i] is the CRC of byte i followed by k
// zero bytes, so that 16 bytes take 16 independent lookups instead of a chain
// of 16 (about 1.4 times faster than slicing by 8 on 1 KiB packets).
var vcrcTables = makeVCRCTables()

func makeVCRCTables() (t [16][256]uint16) {
	for i := range t[0] {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < len(t); k++ {
		for i := range t[k] {
			p := t[k-1][i]
			t[k][i] = p>>8 ^ t[0][byte(p)]
		}
	}
	return t
}

// VCRC computes the variant CRC (and the link packet's LPCRC) over b.
func VCRC(b []byte) uint16 {
	return vcrcUpdate(0xFFFF, b) ^ 0xFFFF
}

// vcrcTableUpdate runs the VCRC register c over b with the slicing tables.
func vcrcTableUpdate(c uint16, b []byte) uint16 {
	t := &vcrcTables
	for len(b) >= 16 {
		c ^= uint16(b[0]) | uint16(b[1])<<8
		c = t[15][byte(c)] ^ t[14][c>>8] ^ t[13][b[2]] ^ t[12][b[3]] ^
			t[11][b[4]] ^ t[10][b[5]] ^ t[9][b[6]] ^ t[8][b[7]] ^
			t[7][b[8]] ^ t[6][b[9]] ^ t[5][b[10]] ^ t[4][b[11]] ^
			t[3][b[12]] ^ t[2][b[13]] ^ t[1][b[14]] ^ t[0][b[15]]
		b = b[16:]
	}
	if len(b) >= 8 {
		c ^= uint16(b[0]) | uint16(b[1])<<8
		c = t[7][byte(c)] ^ t[6][c>>8] ^ t[5][b[2]] ^ t[4][b[3]] ^
			t[3][b[4]] ^ t[2][b[5]] ^ t[1][b[6]] ^ t[0][b[7]]
		b = b[8:]
	}
	if len(b) >= 4 {
		c ^= uint16(b[0]) | uint16(b[1])<<8
		c = t[3][byte(c)] ^ t[2][c>>8] ^ t[1][b[2]] ^ t[0][b[3]]
		b = b[4:]
	}
	for _, x := range b {
		c = c>>8 ^ t[0][byte(c)^x]
	}
	return c
}

// vcrcTable16 returns the VCRC register, from zero, after 16 bytes given as
// two little-endian words.
func vcrcTable16(lo, hi uint64) uint16 {
	t := &vcrcTables
	c := uint16(lo)
	return t[15][byte(c)] ^ t[14][c>>8] ^ t[13][byte(lo>>16)] ^ t[12][byte(lo>>24)] ^
		t[11][byte(lo>>32)] ^ t[10][byte(lo>>40)] ^ t[9][byte(lo>>48)] ^ t[8][byte(lo>>56)] ^
		t[7][byte(hi)] ^ t[6][byte(hi>>8)] ^ t[5][byte(hi>>16)] ^ t[4][byte(hi>>24)] ^
		t[3][byte(hi>>32)] ^ t[2][byte(hi>>40)] ^ t[1][byte(hi>>48)] ^ t[0][byte(hi>>56)]
}

// SealNative fills in the ICRC and VCRC of a native IB packet built with the
// serializers: pkt runs from the LRH through the VCRC.
func SealNative(pkt []byte) {
	pktLen := int(binary.BigEndian.Uint16(pkt[4:])&0x7FF) * 4
	if pktLen < LRHLen+BTHLen+ICRCLen || pktLen+VCRCLen > len(pkt) {
		return
	}
	if pkt[1]&3 == LNHLocal || pkt[1]&3 == LNHGlobal {
		binary.LittleEndian.PutUint32(pkt[pktLen-ICRCLen:], ICRCNative(pkt[:pktLen-ICRCLen]))
	}
	binary.LittleEndian.PutUint16(pkt[pktLen:], VCRC(pkt[:pktLen]))
}

// crcFields: whether a checked packet's ICRC and VCRC are right (a link
// packet's LPCRC is linkFields'). The summary line says it at its end.
var crcFields = headerFields{
	order: 180,
	has:   CRCsCheck,
	json: func(dst []byte, f *Frame) []byte {
		if f.Has&HasICRC != 0 {
			dst = appendBool(dst, "icrc_ok", f.ICRCOK)
		}
		if f.Has&HasVCRC != 0 && f.Has&HasLink == 0 {
			dst = appendBool(dst, "vcrc_ok", f.VCRCOK)
		}
		return dst
	},
	columns: []ColumnGroup{
		{all: CRCsCheck | HasICRC, Columns: []Column{
			{"icrc_ok", ColumnBool, "ICRC verified correct; null when not checked or absent"},
		}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = b2u(f.ICRCOK) }},
		{all: CRCsCheck | HasVCRC, none: HasLink, Columns: []Column{
			{"vcrc_ok", ColumnBool, "VCRC verified correct; null when not checked or absent"},
		}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = b2u(f.VCRCOK) }},
	},
}

func init() { registerFields(&crcFields) }

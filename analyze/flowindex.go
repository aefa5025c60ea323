package analyze

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net/netip"

	"github.com/ibscope/ibscope/decode"
)

// packedKey is a decode.FlowKey in 40 bytes of plain words, compared and
// hashed in a few instructions (a decode.FlowKey is 64 bytes, its
// addresses compared through their zone handles): the flows and IPD
// analyses keep one per flow and look one up per packet.
//
// The addresses are their 16-byte forms; the last word holds the QP (24
// bits, all a BTH has), the transport, and for IB the two LIDs, for RoCE
// (which has no LIDs) whether each address is an IPv4 one, so that the
// key unpacks to the netip.Addr it was made of (1.2.3.4 and ::ffff:1.2.3.4
// stay apart). decode never makes an address with a zone, nor a RoCE key
// with LIDs.
type packedKey struct {
	src, dst [2]uint64
	rest     uint64 // DestQP | Transport<<24 | (SLID | DLID<<16 for IB, else addrFamily bits)<<32
}

// addrFamily bits say which of a RoCE key's addresses are valid, and IPv4.
const (
	srcValid = 1 << iota
	srcIs4
	dstValid
	dstIs4
)

// sameKey is *a == *b, field by field: == on a decode.FlowKey calls
// memequal for the plain words between its addresses' zone handles.
func sameKey(a, b *decode.FlowKey) bool {
	return a.DestQP == b.DestQP && a.Src == b.Src && a.Dst == b.Dst && a.SLID == b.SLID && a.DLID == b.DLID && a.Transport == b.Transport
}

// packKey packs k.
func packKey(k *decode.FlowKey) packedKey {
	var p packedKey
	var extra uint64
	if k.Transport == decode.TransportIB {
		extra = uint64(k.SLID) | uint64(k.DLID)<<16
	}
	if k.Src.IsValid() {
		p.src = addrWords(k.Src)
		extra |= srcValid
		if k.Src.Is4() {
			extra |= srcIs4
		}
	}
	if k.Dst.IsValid() {
		p.dst = addrWords(k.Dst)
		extra |= dstValid
		if k.Dst.Is4() {
			extra |= dstIs4
		}
	}
	p.rest = uint64(k.DestQP&decode.PSNMask) | uint64(k.Transport)<<24 | extra<<32
	return p
}

func addrWords(a netip.Addr) [2]uint64 {
	b := a.As16()
	return [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}

func wordsAddr(w [2]uint64, is4 bool) netip.Addr {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], w[0])
	binary.LittleEndian.PutUint64(b[8:], w[1])
	a := netip.AddrFrom16(b)
	if is4 {
		return a.Unmap()
	}
	return a
}

// unpack returns the decode.FlowKey p was packed from.
func (p packedKey) unpack() decode.FlowKey {
	k := decode.FlowKey{DestQP: uint32(p.rest) & decode.PSNMask, Transport: decode.Transport(p.rest >> 24)}
	extra := p.rest >> 32
	if k.Transport == decode.TransportIB {
		k.SLID, k.DLID = uint16(extra), uint16(extra>>16)
	}
	if extra&srcValid != 0 && k.Transport != decode.TransportIB {
		k.Src = wordsAddr(p.src, extra&srcIs4 != 0)
	}
	if extra&dstValid != 0 && k.Transport != decode.TransportIB {
		k.Dst = wordsAddr(p.dst, extra&dstIs4 != 0)
	}
	return k
}

// eq is p == *q, word by word (== on the struct calls memequal).
func (p *packedKey) eq(q *packedKey) bool {
	return p.rest == q.rest && p.src == q.src && p.dst == q.dst
}

// pair is the key without its QP: the two ends.
func (p packedKey) pair() packedKey {
	p.rest &^= decode.PSNMask
	return p
}

// reversePair is the key's two ends swapped, without its QP.
func (p packedKey) reversePair() packedKey {
	t := p.rest >> 24 & 0xff
	extra := p.rest >> 32
	if decode.Transport(t) == decode.TransportIB {
		extra = extra>>16 | (extra&0xffff)<<16
	} else {
		extra = (extra&(srcValid|srcIs4))<<2 | (extra>>2)&(srcValid|srcIs4)
	}
	return packedKey{src: p.dst, dst: p.src, rest: t<<24 | extra<<32}
}

// hash mixes the key's words with seed (wyhash's multiply-and-fold): a
// capture cannot choose keys that collide without knowing the seed.
func (p *packedKey) hash(seed uint64) uint64 {
	h := mix(p.src[0]^seed, p.src[1]^0xa0761d6478bd642f)
	h = mix(h^p.dst[0], p.dst[1]^0xe7037ed1a0b428db)
	return mix(h^p.rest, seed^0x8ebc6af09c88c6e3)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// keyChunkBits sets how many keys (and states) a chunk holds: 512, 20 KB
// of keys; a chunk never moves, so pointers into it stay valid.
const (
	keyChunkBits = 9
	keyChunk     = 1 << keyChunkBits
)

// flowIndex numbers keys in the order they were first added and finds a
// key's number: the keys in chunks, and an open-addressing table of
// numbers (4 bytes a slot, at most three quarters full: 5 to 11 bytes a
// key) instead of a Go map, whose slots would hold the 40-byte key again,
// or a hash and a pointer.
type flowIndex struct {
	slots []uint32 // number+1 of the key hashed there, 0 for none; a power of two long
	keys  [][]packedKey
	n     uint32
	seed  uint64
}

func newFlowIndex() flowIndex {
	return flowIndex{slots: make([]uint32, 16), seed: rand.Uint64()}
}

// key returns key number i.
func (x *flowIndex) key(i uint32) *packedKey {
	return &x.keys[i>>keyChunkBits][i&(keyChunk-1)]
}

// find returns k's number, or false.
func (x *flowIndex) find(k *packedKey) (uint32, bool) {
	mask := uint64(len(x.slots) - 1)
	for i := k.hash(x.seed) & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return 0, false
		}
		if x.key(s - 1).eq(k) {
			return s - 1, true
		}
	}
}

// add numbers k, which find did not find, and returns its number.
func (x *flowIndex) add(k *packedKey) uint32 {
	i := x.n
	if i&(keyChunk-1) == 0 {
		x.keys = append(x.keys, make([]packedKey, keyChunk))
	}
	*x.key(i) = *k
	x.n++
	if 4*int(x.n) > 3*len(x.slots) {
		x.grow()
	} else {
		x.place(k, i)
	}
	return i
}

// place puts number i, of key k, in the first free slot from k's.
func (x *flowIndex) place(k *packedKey, i uint32) {
	mask := uint64(len(x.slots) - 1)
	j := k.hash(x.seed) & mask
	for x.slots[j] != 0 {
		j = (j + 1) & mask
	}
	x.slots[j] = i + 1
}

// grow doubles the table and places every key again.
func (x *flowIndex) grow() {
	x.slots = make([]uint32, 2*len(x.slots))
	for i := range x.n {
		x.place(x.key(i), i)
	}
}

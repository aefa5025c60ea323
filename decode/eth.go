package decode

import (
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// extBase is what every extended transport header shares: its kind, the
// opcode it was decoded under (which decides the next header), and its bytes.
// Each header type has its own LayerType, CanDecode and NextLayerType, so that
// a zero value (as gopacket.DecodingLayerParser is given) answers them.
type extBase struct {
	layers.BaseLayer
	kind ext
	// Op is the BTH opcode of the packet; NextLayerType follows its header chain.
	Op Opcode
}

// take checks the length, records contents and payload, and returns the header bytes.
func (e *extBase) take(data []byte, df gopacket.DecodeFeedback) ([]byte, error) {
	n := extLen[e.kind]
	if len(data) < n {
		df.SetTruncated()
		return nil, fmt.Errorf("%s: %d bytes, need %d", extLayerTypes[e.kind], len(data), n)
	}
	e.Contents, e.Payload = data[:n], data[n:]
	return data[:n], nil
}

// put prepends the header's bytes to b.
func (e *extBase) put(b gopacket.SerializeBuffer) ([]byte, error) {
	return b.PrependBytes(extLen[e.kind])
}

type extLayer interface {
	gopacket.DecodingLayer
	gopacket.Layer
}

// newExtLayer returns an empty header of kind e for opcode op.
func newExtLayer(e ext, op Opcode) extLayer {
	return extNew[e](extBase{kind: e, Op: op})
}

// ext is one kind of extended transport header. Each header's file
// declares its kind (a small number no other header has) and registers it
// (registerExt); the opcode table (opcodes.go) says which kinds an opcode
// carries, and the decoder's transport fills the Frame's field of each.
type ext uint8

// extNone ends an opcode's chain of kinds.
const extNone ext = 0

// extHeader is what the decoder knows of one kind of extended transport
// header beside its type's methods, declared in the header's own file.
type extHeader struct {
	name  string // its gopacket layer name, also in error messages
	layer int    // its gopacket layer type number (gopacket keeps 1500-1999 in an array)
	len   int    // its size in bytes
	has   Has    // its Frame presence bit
	new   func(extBase) extLayer
}

// The registered kinds' facts, indexed by kind. Built once as the package
// initializes; an index of a byte into 256 entries needs no bounds check
// in the decoder's loop.
var (
	extLen        [256]int
	hasExt        [256]Has
	extLayerTypes [256]gopacket.LayerType
	extNew        [256]func(extBase) extLayer
	hasTaken      Has // the registered kinds' bits
)

// registerExt records header kind e and registers its gopacket layer type,
// which it returns. Each header's file calls it from the initializer of its
// LayerType variable, so the tables are whole before any init function runs
// or any frame is decoded. A kind or a Has bit given twice is a mistake in
// this package, caught as it initializes.
func registerExt(e ext, h extHeader) gopacket.LayerType {
	switch {
	case e == extNone || extNew[e] != nil:
		panic(fmt.Sprintf("decode: extended header kind %d of %s is taken", e, h.name))
	case h.has == 0 || h.has&(h.has-1) != 0 || hasTaken&h.has != 0:
		panic(fmt.Sprintf("decode: Has bit %#x of %s is not one bit no other kind has", uint32(h.has), h.name))
	}
	hasTaken |= h.has
	extLen[e], hasExt[e], extNew[e] = h.len, h.has, h.new
	extLayerTypes[e] = gopacket.RegisterLayerType(h.layer, gopacket.LayerTypeMetadata{Name: h.name, Decoder: extDecoder(e)})
	return extLayerTypes[e]
}

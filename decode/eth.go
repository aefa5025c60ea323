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
		return nil, fmt.Errorf("%s: %d bytes, need %d", *extLayerTypes[e.kind], len(data), n)
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
	b := extBase{kind: e, Op: op}
	switch e {
	case extRDETH:
		return &RDETH{extBase: b}
	case extDETH:
		return &DETH{extBase: b}
	case extXRCETH:
		return &XRCETH{extBase: b}
	case extRETH:
		return &RETH{extBase: b}
	case extAtomicETH:
		return &AtomicETH{extBase: b}
	case extAETH:
		return &AETH{extBase: b}
	case extAtomicAckETH:
		return &AtomicAckETH{extBase: b}
	case extImmDt:
		return &ImmDt{extBase: b}
	case extIETH:
		return &IETH{extBase: b}
	case extDCHeader:
		return &DCHeader{extBase: b}
	case extDCConnect:
		return &DCConnect{extBase: b}
	case extFETH:
		return &FETH{extBase: b}
	}
	return &CNPReserved{extBase: b}
}

package sim

import (
	"math"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// port is one end of a link: a transmitter with the credit state it keeps
// toward its peer, and a receiver with per-VL buffers it advertises.
type port struct {
	node *node
	num  int // 1-based port number on the node
	name string
	peer *port

	rate      protostate.LinkRate
	lanes     int
	psPerByte float64
	propPs    int64

	busy bool // a frame is on the wire

	// Transmit side, per VL: blocks sent since link init (FCTBS before the
	// mod 4096) and the last credit limit the peer advertised.
	fctbsBlocks []uint32
	fccl        []uint16
	haveFCCL    []bool
	vlRR        int   // next VL to look at first (round-robin VL arbitration)
	inRR        []int // switch: per VL, the next input port to look at first

	// Receive side, per VL: buffer capacity and use in blocks, and blocks
	// received since link init (the ABR the FCCL is built from).
	capBlocks  []int
	usedBlocks []int
	abrBlocks  []uint32
	fifo       [][]*packet // switch: packets waiting in this input buffer

	fcpPending []bool
	fcpAny     bool
	fcpInit    bool // the link-init FCPs have been sent

	xw xmitWait

	eth *ethPort // Ethernet (RoCE) state; nil on InfiniBand links

	// Port counters as perfquery names them.
	xmitBytes, rcvBytes uint64 // data packets, LRH through VCRC
	xmitPkts, rcvPkts   uint64
	taps                []*tapWriter // record what the port sends
	rxTaps              []*tapWriter // record what it receives
}

// serPs is how long bytes take on the wire, in ps.
func (p *port) serPs(bytes int) int64 { return int64(math.Round(float64(bytes) * p.psPerByte)) }

// canSend applies the IBA credit check (7.9.4): a packet of blocks may go if
// it does not take the blocks sent past the credit limit, comparing mod 4096
// within half the space.
func (p *port) canSend(vl uint8, blocks int) bool {
	if !p.haveFCCL[vl] {
		return false
	}
	return (uint32(p.fccl[vl])-(p.fctbsBlocks[vl]+uint32(blocks)))&0xFFF <= 2048
}

// fcclBlocks is the credit limit this receiver advertises for vl: blocks
// received plus free buffer blocks, mod 4096.
func (p *port) fcclBlocks(vl int) uint16 {
	return uint16((p.abrBlocks[vl] + uint32(p.capBlocks[vl]-p.usedBlocks[vl])) & 0xFFF)
}

func (p *port) queueFCP(vl int) {
	p.fcpPending[vl] = true
	p.fcpAny = true
}

// takeFCP builds the flow-control packet for the lowest pending VL.
func (p *port) takeFCP() *packet {
	for vl, pend := range p.fcpPending {
		if !pend {
			continue
		}
		p.fcpPending[vl] = false
		op := uint8(decode.LinkOpNormal)
		if !p.fcpInit {
			op = decode.LinkOpInit
		}
		f := &packet{fcp: true, fcpOp: op, vl: uint8(vl), fctbs: uint16(p.fctbsBlocks[vl] & 0xFFF),
			fccl: p.fcclBlocks(vl), wireBytes: decode.LinkFCPLen, flow: -1}
		p.fcpAny = false
		for _, more := range p.fcpPending {
			p.fcpAny = p.fcpAny || more
		}
		if !p.fcpAny {
			p.fcpInit = true
		}
		return f
	}
	p.fcpAny = false
	return nil
}

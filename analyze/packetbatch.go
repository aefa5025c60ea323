package analyze

import (
	"hash/maphash"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// packetBatch is the Packets of one batch of frames read ahead
// (capfile.StreamOptions.Project): the workers that decode the frames fill
// them, so that what crosses to the Stream's goroutine is 160 bytes a
// packet, in a row, rather than the fields of a 1.7 KB decode.Frame it would
// read there (the flow key alone touches five of its cache lines). The
// Stream takes each packet in the file's order as it would have filled it.
type packetBatch struct {
	packets []Packet
	eth     []EthernetFields   // with StreamOptions.Ethernet (or MACControl)
	cms     []decode.CMMessage // with StreamOptions.CM: of the frames with a MAD
	// mads says which frames had a MAD (with StreamOptions.CM): the
	// others' CM message is zero, which the Stream writes itself rather
	// than copy 88 bytes a packet from the batch (from another core).
	mads []bool
	// prints is the frames' packetPrint in a Linux cooked capture
	// (seentwice.go), taken with seed.
	prints []uint64
	seed   maphash.Seed
	buf    [96]byte
	// keyOnly has the packets filled with what StreamOptions.KeyOnly
	// reads (Packet.fillKey): their frames were decoded only that far.
	keyOnly bool
}

func newPacketBatch(ethernet, cm, keyOnly, linuxCooked bool, seed maphash.Seed) *packetBatch {
	pb := &packetBatch{seed: seed, keyOnly: keyOnly}
	if linuxCooked {
		pb.prints = make([]uint64, 0)
	}
	if ethernet {
		pb.eth = make([]EthernetFields, 0)
	}
	if cm {
		pb.cms, pb.mads = make([]decode.CMMessage, 0), make([]bool, 0)
	}
	return pb
}

// Project fills packet i from frame f, on a worker. A frame that could not
// be decoded is never handed out: it has no packet.
func (pb *packetBatch) Project(i int, f *decode.Frame, err error) {
	if i >= len(pb.packets) {
		pb.grow(i + 1)
	}
	if err != nil {
		return
	}
	if pb.prints != nil && printed(f, true) {
		pb.prints[i] = packetPrint(pb.seed, &pb.buf, f)
	}
	if pb.keyOnly {
		pb.packets[i].fillKey(f, 0)
	} else {
		pb.packets[i].fill(f, 0)
	}
	if pb.eth != nil {
		pb.eth[i].fill(f)
	}
	if pb.cms != nil {
		pb.mads[i] = f.Has&decode.HasMAD != 0
		if pb.mads[i] {
			fillCM(&pb.cms[i], f)
		}
	}
}

// Renumber does nothing (capfile.Projection): the Stream gives each
// packet its frame's number as it takes it (Stream.push), a store where
// the packet is being written, not a pass over the batch.
func (pb *packetBatch) Renumber(int) {}

// grow makes room for n packets, at first for a whole batch of
// capfile's (256 frames): what a batch outgrows is garbage, and the
// collections it brings make every pointer the stream writes cost more
// while they run. A batch keeps its size from then on.
func (pb *packetBatch) grow(n int) {
	n = max(n, 2*len(pb.packets), 256)
	pb.packets = append(pb.packets, make([]Packet, n-len(pb.packets))...)
	if pb.eth != nil {
		pb.eth = append(pb.eth, make([]EthernetFields, n-len(pb.eth))...)
	}
	if pb.cms != nil {
		pb.cms = append(pb.cms, make([]decode.CMMessage, n-len(pb.cms))...)
		pb.mads = append(pb.mads, make([]bool, n-len(pb.mads))...)
	}
	if pb.prints != nil {
		pb.prints = append(pb.prints, make([]uint64, n-len(pb.prints))...)
	}
}

// take copies packet i into p, a slot of the Stream's window, whose
// EthernetFields and CM stay its own.
func (pb *packetBatch) take(i int, p *Packet) {
	eth, cm := p.EthernetFields, p.CM
	*p = pb.packets[i]
	p.EthernetFields, p.CM = eth, cm
	if pb.eth != nil {
		hops := append(eth.IFAHops[:0], pb.eth[i].IFAHops...) // the batch's are reused
		*eth = pb.eth[i]
		eth.IFAHops = hops
	}
	if pb.cms != nil {
		if pb.mads[i] {
			*cm = pb.cms[i]
		} else {
			*cm = decode.CMMessage{}
		}
	}
}

// fillCM sets *m to f's communication management message, none when it
// carries none.
func fillCM(m *decode.CMMessage, f *decode.Frame) {
	*m = decode.CMMessage{}
	if f.Has&decode.HasMAD != 0 {
		*m, _ = f.MAD.CM()
	}
}

var _ capfile.Projection = (*packetBatch)(nil)

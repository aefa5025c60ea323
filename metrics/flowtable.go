package metrics

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// liveFlow is one flow's served counts and the state they follow from. It
// keeps only what the series need, where analyze's flows analysis keeps a
// whole report (opcodes, messages, ACK timing): a third of the memory, and
// what the capture loop touches per packet fits in a few cache lines.
type liveFlow struct {
	hash     uint64
	counts   flowCounts
	lastNs   int64
	epoch    uint32                 // the table's epoch of the flow's latest packet
	sequence protostate.QPSequences // only the request sequence is fed: Retrans and PSNGaps are its
}

// flowCounts are what a flow's series serve; ibanalyze flows counts the
// same (TestLiveCountsAgreeWithFlows).
type flowCounts struct {
	Packets, WireBytes, CNPs, ECNCE, NAKs, Retrans, PSNGaps uint64
}

func (c *flowCounts) add(o *flowCounts) {
	c.Packets += o.Packets
	c.WireBytes += o.WireBytes
	c.CNPs += o.CNPs
	c.ECNCE += o.ECNCE
	c.NAKs += o.NAKs
	c.Retrans += o.Retrans
	c.PSNGaps += o.PSNGaps
}

// flowTable holds the flows of a live capture, found by their key with one
// hash and a probe or two of an open-addressed index: no map, no
// allocation once a flow is in. Past maxFlows flows, the packets of new
// ones are counted together in other, so memory stays bounded whatever
// the traffic.
type flowTable struct {
	seed     uint64
	index    []int32 // place in flows + 1, 0 empty; a power of two, at most half full
	flows    []liveFlow
	names    []decode.FlowKey // flow i's key: written once, before the flow is counted (see names)
	other    liveFlow
	maxFlows int
	last     int32 // the previous packet's flow + 1, 0 for none or other
	// epoch moves on when packets were left out (sampling): a flow's first
	// packet in a new epoch begins its PSN sequence and IPD anew.
	epoch uint32
}

func newFlowTable(maxFlows int) *flowTable {
	return &flowTable{seed: rand.Uint64(), index: make([]int32, 1024), maxFlows: maxFlows}
}

// hashKey mixes the key's fields with the table's random seed (so that
// crafted traffic cannot aim at one probe chain), one 64-bit multiply per
// 8 bytes: far cheaper than maphash.Comparable on a struct holding
// netip.Addrs, which was a sixth of the old analysis.
func (t *flowTable) hashKey(k *decode.FlowKey) uint64 {
	src, dst := k.Src.As16(), k.Dst.As16()
	var fam uint64
	if k.Src.Is4() {
		fam |= 1
	}
	if k.Dst.Is4() {
		fam |= 2
	}
	h := t.seed ^ uint64(k.Transport)<<56 ^ fam<<48 ^ uint64(k.SLID)<<32 ^ uint64(k.DLID)<<16
	h = mix(h, uint64(k.DestQP))
	h = mix(h, binary.LittleEndian.Uint64(src[:8]))
	h = mix(h, binary.LittleEndian.Uint64(src[8:]))
	h = mix(h, binary.LittleEndian.Uint64(dst[:8]))
	return mix(h, binary.LittleEndian.Uint64(dst[8:]))
}

func mix(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v, 0x9e3779b97f4a7c15)
	return hi ^ lo
}

// flow returns k's flow, made on its first packet (other past maxFlows;
// isOther says which).
func (t *flowTable) flow(k *decode.FlowKey) (f *liveFlow, isOther bool) {
	// The previous packet's flow first: a message's packets come in a row.
	// The QP, last in the key, differs first between flows of two hosts.
	if t.last > 0 {
		if n := &t.names[t.last-1]; n.DestQP == k.DestQP && *n == *k {
			return &t.flows[t.last-1], false
		}
	}
	h := t.hashKey(k)
	mask := uint64(len(t.index) - 1)
	i := h & mask
	for j := t.index[i]; j != 0; j = t.index[i] {
		if f := &t.flows[j-1]; f.hash == h && t.names[j-1] == *k {
			t.last = j
			return f, false
		}
		i = (i + 1) & mask
	}
	if len(t.flows) >= t.maxFlows {
		t.last = 0 // the next packet may belong to a kept flow
		return &t.other, true
	}
	t.flows = append(t.flows, liveFlow{hash: h})
	t.names = append(t.names, *k)
	j := int32(len(t.flows))
	t.index[i] = j
	if 2*len(t.flows) > len(t.index) {
		t.grow()
	}
	t.last = j
	return &t.flows[j-1], false
}

// grow doubles the index and places every flow again.
func (t *flowTable) grow() {
	t.index = make([]int32, 2*len(t.index))
	mask := uint64(len(t.index) - 1)
	for n := range t.flows {
		i := t.flows[n].hash & mask
		for t.index[i] != 0 {
			i = (i + 1) & mask
		}
		t.index[i] = int32(n + 1)
	}
}

// add counts one decoded packet of wireBytes on the wire, weight times
// (the sampling rate: 1 when every packet is analysed), and returns the
// time since its flow's latest packet before it: ok is false on a flow's
// first packet, on a packet older than its flow's latest, and for the
// flows past maxFlows (counted together, they have no gaps of their own).
func (t *flowTable) add(fr *decode.Frame, wireBytes int, weight uint64) (gapNs int64, ok bool) {
	// A header the frame lacks reads as zeros, as analyze's Packet.fill
	// reads it, not as what the previous frame left in fr.
	h := packetHeaders{key: fr.FlowKey()}
	if fr.Has&decode.HasBTH != 0 {
		h.op, h.psn = fr.BTH.OpCode, fr.BTH.PSN
	} else {
		h.key.DestQP = 0
	}
	if fr.Has&decode.HasAETH != 0 {
		h.hasAETH, h.syndrome = true, fr.AETH.Syndrome
	}
	if fr.Has&decode.HasRETH != 0 {
		h.dmaLenB = fr.RETH.DMALen
	}
	f, isOther := t.flow(&h.key)
	ts := fr.TsNs
	prevNs, seen := f.lastNs, f.counts.Packets > 0
	if f.epoch != t.epoch {
		f.epoch = t.epoch
		if seen && !isOther {
			f.sequence.Restart()
			seen, prevNs = false, ts
		}
	}
	var idleNs int64 // since the flow's previous packet, for a new PSN sequence
	if seen {
		idleNs = ts - prevNs
	}
	c := &f.counts
	c.Packets += weight
	c.WireBytes += weight * uint64(wireBytes)
	f.lastNs = max(prevNs, ts)
	if fr.ECN == 3 {
		c.ECNCE += weight
	}
	if h.op.IsCNP() {
		c.CNPs += weight
	}
	if !isOther { // many flows together keep no PSN sequence and count no NAKs
		f.countSequence(&h, idleNs, weight)
	}
	if !seen || isOther || ts < prevNs {
		return 0, false
	}
	return ts - prevNs, true
}

// packetHeaders are the fields of a packet's headers the flows count by.
type packetHeaders struct {
	key      decode.FlowKey
	op       decode.Opcode
	psn      uint32
	hasAETH  bool
	syndrome uint8
	dmaLenB  uint32 // the RETH's DMA length
}

// countSequence counts a packet's place in its flow's request sequence
// (retransmissions, PSN gaps) and its NAKs: those of an ACK opcode's AETH
// and, as analyze does, of an RDMA READ response's AETH.
func (f *liveFlow) countSequence(h *packetHeaders, idleNs int64, weight uint64) {
	c := &f.counts
	space := protostate.SpaceOf(h.op, h.syndrome)
	if space == protostate.SpaceRequests {
		switch _, v := f.sequence.Add(h.op, h.psn, h.syndrome, h.dmaLenB, idleNs); v {
		case protostate.PSNDuplicate:
			c.Retrans += weight
		case protostate.PSNGap:
			c.PSNGaps += weight
		}
		return
	}
	if h.op.IsCNP() || !(h.op.IsAck() || (space == protostate.SpaceResponses && h.hasAETH)) {
		return
	}
	aeth := decode.AETH{Syndrome: h.syndrome}
	if k := aeth.Kind(); k == decode.AckKindNAK || k == decode.AckKindRNRNAK {
		c.NAKs += weight
	}
}

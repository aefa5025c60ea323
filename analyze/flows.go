package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// DefaultThroughputBinNs is the throughput series' first bin width; it
// doubles as the capture grows past maxSeriesBins bins.
const DefaultThroughputBinNs = 1000

// pendingAcks bounds the requests with AckReq a flow remembers while it
// waits for the ACKs that cover them.
const pendingAcks = 1024

// FlowStateBytes is about what one flow costs while the capture is read
// (TestFlowsMemoryPerFlow measures 267 for one-packet flows, half of them
// waiting for an ACK; bench/manyqps.sh 263 a QP for the whole process over
// 10 million): its 160-byte state, its 40-byte key, its slot in the key
// table, and for a flow waiting for ACKs its 80-byte timing. Past
// FlowsOptions.MaxFlows distinct flows, the packets of new flows are
// counted together in one flow keyed {"transport": "other"}, so memory
// stays bounded whatever the capture holds.
const FlowStateBytes = 280

// FlowsOptions tunes a flows analysis.
type FlowsOptions struct {
	MaxFlows int // distinct flows kept apart (0: DefaultMaxFlows; checkMaxFlows)
	// NoThroughput keeps no throughput series (FlowHealth.ThroughputGbps
	// empty, PeakGbps 0), for a caller that never reports them: a live
	// capture's metrics would otherwise pay a cache miss a packet and up to
	// 4 KB a flow for them.
	NoThroughput bool
	// LinkGbps is the link's data rate when known: no peak is above it.
	LinkGbps float64
}

// Messages counts a flow's packets by their place in a message, each PSN
// of its sequence once: a packet whose PSN was seen before (a go-back-N
// resend from the NAK'd PSN, an RNR retry, a retried READ's responses) is
// a duplicate in the PSN counts, not a new packet of a message here.
type Messages struct {
	First  uint64 `json:"first"`
	Middle uint64 `json:"middle"`
	Last   uint64 `json:"last"`
	Only   uint64 `json:"only"`
	// Requests counts RDMA READ requests, atomic requests (compare and
	// swap, fetch and add) and FLUSH requests: messages of one packet
	// without payload.
	Requests uint64 `json:"requests"`
	Total    uint64 `json:"total"` // messages begun: First + Only + Requests, each start PSN once
	// Resent counts FIRST, ONLY and request packets whose PSN was seen
	// before: message starts sent again, not in Total.
	Resent uint64 `json:"resent"`
}

// NAKCount is one NAK code and how often it came.
type NAKCount struct {
	Code  uint8  `json:"code"`
	Name  string `json:"name"` // PSN_SEQUENCE_ERROR, INVALID_REQUEST, REMOTE_ACCESS_ERROR, REMOTE_OPERATIONAL_ERROR, ...
	Count uint64 `json:"count"`
}

// RNRCount is one RNR NAK timer value and how often it came.
type RNRCount struct {
	Timer   uint8  `json:"timer"`    // the AETH's 5-bit RNR timer field
	DelayNs int64  `json:"delay_ns"` // the minimum delay it asks for (IBA table 45)
	Count   uint64 `json:"count"`
}

// OpcodeCount is one opcode and its packets.
type OpcodeCount struct {
	Opcode  uint8  `json:"opcode"`
	Name    string `json:"name"`
	Packets uint64 `json:"packets"`
}

// FlowHealth is one flow's result, the per-flow object of `ibanalyze flows --json`.
type FlowHealth struct {
	Key     GroupKey `json:"key"`
	Packets uint64   `json:"packets"`
	// FrameBytes adds the frames' lengths as captured (Packet.FrameBytes);
	// WireBytes what they took on the link (Packet.WireBytes: for RoCE the
	// frame plus FCS, preamble and inter-frame gap, 24 bytes more).
	FrameBytes uint64  `json:"frame_bytes"`
	WireBytes  uint64  `json:"wire_bytes"`
	FirstNs    int64   `json:"first_ns"`
	LastNs     int64   `json:"last_ns"`
	MeanGbps   float64 `json:"mean_gbps"` // wire bytes but the last packet's over first..last, at most the link rate
	// PeakGbps is the highest throughput over PeakWindowPackets
	// consecutive packets of the flow (peakWindow), at most the link rate
	// where it is known.
	PeakGbps float64       `json:"peak_gbps"`
	Messages Messages      `json:"messages"`
	Opcodes  []OpcodeCount `json:"opcodes"`
	// PSN is the sequence of the flow's own requests (SEND, RDMA WRITE,
	// RDMA READ and atomic requests); ResponsePSN that of its responses to
	// the peer's requests (ACKs, atomic ACKs, RDMA READ responses), which
	// carry the peer's PSNs: two sequences, judged apart.
	PSN         protostate.PSNStats `json:"psn"` // counted by protostate.QPSequences, as correlate's retransmissions
	ResponsePSN protostate.PSNStats `json:"response_psn"`
	// Acks counts ACKNOWLEDGE and ATOMIC ACKNOWLEDGE packets whose AETH
	// says ACK; RDMA READ responses also carry an AETH but are not ACKs.
	Acks    uint64     `json:"acks"`
	NAKs    []NAKCount `json:"naks,omitempty"`
	RNRNAKs []RNRCount `json:"rnr_naks,omitempty"`
	CNPs    uint64     `json:"cnps"`
	ECNCE   uint64     `json:"ecn_ce"` // RoCE packets marked Congestion Experienced
	FECN    uint64     `json:"fecn"`
	BECN    uint64     `json:"becn"`
	ICRCBad uint64     `json:"icrc_bad"`
	VCRCBad uint64     `json:"vcrc_bad"`
	Late    uint64     `json:"late,omitempty"` // packets out of order beyond the reorder window
	// AckLatencyNs: from a request with AckReq to the first ACK (or PSN
	// sequence NAK) on the reverse flow that covers its PSN; absent when
	// none could be matched.
	AckLatencyNs *IPDStats `json:"ack_latency_ns,omitempty"`
	// AckPeer is the flow whose ACKs answered this one's requests.
	AckPeer *GroupKey `json:"ack_peer,omitempty"`
	// Connection names the CM connection whose REQ or REP named this
	// flow's QP (flowscm.go); absent without one.
	Connection *FlowConnection `json:"connection,omitempty"`
	// ThroughputGbps is the flow's wire throughput per bin of the result's
	// ThroughputBinNs, from the result's FirstNs.
	ThroughputGbps []float64 `json:"throughput_gbps"`
}

// flowState is one flow while the capture is read. It is kept small (see
// FlowStateBytes): what most flows never need (NAKs, congestion marks, CRC
// failures, ACK timing) lives in parts made on first use. id, and the key
// it numbers, never change once it is made (FlowsReport.Key reads them
// unlocked).
//
// Its key is in FlowsAnalysis.index, under id; its message counts are its
// opcode counts less the resent packets (flowMarks.resent); its first
// opcode's count is its packets less those of the others (opcodeMix).
type flowState struct {
	packets    uint64
	frameBytes uint64
	wireBytes  uint64
	firstNs    int64
	lastNs     int64
	acks       uint64
	psn        protostate.QPSequences
	peak       peakWindow
	thr        rateSeries
	opcodes    opcodeMix
	marks      *flowMarks // made on the first NAK, CNP, mark or resent packet
	timing     *ackTiming // made on the first request with AckReq or ACK
	id         uint32     // the number of its key in FlowsAnalysis.index; otherFlow for the flows beyond the limit
	op0        decode.Opcode
	// lastWire is the wire bytes of its latest packet (at lastNs), at most
	// 65,535 (no IB or RoCE packet is larger), which the mean rate leaves
	// out; in the padding after op0.
	lastWire uint16
}

// otherFlow is the id of the flow of the flows beyond the limit: no PSN
// sequence, no ACK matching.
const otherFlow = ^uint32(0)

// msgKind is a packet's place in a message (Messages), by its opcode.
type msgKind uint8

const (
	msgNone msgKind = iota
	msgFirst
	msgMiddle
	msgLast
	msgOnly
	msgRequest
	msgKinds
)

func msgKindOf(op decode.Opcode) msgKind {
	switch {
	case decode.IsReadRequest(op) || decode.IsAtomicRequest(op) || decode.IsFlush(op):
		return msgRequest
	case op.IsFirst() && op.IsLast():
		return msgOnly
	case op.IsFirst():
		return msgFirst
	case op.IsLast():
		return msgLast
	case op.IsData():
		return msgMiddle
	}
	return msgNone
}

// messages counts a flow's packets by their place in a message: each
// opcode's packets, less those whose PSN their sequence saw before (they
// begin or continue no message of their own).
func (f *flowState) messages() Messages {
	var n [msgKinds]uint64
	f.eachOpcode(func(op decode.Opcode, c uint64) { n[msgKindOf(op)] += c })
	var m Messages
	if f.marks != nil {
		r := &f.marks.resent
		for k := range n {
			n[k] -= r[k]
		}
		m.Resent = r[msgFirst] + r[msgOnly] + r[msgRequest]
	}
	m.First, m.Middle, m.Last, m.Only, m.Requests = n[msgFirst], n[msgMiddle], n[msgLast], n[msgOnly], n[msgRequest]
	m.Total = m.First + m.Only + m.Requests
	return m
}

// flowMarks are a flow's NAKs, congestion marks, failures and resent
// packets.
type flowMarks struct {
	naks    []nakCount
	cnps    uint64
	ecnCE   uint64
	fecn    uint64
	becn    uint64
	icrcBad uint64
	vcrcBad uint64
	late    uint64
	resent  [msgKinds]uint64 // packets whose PSN was seen before, by their place in a message
}

// nakCount is one NAK (or RNR NAK) value and how often it came.
type nakCount struct {
	n     uint64
	value uint8 // the AETH's 5-bit value: NAK code or RNR timer
	rnr   bool
}

func (m *flowMarks) addNAK(value uint8, rnr bool) {
	for i := range m.naks {
		if m.naks[i].value == value && m.naks[i].rnr == rnr {
			m.naks[i].n++
			return
		}
	}
	m.naks = append(m.naks, nakCount{n: 1, value: value, rnr: rnr})
}

// ackTiming matches a flow's requests with the ACKs that answer them.
type ackTiming struct {
	// Requests with AckReq waiting for their ACK: a ring that grows with
	// the requests outstanding, up to pendingAcks (then the oldest go).
	waitReqs []waitingReq
	waitHead int32
	waitN    int32
	ackLat   *sketch    // made on the first ACK matched
	peer     *flowState // the request flow this flow's ACKs answer
	answered *flowState // the flow whose ACKs answer this flow's requests
	samePair *flowState // the next flow waiting for ACKs whose pair has the same hash (FlowsAnalysis.byPair)
}

func (f *flowState) mk() *flowMarks {
	if f.marks == nil {
		f.marks = new(flowMarks)
	}
	return f.marks
}

func (f *flowState) tm() *ackTiming {
	if f.timing == nil {
		f.timing = new(ackTiming)
	}
	return f.timing
}

// opcodeMix counts a flow's packets per opcode other than its first
// packet's (flowState.op0, whose count is the flow's packets less these):
// most flows use one opcode and keep no list; the others a handful, a
// short list searched costs less than a 256-entry table and no more time.
type opcodeMix struct {
	more *[]opCount
}

type opCount struct {
	n  uint64
	op decode.Opcode
}

// addOpcode counts op, f.packets already counting its packet.
func (f *flowState) addOpcode(op decode.Opcode) {
	if f.packets == 1 {
		f.op0 = op
		return
	}
	if op == f.op0 {
		return
	}
	m := &f.opcodes
	if m.more == nil {
		m.more = &[]opCount{{n: 1, op: op}}
		return
	}
	more := *m.more
	for i := range more {
		if more[i].op == op {
			more[i].n++
			return
		}
	}
	*m.more = append(more, opCount{n: 1, op: op})
}

// eachOpcode calls fn with each opcode of the flow and its packets.
func (f *flowState) eachOpcode(fn func(op decode.Opcode, n uint64)) {
	if f.packets == 0 {
		return
	}
	n0 := f.packets
	if f.opcodes.more != nil {
		for _, c := range *f.opcodes.more {
			fn(c.op, c.n)
			n0 -= c.n
		}
	}
	fn(f.op0, n0)
}

// opcodeCounts returns the mix in opcode order.
func (f *flowState) opcodeCounts() []OpcodeCount {
	out := []OpcodeCount{}
	f.eachOpcode(func(op decode.Opcode, n uint64) {
		out = append(out, OpcodeCount{Opcode: uint8(op), Name: op.String(), Packets: n})
	})
	slices.SortFunc(out, func(a, b OpcodeCount) int { return cmp.Compare(a.Opcode, b.Opcode) })
	return out
}

type waitingReq struct {
	psn  uint32
	tsNs int64
}

// FlowsAnalysis accumulates per-flow health from a packet stream. The
// flows' keys are numbered in index, their states kept in chunks of the
// same numbering: no pointer, map slot or list entry a flow besides.
type FlowsAnalysis struct {
	index    flowIndex
	states   [][]flowState         // by key number, keyChunk a chunk
	byPair   map[uint64]*flowState // flows waiting for ACKs, by hash of (source, destination), chained by ackTiming.samePair
	maxFlows int
	noThr    bool          // FlowsOptions.NoThroughput
	linkGbps float64       // FlowsOptions.LinkGbps
	other    *flowState    // packets of flows beyond maxFlows
	recent   [2]recentFlow // the last two flows looked up, recent[mru] the latest
	mru      uint8
	firstNs  int64
	started  bool
	conns    flowConns // flowscm.go
}

// NewFlowsAnalysis returns an empty analysis.
func NewFlowsAnalysis(opts FlowsOptions) *FlowsAnalysis {
	if opts.MaxFlows <= 0 {
		opts.MaxFlows = DefaultMaxFlows
	}
	return &FlowsAnalysis{index: newFlowIndex(), byPair: make(map[uint64]*flowState), maxFlows: opts.MaxFlows,
		noThr: opts.NoThroughput, linkGbps: opts.LinkGbps}
}

// recentFlow is a flow looked up lately, by its key as packets carry it.
type recentFlow struct {
	key decode.FlowKey
	f   *flowState
}

// state returns flow number i.
func (a *FlowsAnalysis) state(i uint32) *flowState {
	return &a.states[i>>keyChunkBits][i&(keyChunk-1)]
}

// key returns f's key.
func (a *FlowsAnalysis) key(f *flowState) packedKey { return *a.index.key(f.id) }

// pairOf is a key's two ends without the QP.
func pairOf(k decode.FlowKey) decode.FlowKey {
	k.DestQP = 0
	return k
}

// reversePair is a key's two ends swapped, without the QP.
func reversePair(k decode.FlowKey) decode.FlowKey {
	return decode.FlowKey{Transport: k.Transport, SLID: k.DLID, DLID: k.SLID, Src: k.Dst, Dst: k.Src}
}

// flow returns the state of p's flow, made on its first packet (or the
// "other" flow past the limit).
//
// The last two flows are kept at hand: a request flow and the ACKs that
// answer it take turns in most captures, and each turn would otherwise
// pack a key and probe the index.
func (a *FlowsAnalysis) flow(p *Packet) *flowState {
	if r := &a.recent[a.mru]; r.f != nil && sameKey(&p.Key, &r.key) {
		return r.f
	}
	if r := &a.recent[a.mru^1]; r.f != nil && sameKey(&p.Key, &r.key) {
		a.mru ^= 1
		return r.f
	}
	k := packKey(&p.Key)
	i, ok := a.index.find(&k)
	if !ok {
		if int(a.index.n) >= a.maxFlows {
			if a.other == nil {
				a.other = &flowState{firstNs: p.TsNs, id: otherFlow}
			}
			return a.other // not cached as last: the next packet may belong to a kept flow
		}
		i = a.index.add(&k)
		if i&(keyChunk-1) == 0 {
			a.states = append(a.states, make([]flowState, keyChunk))
		}
		*a.state(i) = flowState{id: i, firstNs: p.TsNs}
	}
	f := a.state(i)
	a.mru ^= 1 // the older of the two makes room
	a.recent[a.mru] = recentFlow{p.Key, f}
	return f
}

// Add counts one packet.
func (a *FlowsAnalysis) Add(p *Packet) {
	if p.CM != nil && p.CM.Message != 0 { // flowscm.go
		a.restartFor(p)
	}
	a.count(a.flow(p), p)
}

// count adds packet p to its flow f.
func (a *FlowsAnalysis) count(f *flowState, p *Packet) {
	if !a.started {
		a.started, a.firstNs = true, p.TsNs
	}
	var idleNs int64 // since the flow's (QP direction's) previous packet, for a new PSN sequence
	if f.packets > 0 {
		idleNs = p.TsNs - f.lastNs
	}
	f.packets++
	f.frameBytes += uint64(p.FrameBytes)
	f.wireBytes += uint64(p.WireBytes)
	f.firstNs = min(f.firstNs, p.TsNs)
	prevNs := f.lastNs
	f.lastNs = max(f.lastNs, p.TsNs)
	if p.TsNs >= prevNs || f.packets == 1 {
		f.lastWire = uint16(min(max(p.WireBytes, 0), math.MaxUint16))
	}
	if !a.noThr {
		f.thr.add(max((p.TsNs-a.firstNs)/DefaultThroughputBinNs, 0), uint64(p.WireBytes), f.wireBytes-uint64(p.WireBytes))
		if !p.Late {
			f.peak.add(p.TsNs, prevNs, uint32(p.WireBytes))
		}
	}
	op := p.OpCode
	isAck, isCNP := op.IsAck(), op.IsCNP() // asked once: each is a table lookup and tests
	f.addOpcode(op)
	if p.Late || p.ECN == 3 || p.FECN || p.BECN || p.ICRCBad || p.VCRCBad || isCNP {
		m := f.mk()
		m.late += b2u(p.Late)
		m.ecnCE += b2u(p.ECN == 3)
		m.fecn += b2u(p.FECN)
		m.becn += b2u(p.BECN)
		m.icrcBad += b2u(p.ICRCBad)
		m.vcrcBad += b2u(p.VCRCBad)
		m.cnps += b2u(isCNP)
	}
	if f.id == otherFlow {
		if aeth := (decode.AETH{Syndrome: p.Syndrome}); isAck && p.HasAETH && aeth.Kind() == decode.AckKindACK {
			f.acks++
		}
		return // many flows together keep no PSN sequence and answer no requests
	}
	sp, verdict := protostate.SpaceNone, protostate.PSNNone
	if !isAck || p.HasAETH { // an ACK cut before its AETH may be a NAK
		sp, verdict = f.psn.Add(op, p.PSN, p.Syndrome, p.DMALenB, idleNs)
	}
	if verdict == protostate.PSNDuplicate {
		f.mk().resent[msgKindOf(op)]++
	}
	switch { // sp is SpaceOf(op, p.Syndrome) but for ACKs, which need no space
	case isCNP:
	case isAck:
		a.ack(f, p, true)
	case sp == protostate.SpaceResponses: // RDMA READ responses: their AETH acknowledges too
		if p.HasAETH {
			a.ack(f, p, false)
		}
	case sp == protostate.SpaceRequests:
		if p.AckReq {
			a.wait(f, p.PSN, p.TsNs)
		}
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// wait remembers a request that asked for an ACK; the flow joins the
// candidates its reverse flows' ACKs are matched with.
func (a *FlowsAnalysis) wait(f *flowState, psn uint32, tsNs int64) {
	t := f.tm()
	if t.waitReqs == nil {
		pair := a.key(f).pair()
		h := pair.hash(a.index.seed)
		t.samePair, a.byPair[h] = a.byPair[h], f
	}
	t.wait(psn, tsNs)
}

// ringMask turns a position into an index of the ring, whose length is a
// power of two (it starts at one and doubles up to pendingAcks): a mask,
// where a remainder would be a division a request and an ACK.
func (t *ackTiming) ringMask() int32 { return int32(len(t.waitReqs)) - 1 }

// wait adds a request to the ring.
func (t *ackTiming) wait(psn uint32, tsNs int64) {
	if int(t.waitN) == len(t.waitReqs) {
		if len(t.waitReqs) < pendingAcks {
			// Grow the ring (unrolled so the oldest comes first).
			grown := make([]waitingReq, max(1, 2*len(t.waitReqs)))
			for k := range t.waitN {
				grown[k] = t.waitReqs[(t.waitHead+k)&t.ringMask()]
			}
			t.waitReqs, t.waitHead = grown, 0
		} else {
			t.waitHead = (t.waitHead + 1) & t.ringMask()
			t.waitN--
		}
	}
	i := (t.waitHead + t.waitN) & t.ringMask()
	t.waitReqs[i] = waitingReq{psn, tsNs}
	t.waitN++
}

// covered counts the waiting requests an ACK of ackPSN covers (PSNs up to
// it, or before it for a NAK), without removing them.
func (t *ackTiming) covered(ackPSN uint32, inclusive bool) int32 {
	var n int32
	for ; n < t.waitN; n++ {
		d := decode.PSNDiff(ackPSN, t.waitReqs[(t.waitHead+n)&t.ringMask()].psn)
		if d < 0 || (d == 0 && !inclusive) {
			break
		}
	}
	return n
}

// ack counts an AETH-bearing packet on flow f (as an ACK when isAck: an
// RDMA READ response is not one) and times the requests it covers.
func (a *FlowsAnalysis) ack(f *flowState, p *Packet, isAck bool) {
	aeth := decode.AETH{Syndrome: p.Syndrome}
	inclusive := true
	switch aeth.Kind() {
	case decode.AckKindACK:
		if isAck {
			f.acks++
		}
	case decode.AckKindRNRNAK:
		f.mk().addNAK(aeth.Value(), true)
		return
	case decode.AckKindNAK:
		f.mk().addNAK(aeth.Value(), false)
		if aeth.Value() != decode.NAKPSNSequenceError {
			return
		}
		inclusive = false // a sequence NAK at PSN n acknowledges what came before n
	default:
		return
	}
	var req *flowState
	if f.timing != nil {
		req = f.timing.peer
	}
	if req == nil {
		req = a.findRequester(f, p.PSN, inclusive)
		if req == nil {
			return
		}
	}
	t := req.timing
	n := t.covered(p.PSN, inclusive)
	for range n {
		if lat := p.TsNs - t.waitReqs[t.waitHead].tsNs; lat >= 0 {
			if t.ackLat == nil {
				t.ackLat = new(sketch)
			}
			t.ackLat.Add(lat)
		}
		t.waitHead = (t.waitHead + 1) & t.ringMask()
		t.waitN--
	}
}

// findRequester binds an ACK flow to the request flow it answers: among
// the flows in the opposite direction, the one alone with requests this ACK
// covers. The BTH names no source QP, so this is how the pair is learnt.
func (a *FlowsAnalysis) findRequester(ackFlow *flowState, psn uint32, inclusive bool) *flowState {
	var found *flowState
	rev := a.key(ackFlow).reversePair()
	for c := a.byPair[rev.hash(a.index.seed)]; c != nil; c = c.timing.samePair {
		t := c.timing
		if a.key(c).pair() != rev || t.answered != nil || t.waitN == 0 || t.covered(psn, inclusive) == 0 {
			continue
		}
		if found != nil {
			return nil // ambiguous: wait for an ACK only one flow explains
		}
		found = c
	}
	if found != nil {
		ackFlow.tm().peer, found.timing.answered = found, ackFlow
	}
	return found
}

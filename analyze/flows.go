package analyze

import (
	"cmp"
	"errors"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// DefaultThroughputBinNs is the throughput series' first bin width; it
// doubles as the capture grows past maxSeriesBins bins.
const DefaultThroughputBinNs = 1000

// pendingAcks bounds the requests with AckReq a flow remembers while it
// waits for the ACKs that cover them.
const pendingAcks = 1024

// Messages counts packets by their place in a message.
type Messages struct {
	First  uint64 `json:"first"`
	Middle uint64 `json:"middle"`
	Last   uint64 `json:"last"`
	Only   uint64 `json:"only"`
	Total  uint64 `json:"total"` // messages begun: First + Only
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

// PSNStats are one PSN sequence's anomalies; the tracker that counts them
// (decode.QPSequences) also serves correlate's retransmission count.
type PSNStats = decode.PSNStats

// FlowHealth is one flow's result, the per-flow object of `ibanalyze flows --json`.
type FlowHealth struct {
	Key     KeyJSON `json:"key"`
	Packets uint64  `json:"packets"`
	// FrameBytes adds the frames' lengths as captured (Packet.FrameBytes);
	// WireBytes what they took on the link (Packet.WireBytes: for RoCE the
	// frame plus FCS, preamble and inter-frame gap, 24 bytes more).
	FrameBytes uint64        `json:"frame_bytes"`
	WireBytes  uint64        `json:"wire_bytes"`
	FirstNs    int64         `json:"first_ns"`
	LastNs     int64         `json:"last_ns"`
	MeanGbps   float64       `json:"mean_gbps"` // wire bytes over first..last
	PeakGbps   float64       `json:"peak_gbps"` // busiest throughput bin
	Messages   Messages      `json:"messages"`
	Opcodes    []OpcodeCount `json:"opcodes"`
	// PSN is the sequence of the flow's own requests (SEND, RDMA WRITE,
	// RDMA READ and atomic requests); ResponsePSN that of its responses to
	// the peer's requests (ACKs, atomic ACKs, RDMA READ responses), which
	// carry the peer's PSNs: two sequences, judged apart.
	PSN         PSNStats `json:"psn"`
	ResponsePSN PSNStats `json:"response_psn"`
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
	AckPeer *KeyJSON `json:"ack_peer,omitempty"`
	// ThroughputGbps is the flow's wire throughput per bin of the result's
	// ThroughputBinNs, from the result's FirstNs.
	ThroughputGbps []float64 `json:"throughput_gbps"`
}

// FlowsResult is the `ibanalyze flows --json` document.
type FlowsResult struct {
	Flows           []*FlowHealth `json:"flows"`
	FirstNs         int64         `json:"first_ns"`          // first packet of the capture
	ThroughputBinNs int64         `json:"throughput_bin_ns"` // width of each ThroughputGbps bin
	Input           InputJSON     `json:"input"`
}

// ErrNoPackets is returned when the input held no IB or RoCE transport packet.
var ErrNoPackets = errors.New("no IB or RoCE transport packets")

type flowState struct {
	key        decode.FlowKey
	packets    uint64
	frameBytes uint64
	wireBytes  uint64
	firstNs    int64
	lastNs     int64
	opcodes    opcodeMix
	msgs       Messages
	psn        decode.QPSequences
	acks       uint64
	naks       [32]uint64
	rnr        [32]uint64
	cnps       uint64
	ecnCE      uint64
	fecn       uint64
	becn       uint64
	icrcBad    uint64
	vcrcBad    uint64
	late       uint64
	thr        rateSeries

	// Requests with AckReq waiting for their ACK: a ring that grows with
	// the requests outstanding, up to pendingAcks (then the oldest go).
	waitReqs []waitingReq
	waitHead int
	waitN    int
	ackLat   Sketch
	peer     *flowState // the request flow this flow's ACKs answer
	answered *flowState // the flow whose ACKs answer this flow's requests
}

// opcodeMix counts packets per opcode. A flow uses a handful of opcodes,
// so a short list searched from the last hit costs less memory than a
// 256-entry table and no more time.
type opcodeMix struct {
	ops    []decode.Opcode
	counts []uint64
	last   int
}

func (m *opcodeMix) add(op decode.Opcode) {
	if m.last < len(m.ops) && m.ops[m.last] == op {
		m.counts[m.last]++
		return
	}
	for i, o := range m.ops {
		if o == op {
			m.counts[i]++
			m.last = i
			return
		}
	}
	m.ops = append(m.ops, op)
	m.counts = append(m.counts, 1)
	m.last = len(m.ops) - 1
}

// result returns the mix in opcode order.
func (m *opcodeMix) result() []OpcodeCount {
	out := make([]OpcodeCount, len(m.ops))
	for i, op := range m.ops {
		out[i] = OpcodeCount{Opcode: uint8(op), Name: op.String(), Packets: m.counts[i]}
	}
	slices.SortFunc(out, func(a, b OpcodeCount) int { return cmp.Compare(a.Opcode, b.Opcode) })
	return out
}

type waitingReq struct {
	psn  uint32
	tsNs int64
}

// FlowsAnalysis accumulates per-flow health from a packet stream.
type FlowsAnalysis struct {
	index   map[decode.FlowKey]*flowState
	order   []*flowState
	byPair  map[decode.FlowKey][]*flowState // flows by (source, destination), DestQP left 0
	lastKey decode.FlowKey
	last    *flowState
	firstNs int64
	started bool
}

// NewFlowsAnalysis returns an empty analysis.
func NewFlowsAnalysis() *FlowsAnalysis {
	return &FlowsAnalysis{index: make(map[decode.FlowKey]*flowState), byPair: make(map[decode.FlowKey][]*flowState)}
}

func pairOf(k decode.FlowKey) decode.FlowKey {
	k.DestQP = 0
	return k
}

func reversePair(k decode.FlowKey) decode.FlowKey {
	return decode.FlowKey{Transport: k.Transport, SLID: k.DLID, DLID: k.SLID, Src: k.Dst, Dst: k.Src}
}

// Add counts one packet.
func (a *FlowsAnalysis) Add(p *Packet) {
	if !a.started {
		a.started, a.firstNs = true, p.TsNs
	}
	f := a.last
	if f == nil || p.Key != a.lastKey {
		f = a.index[p.Key]
		if f == nil {
			f = &flowState{key: p.Key, firstNs: p.TsNs, thr: newRateSeries(a.firstNs, DefaultThroughputBinNs)}
			a.index[p.Key] = f
			a.order = append(a.order, f)
			pk := pairOf(p.Key)
			a.byPair[pk] = append(a.byPair[pk], f)
		}
		a.last, a.lastKey = f, p.Key
	}
	f.packets++
	f.frameBytes += uint64(p.FrameBytes)
	f.wireBytes += uint64(p.WireBytes)
	f.lastNs = max(f.lastNs, p.TsNs)
	f.thr.add(p.TsNs, uint64(p.WireBytes))
	op := p.OpCode
	f.opcodes.add(op)
	if p.Late {
		f.late++
	}
	switch {
	case op.IsFirst() && op.IsLast():
		f.msgs.Only++
	case op.IsFirst():
		f.msgs.First++
	case op.IsLast():
		f.msgs.Last++
	case op.IsData():
		f.msgs.Middle++
	}
	if p.ECN == 3 {
		f.ecnCE++
	}
	if p.FECN {
		f.fecn++
	}
	if p.BECN {
		f.becn++
	}
	if p.ICRCBad {
		f.icrcBad++
	}
	if p.VCRCBad {
		f.vcrcBad++
	}
	if !op.IsAck() || p.HasAETH { // an ACK cut before its AETH may be a NAK
		f.psn.Add(op, p.PSN, p.Syndrome, p.DMALenB)
	}
	switch sp := decode.SpaceOf(op, p.Syndrome); {
	case op.IsCNP():
		f.cnps++
	case op.IsAck():
		a.ack(f, p, true)
	case sp == decode.SpaceResponses: // RDMA READ responses: their AETH acknowledges too
		if p.HasAETH {
			a.ack(f, p, false)
		}
	case sp == decode.SpaceRequests:
		if p.AckReq {
			f.wait(p.PSN, p.TsNs)
		}
	}
}

// wait remembers a request that asked for an ACK.
func (f *flowState) wait(psn uint32, tsNs int64) {
	if f.waitN == len(f.waitReqs) {
		if len(f.waitReqs) < pendingAcks {
			// Grow the ring (unrolled so the oldest comes first).
			grown := make([]waitingReq, max(16, 2*len(f.waitReqs)))
			for k := range f.waitN {
				grown[k] = f.waitReqs[(f.waitHead+k)%len(f.waitReqs)]
			}
			f.waitReqs, f.waitHead = grown, 0
		} else {
			f.waitHead = (f.waitHead + 1) % len(f.waitReqs)
			f.waitN--
		}
	}
	i := (f.waitHead + f.waitN) % len(f.waitReqs)
	f.waitReqs[i] = waitingReq{psn, tsNs}
	f.waitN++
}

// covered counts the waiting requests an ACK of ackPSN covers (PSNs up to
// it, or before it for a NAK), without removing them.
func (f *flowState) covered(ackPSN uint32, inclusive bool) int {
	n := 0
	for ; n < f.waitN; n++ {
		d := decode.PSNDiff(ackPSN, f.waitReqs[(f.waitHead+n)%len(f.waitReqs)].psn)
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
		f.rnr[aeth.Value()]++
		return
	case decode.AckKindNAK:
		f.naks[aeth.Value()]++
		if aeth.Value() != decode.NAKPSNSequenceError {
			return
		}
		inclusive = false // a sequence NAK at PSN n acknowledges what came before n
	default:
		return
	}
	req := f.peer
	if req == nil {
		req = a.findRequester(f, p.PSN, inclusive)
		if req == nil {
			return
		}
	}
	n := req.covered(p.PSN, inclusive)
	for range n {
		if lat := p.TsNs - req.waitReqs[req.waitHead].tsNs; lat >= 0 {
			req.ackLat.Add(lat)
		}
		req.waitHead = (req.waitHead + 1) % len(req.waitReqs)
		req.waitN--
	}
}

// findRequester binds an ACK flow to the request flow it answers: among
// the flows in the opposite direction, the one alone with requests this ACK
// covers. The BTH names no source QP, so this is how the pair is learnt.
func (a *FlowsAnalysis) findRequester(ackFlow *flowState, psn uint32, inclusive bool) *flowState {
	var found *flowState
	for _, c := range a.byPair[reversePair(ackFlow.key)] {
		if c.answered != nil || c.waitN == 0 || c.covered(psn, inclusive) == 0 {
			continue
		}
		if found != nil {
			return nil // ambiguous: wait for an ACK only one flow explains
		}
		found = c
	}
	if found != nil {
		ackFlow.peer, found.answered = found, ackFlow
	}
	return found
}

// Result finishes the analysis.
func (a *FlowsAnalysis) Result() (*FlowsResult, error) {
	if len(a.order) == 0 {
		return nil, ErrNoPackets
	}
	r := &FlowsResult{FirstNs: a.firstNs, ThroughputBinNs: DefaultThroughputBinNs}
	for _, f := range a.order {
		r.ThroughputBinNs = max(r.ThroughputBinNs, f.thr.binNs)
	}
	for _, f := range a.order {
		h := &FlowHealth{Key: keyJSON(f.key, ByFlow), Packets: f.packets, FrameBytes: f.frameBytes, WireBytes: f.wireBytes, FirstNs: f.firstNs, LastNs: f.lastNs,
			Messages: f.msgs, PSN: f.psn.Requests.Stats(), ResponsePSN: f.psn.Responses.Stats(), Acks: f.acks, CNPs: f.cnps, ECNCE: f.ecnCE, FECN: f.fecn, BECN: f.becn,
			ICRCBad: f.icrcBad, VCRCBad: f.vcrcBad, Late: f.late}
		h.Messages.Total = f.msgs.First + f.msgs.Only
		if d := f.lastNs - f.firstNs; d > 0 {
			h.MeanGbps = float64(f.wireBytes) * 8 / float64(d)
		}
		h.ThroughputGbps = f.thr.gbps(r.ThroughputBinNs)
		for _, g := range h.ThroughputGbps {
			h.PeakGbps = max(h.PeakGbps, g)
		}
		h.Opcodes = f.opcodes.result()
		for code, n := range f.naks {
			if n > 0 {
				h.NAKs = append(h.NAKs, NAKCount{Code: uint8(code), Name: decode.NAKName(uint8(code)), Count: n})
			}
		}
		for t, n := range f.rnr {
			if n > 0 {
				aeth := decode.AETH{Syndrome: uint8(t)}
				h.RNRNAKs = append(h.RNRNAKs, RNRCount{Timer: uint8(t), DelayNs: aeth.RNRDelayNs(), Count: n})
			}
		}
		if f.ackLat.Count() > 0 {
			st := statsOf(&f.ackLat)
			h.AckLatencyNs = &st
		}
		if f.answered != nil {
			k := keyJSON(f.answered.key, ByFlow)
			h.AckPeer = &k
		}
		r.Flows = append(r.Flows, h)
	}
	slices.SortStableFunc(r.Flows, func(x, y *FlowHealth) int { return cmp.Compare(y.Packets, x.Packets) })
	return r, nil
}

// RunFlows reads the stream to its end through a flows analysis. progress,
// if not nil, is called every 65536 packets.
func RunFlows(s *Stream, progress func(s *Stream)) (*FlowsResult, error) {
	a := NewFlowsAnalysis()
	var p Packet
	for n := 1; s.Next(&p) == nil; n++ {
		a.Add(&p)
		if progress != nil && n%progressEvery == 0 {
			progress(s)
		}
	}
	r, err := a.Result()
	if r != nil {
		r.Input = inputOf(s)
	}
	return r, err
}

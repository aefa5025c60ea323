package protostate

import "github.com/ibscope/ibscope/decode"

// psnWindowLen is how many PSNs behind the head of a sequence a tracker
// remembers, to tell a duplicate (seen before) from a late arrival that
// fills a gap. It is a bitmap of 4 words: 32 bytes per sequence.
const psnWindowLen = 256

// minPathMTUBytes is the smallest IB path MTU: an RDMA READ of n bytes uses
// at most ceil(n/256) response PSNs.
const minPathMTUBytes = 256

// PSNStats are one PSN sequence's anomalies, counted in packets (PSNs).
type PSNStats struct {
	Gaps       uint64 `json:"gaps"`         // times the PSN jumped ahead
	Missing    uint64 `json:"missing"`      // PSNs skipped by those jumps
	OutOfOrder uint64 `json:"out_of_order"` // packets behind the head, not seen before (filling a gap)
	Duplicates uint64 `json:"duplicates"`   // packets whose PSN was seen before: retransmissions
	Lost       uint64 `json:"lost"`         // Missing never seen afterwards: lost before the capture point
	// NewSequences counts the times the sequence started again: a QP
	// number reused by a new connection (newsequence.go).
	NewSequences uint64 `json:"new_sequences"`
}

// PSNVerdict is what one packet's PSN says about its sequence.
type PSNVerdict uint8

const (
	PSNNone      PSNVerdict = iota // no PSN sequence: UD, CNPs, NAKs, invalid opcodes
	PSNInOrder                     // the expected PSN (or the first of the sequence)
	PSNGap                         // ahead of the expected PSN: PSNs were skipped
	PSNLate                        // behind the head, not seen before: fills a gap
	PSNDuplicate                   // seen before: a retransmission
)

// PSNSpace names a QP direction's two sequences.
type PSNSpace uint8

const (
	SpaceNone      PSNSpace = iota
	SpaceRequests           // the sender's own requests: SEND, WRITE, READ and atomic requests
	SpaceResponses          // its responses to the peer's requests: ACKs, atomic ACKs, READ responses
)

// psnSeq is the common part of both sequences: the PSN after the head
// (highest PSN seen), and which of the psnWindowLen PSNs below it were seen.
// 16 bytes while the sequence is regular (every PSN one after the other
// from its start, or jumping so far ahead that nothing before stays in the
// window): then the PSNs seen are the run just below next, and the window
// of bits and the counts, all zero, are not kept. The first packet that
// is not the next PSN (a gap, a duplicate, a late one, a new sequence)
// makes them (psnCold), once.
type psnSeq struct {
	cold    *psnCold // the window's bits and the counts, made on the first irregular packet
	next    uint32   // the PSN after the highest seen
	run     uint16   // while cold is nil: the PSNs below next seen, up to psnWindowLen; no other was
	started bool
	open    bool // ResponsePSNs: a READ response message is under way, next is its next PSN
}

// psnCold is what a sequence keeps once it was not regular.
type psnCold struct {
	seen [psnWindowLen / 64]uint64 // bit psn%psnWindowLen: psn in [next-psnWindowLen, next) was seen
	PSNStats
	// slackPSNs (RequestPSNs) is how many PSNs the next packet may skip
	// without a gap, after an RDMA READ request: kept here, a READ
	// request being irregular enough, so that a sequence is 16 bytes.
	slackPSNs uint32
}

// irregular returns the sequence's window and counts, made from the run on
// first use.
func (s *psnSeq) irregular() *psnCold {
	if s.cold == nil {
		s.cold = new(psnCold)
		for i := uint32(1); i <= uint32(s.run); i++ {
			w, b := s.bit((s.next - i) & decode.PSNMask)
			s.cold.seen[w] |= b
		}
	}
	return s.cold
}

func (s *psnSeq) bit(psn uint32) (int, uint64) {
	i := psn % psnWindowLen
	return int(i / 64), 1 << (i % 64)
}

// mark records psn, behind the head, as seen (the window is kept).
func (s *psnSeq) mark(psn uint32) {
	w, b := s.bit(psn)
	s.irregular().seen[w] |= b
}

// wasSeen reports whether psn, behind the head by d (d < 0), was seen.
func (s *psnSeq) wasSeen(psn uint32, d int32) bool {
	if -d > psnWindowLen {
		return true // beyond memory: taken for a retransmission, the likelier case
	}
	if s.cold == nil {
		return -d <= int32(s.run)
	}
	w, b := s.bit(psn)
	return s.cold.seen[w]&b != 0
}

// advanceSeen moves the head so that next becomes to (ahead of next), every
// PSN from next to to-1 seen.
func (s *psnSeq) advanceSeen(to uint32) {
	if s.cold == nil {
		s.run = uint16(min(int32(s.run)+decode.PSNDiff(to, s.next), psnWindowLen))
		s.next = to
		return
	}
	for p := s.next; p != to; p = (p + 1) & decode.PSNMask {
		w, b := s.bit(p)
		s.cold.seen[w] |= b
	}
	s.next = to
}

// jump moves the head past psn (ahead of next), psn seen and the PSNs
// skipped before it not; the PSNs that leave the window are forgotten.
func (s *psnSeq) jump(psn uint32) {
	to := (psn + 1) & decode.PSNMask
	n := decode.PSNDiff(to, s.next)
	if s.cold == nil && (n >= psnWindowLen || s.run == 0) {
		s.next, s.run = to, 1 // nothing seen before stays in the window
		return
	}
	c := s.irregular()
	if n >= psnWindowLen {
		c.seen = [psnWindowLen / 64]uint64{}
	} else {
		c.clear(s.next, uint32(n))
	}
	s.next = to
	s.mark(psn)
}

// clear forgets n PSNs (below psnWindowLen) from psn on, a word at a time.
func (c *psnCold) clear(psn, n uint32) {
	for n > 0 {
		i := psn % psnWindowLen
		k := min(n, 64-i%64) // PSNs to clear in this word
		mask := ^uint64(0) >> (64 - k) << (i % 64)
		c.seen[i/64] &^= mask
		psn, n = (psn+k)&decode.PSNMask, n-k
	}
}

// start begins the sequence at psn.
func (s *psnSeq) start(psn uint32) {
	s.started, s.next, s.run = true, (psn+1)&decode.PSNMask, 1
	if s.cold != nil {
		s.cold.seen = [psnWindowLen / 64]uint64{}
		s.mark(psn)
	}
}

// Stats returns the sequence's counts, with Lost worked out.
func (s *psnSeq) Stats() PSNStats {
	if s.cold == nil {
		return PSNStats{}
	}
	st := s.cold.PSNStats
	if st.OutOfOrder < st.Missing {
		st.Lost = st.Missing - st.OutOfOrder
	}
	return st
}

// RequestPSNs follows a requester's PSN sequence: each request packet
// takes the next PSN, an RDMA READ request of n bytes takes ceil(n/PMTU)
// (one per response packet), so the request after it may skip them; the
// path MTU is not in the packets, so up to ceil(n/256) are allowed.
type RequestPSNs struct {
	psnSeq
}

// Add judges one request's PSN; dmaLenB is an RDMA READ request's length
// (0 for other requests).
func (t *RequestPSNs) Add(psn uint32, readDMALenB uint32) PSNVerdict {
	psn &= decode.PSNMask
	if psn == t.next && t.started && readDMALenB == 0 { // the next PSN: most packets
		if t.cold != nil {
			t.cold.slackPSNs = 0
		}
		t.advanceSeen((psn + 1) & decode.PSNMask)
		return PSNInOrder
	}
	v := t.add(psn)
	if readDMALenB > 0 && v != PSNDuplicate && v != PSNLate {
		if n := (readDMALenB + minPathMTUBytes - 1) / minPathMTUBytes; n > 1 {
			t.irregular().slackPSNs = n - 1
		}
	}
	return v
}

func (t *RequestPSNs) add(psn uint32) PSNVerdict {
	if !t.started {
		t.start(psn)
		return PSNInOrder
	}
	d := decode.PSNDiff(psn, t.next)
	var slack uint32
	if t.cold != nil {
		slack = t.cold.slackPSNs
		if d >= 0 {
			t.cold.slackPSNs = 0
		}
	}
	switch {
	case d == 0 || (d > 0 && uint32(d) <= slack):
		// The PSNs skipped were the READ's: a retried READ request may
		// use any of them, and is then a retransmission.
		t.advanceSeen((psn + 1) & decode.PSNMask)
		return PSNInOrder
	case d > 0:
		c := t.irregular()
		c.Gaps++
		c.Missing += uint64(uint32(d) - slack)
		t.jump(psn)
		return PSNGap
	case !t.wasSeen(psn, d):
		t.irregular().OutOfOrder++
		t.mark(psn)
		return PSNLate
	}
	t.irregular().Duplicates++
	return PSNDuplicate
}

// ResponsePSNs follows a responder's PSN sequence, which is its peer's
// request sequence seen from the other side: an ACK or atomic ACK carries
// the PSN of the request it acknowledges, and the packets of an RDMA READ
// response take the PSNs of the READ request's range, one each (IBA
// 9.7.5.1). ACKs coalesce and SENDs and WRITEs need no response of their
// own, so between response messages the PSN may jump ahead without a loss;
// only inside a READ response message must PSNs follow one another. A
// message seen without its first packet, or left without its last, counts
// one missing PSN (at least one was lost; how many the response alone
// cannot say). The responder answers in request order, so a PSN behind
// the head is either late (not seen before) or a retransmission (seen).
type ResponsePSNs struct {
	psnSeq
}

// Add judges one response packet: first and last say where it stands in
// its message (an ACK is both).
func (t *ResponsePSNs) Add(psn uint32, first, last bool) PSNVerdict {
	psn &= decode.PSNMask
	if !t.started {
		t.start(psn)
		t.open = !last
		return PSNInOrder
	}
	d := decode.PSNDiff(psn, t.next)
	if d < 0 {
		// Behind the head: does not change the message under way.
		if t.wasSeen(psn, d) {
			t.irregular().Duplicates++
			return PSNDuplicate
		}
		t.irregular().OutOfOrder++
		t.mark(psn)
		return PSNLate
	}
	v := PSNInOrder
	switch {
	case !first && t.open && d > 0: // packets inside the message were skipped
		c := t.irregular()
		c.Gaps++
		c.Missing += uint64(d)
		v = PSNGap
	case !first && !t.open: // the message's first packet was not seen
		c := t.irregular()
		c.Gaps++
		c.Missing++
		v = PSNGap
	case first && t.open: // the previous message's last packet was not seen
		c := t.irregular()
		c.Gaps++
		c.Missing++
		v = PSNGap
	}
	if d == 0 {
		t.advanceSeen((psn + 1) & decode.PSNMask)
	} else {
		t.jump(psn)
	}
	t.open = !last
	return v
}

// QPSequences follows one QP direction (decode.FlowKey: source,
// destination, DestQP): the packets a node sends to one QP of its peer are
// its own requests and its responses to that QP's requests, two PSN
// sequences that share nothing but the QP.
type QPSequences struct {
	Requests  RequestPSNs
	Responses ResponsePSNs
}

// SpaceOf says which sequence a packet of opcode op belongs to; syndrome is
// the AETH's, read for ACK opcodes only: a NAK or RNR NAK carries the PSN
// the responder expects or refused, not a response of its own.
func SpaceOf(op decode.Opcode, syndrome uint8) PSNSpace {
	c := opClasses[op]
	if c&classAck != 0 {
		if aeth := (decode.AETH{Syndrome: syndrome}); aeth.Kind() != decode.AckKindACK {
			return SpaceNone
		}
	}
	return PSNSpace(c & classSpace)
}

// opClass is what the trackers need of an opcode, looked up once a packet
// (opClasses) rather than asked of decode's opcode table a field at a time.
type opClass uint8

const (
	classSpace       opClass = 3 // the PSNSpace of the opcode (of an ACK's ACK kind)
	classAck         opClass = 1 << 2
	classReadRequest opClass = 1 << 3
	classFirst       opClass = 1 << 4
	classLast        opClass = 1 << 5
)

var opClasses = func() (t [256]opClass) {
	for i := range t {
		op := decode.Opcode(i)
		var c opClass
		switch {
		case !op.Valid() || op.Family() >= decode.FamilyCNP || op.Family() == decode.FamilyUD:
			// UD (MADs on QP0/QP1, IPoIB) keeps no PSN sequence a receiver checks.
			c = opClass(SpaceNone)
		case op.IsAck():
			c = opClass(SpaceResponses) | classAck
		case decode.IsReadResponse(op):
			c = opClass(SpaceResponses)
		default:
			c = opClass(SpaceRequests)
		}
		if decode.IsReadRequest(op) {
			c |= classReadRequest
		}
		if op.IsFirst() {
			c |= classFirst
		}
		if op.IsLast() {
			c |= classLast
		}
		t[i] = c
	}
	return t
}()

// Add judges one packet: op and psn from its BTH, syndrome from its AETH
// (ACK opcodes), readDMALenB the RETH's DMA length of an RDMA READ
// request; idleNs is the time since the QP direction's previous packet (0
// or less for its first, or one out of time order), which the caller
// keeps: a flow already holds its latest time. A PSN far from its sequence
// after the direction was idle begins a new one (startsAnew).
func (q *QPSequences) Add(op decode.Opcode, psn uint32, syndrome uint8, readDMALenB uint32, idleNs int64) (PSNSpace, PSNVerdict) {
	c := opClasses[op]
	if r := &q.Requests; c&(classSpace|classReadRequest) == opClass(SpaceRequests) && r.cold == nil && r.started && psn&decode.PSNMask == r.next {
		// The next request PSN of a regular sequence, not an RDMA READ:
		// most packets, judged here without a call (startsAnew and Add
		// would find the same: no jump, so no new sequence; in order).
		r.run = min(r.run+1, psnWindowLen)
		r.next = (r.next + 1) & decode.PSNMask
		return SpaceRequests, PSNInOrder
	}
	switch sp := SpaceOf(op, syndrome); sp {
	case SpaceRequests:
		if c&classReadRequest == 0 {
			readDMALenB = 0
		}
		if idleNs >= NewSequenceIdleNs && q.Requests.startsAnew(psn, idleNs) {
			q.Requests.restart()
		}
		return sp, q.Requests.Add(psn, readDMALenB)
	case SpaceResponses:
		if idleNs >= NewSequenceIdleNs && q.Responses.startsAnew(psn, idleNs) {
			q.Responses.restart()
		}
		if c&classAck != 0 {
			return sp, q.Responses.Add(psn, true, true)
		}
		return sp, q.Responses.Add(psn, c&classFirst != 0, c&classLast != 0)
	}
	return SpaceNone, PSNNone
}

// AddFrame judges a decoded frame's PSN (frames without a BTH have none),
// idleNs as for Add.
func (q *QPSequences) AddFrame(f *decode.Frame, idleNs int64) (PSNSpace, PSNVerdict) {
	if f.Has&decode.HasBTH == 0 {
		return SpaceNone, PSNNone
	}
	if f.BTH.OpCode.IsAck() && f.Has&decode.HasAETH == 0 {
		return SpaceNone, PSNNone // cut before its AETH: ACK or NAK cannot be told
	}
	var dmaLen uint32
	if f.Has&decode.HasRETH != 0 {
		dmaLen = f.RETH.DMALen
	}
	return q.Add(f.BTH.OpCode, f.BTH.PSN, f.AETH.Syndrome, dmaLen, idleNs)
}

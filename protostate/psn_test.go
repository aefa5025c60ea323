package protostate

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
)

func TestPSNWrap(t *testing.T) {
	var tr RequestPSNs
	for i := range uint32(20) {
		if v := tr.Add((decode.PSNMask-9+i)&decode.PSNMask, 0); v != PSNInOrder {
			t.Fatalf("PSN %d across the wrap: verdict %d", (decode.PSNMask-9+i)&decode.PSNMask, v)
		}
	}
	if tr.Stats() != (PSNStats{}) {
		t.Errorf("wrap counted as anomalies: %+v", tr.Stats())
	}
	steps := []struct {
		psn  uint32
		want PSNVerdict
	}{{12, PSNGap}, {5, PSNDuplicate}, {10, PSNLate}, {decode.PSNMask, PSNDuplicate}, {10, PSNDuplicate}, {13, PSNInOrder}}
	for _, s := range steps {
		if v := tr.Add(s.psn, 0); v != s.want {
			t.Errorf("PSN %d: verdict %d, want %d", s.psn, v, s.want)
		}
	}
	if s := tr.Stats(); s != (PSNStats{Gaps: 1, Missing: 2, OutOfOrder: 1, Duplicates: 3, Lost: 1}) {
		t.Errorf("after wrap: %+v", s)
	}
	if decode.PSNDiff(0, decode.PSNMask) != 1 || decode.PSNDiff(decode.PSNMask, 0) != -1 {
		t.Error("PSNDiff across the wrap")
	}
}

// The window forgets what falls out of it: a PSN far behind the head is a
// retransmission, one just inside it is judged by what was seen.
func TestPSNWindow(t *testing.T) {
	var tr RequestPSNs
	tr.Add(0, 0)
	tr.Add(2, 0) // 1 missing
	for psn := uint32(3); psn < 2+psnWindowLen; psn++ {
		tr.Add(psn, 0)
	}
	// The head is 257: PSN 1 is 256 behind next (258), still remembered as unseen.
	if v := tr.Add(2, 0); v != PSNDuplicate {
		t.Errorf("PSN 2: %d", v)
	}
	if v := tr.Add(1, 0); v != PSNDuplicate {
		t.Errorf("PSN 1, 257 behind the head: %d, want a duplicate (beyond the window)", v)
	}
	tr = RequestPSNs{}
	tr.Add(0, 0)
	tr.Add(2, 0)
	for psn := uint32(3); psn < 1+psnWindowLen; psn++ {
		tr.Add(psn, 0)
	}
	if v := tr.Add(1, 0); v != PSNLate {
		t.Errorf("PSN 1, 256 behind the next PSN: %d, want late", v)
	}
	// A jump larger than the window clears it.
	tr.Add(5000, 0)
	if v := tr.Add(4990, 0); v != PSNLate {
		t.Errorf("PSN 4990 after a jump: %d, want late", v)
	}
}

// An RDMA READ request takes the PSNs of its responses: the next request
// may skip them (up to ceil(len/256)) without a gap.
func TestRequestPSNsRead(t *testing.T) {
	var tr RequestPSNs
	tr.Add(10, 0)
	tr.Add(11, 4096) // READ of 4 KiB: up to 16 PSNs
	if v := tr.Add(15, 0); v != PSNInOrder {
		t.Errorf("request after a 4-PSN READ: %d", v)
	}
	tr.Add(16, 1024)
	if v := tr.Add(30, 0); v != PSNGap || tr.Stats().Missing != 10 {
		t.Errorf("jump past the READ's 4 PSNs: verdict %d, missing %d", v, tr.Stats().Missing)
	}
}

// Responses: ACKs coalesce (PSNs jump), READ response PSNs follow inside a
// message, retransmitted responses are duplicates, a re-read late fills.
func TestResponsePSNs(t *testing.T) {
	var tr ResponsePSNs
	type step struct {
		psn         uint32
		first, last bool
		want        PSNVerdict
	}
	ack := func(psn uint32, want PSNVerdict) step { return step{psn, true, true, want} }
	steps := []step{
		ack(3, PSNInOrder),
		ack(9, PSNInOrder),                                      // coalesced: 4..8 need no ACK
		{10, true, false, PSNInOrder},                           // READ response FIRST
		{11, false, false, PSNInOrder},                          // MIDDLE
		{13, false, false, PSNGap},                              // 12 lost
		{14, false, true, PSNInOrder},                           // LAST
		ack(20, PSNInOrder),                                     // a later SEND's ACK
		{12, true, false, PSNLate},                              // the re-read: fills 12
		{13, false, false, PSNDuplicate},                        // and repeats 13, 14
		{14, false, true, PSNDuplicate},                         //
		ack(20, PSNDuplicate),                                   // a repeated ACK
		{21, false, false, PSNGap},                              // a message without its FIRST
		{22, false, false, PSNInOrder},                          //
		{30, true, true, PSNGap},                                // ... and without its LAST
		{31, true, false, PSNInOrder},                           //
		{32, false, true, PSNInOrder},                           //
		{(33 - 300) & decode.PSNMask, true, true, PSNDuplicate}, // beyond the window: a retransmission
		{33 + psnWindowLen + 5, true, true, PSNInOrder},         // ACKs may jump any distance
	}
	for i, s := range steps {
		if v := tr.Add(s.psn, s.first, s.last); v != s.want {
			t.Errorf("step %d, PSN %d: verdict %d, want %d", i, s.psn, v, s.want)
		}
	}
	if s := tr.Stats(); s != (PSNStats{Gaps: 3, Missing: 3, OutOfOrder: 1, Duplicates: 4, Lost: 2}) {
		t.Errorf("stats %+v", s)
	}
}

// QPSequences keeps a QP direction's requests and responses apart, the
// rping pattern: a node's SENDs and WRITEs interleaved with the READ
// responses it returns to its peer.
func TestQPSequencesSplit(t *testing.T) {
	var q QPSequences
	const (
		sendOnly  decode.Opcode = 0x04
		writeOnly decode.Opcode = 0x0A
		readReq   decode.Opcode = 0x0C
		readFirst decode.Opcode = 0x0D
		readMid   decode.Opcode = 0x0E
		readLast  decode.Opcode = 0x0F
		readOnly  decode.Opcode = 0x10
		ack       decode.Opcode = 0x11
		atomicAck decode.Opcode = 0x12
		cmpSwap   decode.Opcode = 0x13
		udSend    decode.Opcode = 0x64
	)
	type pkt struct {
		op       decode.Opcode
		psn      uint32
		syndrome uint8
		dmaLen   uint32
		space    PSNSpace
		want     PSNVerdict
	}
	for i, p := range []pkt{
		{sendOnly, 100, 0, 0, SpaceRequests, PSNInOrder},
		{readFirst, 7_000_000, 0, 0, SpaceResponses, PSNInOrder}, // the peer's sequence
		{readMid, 7_000_001, 0, 0, SpaceResponses, PSNInOrder},
		{writeOnly, 101, 0, 0, SpaceRequests, PSNInOrder}, // no resync by the responses
		{readLast, 7_000_002, 0, 0, SpaceResponses, PSNInOrder},
		{readReq, 102, 0, 8192, SpaceRequests, PSNInOrder},
		{readOnly, 7_000_003, 0, 0, SpaceResponses, PSNInOrder},
		{sendOnly, 110, 0, 0, SpaceRequests, PSNInOrder}, // after the READ's 8 PSNs
		{ack, 7_000_010, 0x1F, 0, SpaceResponses, PSNInOrder},
		{ack, 7_000_011, 0x60, 0, SpaceNone, PSNNone}, // NAK: no response of its own
		{ack, 7_000_011, 0x2E, 0, SpaceNone, PSNNone}, // RNR NAK
		{cmpSwap, 111, 0, 0, SpaceRequests, PSNInOrder},
		{atomicAck, 7_000_011, 0, 0, SpaceResponses, PSNInOrder},
		{atomicAck, 7_000_011, 0, 0, SpaceResponses, PSNDuplicate},
		{sendOnly, 111, 0, 0, SpaceRequests, PSNDuplicate},
		{udSend, 5, 0, 0, SpaceNone, PSNNone},
		{decode.OpcodeCNP, 0, 0, 0, SpaceNone, PSNNone},
	} {
		sp, v := q.Add(p.op, p.psn, p.syndrome, p.dmaLen, 1000)
		if sp != p.space || v != p.want {
			t.Errorf("packet %d (%s psn %d): space %d verdict %d, want %d %d", i, p.op, p.psn, sp, v, p.space, p.want)
		}
	}
	if s := q.Requests.Stats(); s != (PSNStats{Duplicates: 1}) {
		t.Errorf("requests %+v", s)
	}
	if s := q.Responses.Stats(); s != (PSNStats{Duplicates: 1}) {
		t.Errorf("responses %+v", s)
	}
}

// FuzzQPSequences: any packet sequence (8 bytes each: opcode, PSN,
// syndrome, READ length), every fifth after 1.6 s idle so that sequences
// start anew, keeps the counts consistent with the verdicts.
func FuzzQPSequences(f *testing.F) {
	f.Add([]byte{0x04, 0, 0, 1, 0, 0, 0, 0, 0x0C, 0, 0, 2, 0, 0, 0x10, 0, 0x0D, 0, 0, 2, 0x1F, 0, 0, 0, 0x11, 0xFF, 0xFF, 0xFF, 0x1F, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var q QPSequences
		var counts [3][5]uint64
		var n uint64
		for ; len(b) >= 8; b = b[8:] {
			psn := uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
			n++
			sp, v := q.Add(decode.Opcode(b[0]), psn, b[4], uint32(b[5])<<16|uint32(b[6])<<8|uint32(b[7]), int64(n%5)*400_000_000)
			if (sp == SpaceNone) != (v == PSNNone) || sp > SpaceResponses || v > PSNDuplicate {
				t.Fatalf("opcode 0x%02x: space %d verdict %d", b[0], sp, v)
			}
			counts[sp][v]++
		}
		for sp, s := range map[PSNSpace]PSNStats{SpaceRequests: q.Requests.Stats(), SpaceResponses: q.Responses.Stats()} {
			c := counts[sp]
			if s.Gaps != c[PSNGap] || s.OutOfOrder != c[PSNLate] || s.Duplicates != c[PSNDuplicate] || s.Lost > s.Missing || s.Missing < s.Gaps ||
				s.NewSequences > c[PSNInOrder] {
				t.Fatalf("space %d: stats %+v, verdicts %v", sp, s, c)
			}
		}
	})
}

// SpaceOf reads a table made once; it says what the opcode's fields say,
// for every opcode and AETH syndrome.
func TestSpaceOfTable(t *testing.T) {
	for op := range 256 {
		o := decode.Opcode(op)
		for syn := range 256 {
			want := SpaceRequests
			switch aeth := (decode.AETH{Syndrome: uint8(syn)}); {
			case !o.Valid() || o.Family() >= decode.FamilyCNP || o.Family() == decode.FamilyUD:
				want = SpaceNone
			case o.IsAck() && aeth.Kind() != decode.AckKindACK:
				want = SpaceNone
			case o.IsAck() || decode.IsReadResponse(o):
				want = SpaceResponses
			}
			if got := SpaceOf(o, uint8(syn)); got != want {
				t.Fatalf("opcode %#x syndrome %#x: space %d, want %d", op, syn, got, want)
			}
		}
	}
}

// clear forgets the same PSNs a word at a time as one at a time, across
// words, the window's end and the PSN wrap.
func TestPSNClear(t *testing.T) {
	for _, base := range []uint32{0, 100, decode.PSNMask - 70} {
		for n := range uint32(psnWindowLen) {
			var got, want psnCold
			for i := range got.seen {
				got.seen[i], want.seen[i] = ^uint64(0), ^uint64(0)
			}
			got.clear(base, n)
			s := psnSeq{cold: &want}
			for k := range n {
				w, b := s.bit((base + k) & decode.PSNMask)
				want.seen[w] &^= b
			}
			if got.seen != want.seen {
				t.Fatalf("clear(%d, %d): %x, want %x", base, n, got.seen, want.seen)
			}
		}
	}
}

package analyze

// PSNs are 24-bit sequence numbers that wrap: arithmetic is modulo 2^24.
const (
	psnMod  = 1 << 24
	psnMask = psnMod - 1
)

// psnDiff returns a - b as a signed distance modulo 2^24, in [-2^23, 2^23).
func psnDiff(a, b uint32) int32 {
	d := (a - b) & psnMask
	if d >= psnMod/2 {
		return int32(d) - psnMod
	}
	return int32(d)
}

// psnWindow is how many recent PSNs a flow remembers to tell a duplicate
// (seen before) from a late arrival that fills a gap.
const psnWindow = 256

// minPathMTUBytes is the smallest IB path MTU: an RDMA READ of n bytes uses
// at most ceil(n/256) response PSNs.
const minPathMTUBytes = 256

// PSNStats are one flow's sequence anomalies, counted in packets (PSNs).
type PSNStats struct {
	Gaps       uint64 `json:"gaps"`         // times the PSN jumped ahead
	Missing    uint64 `json:"missing"`      // PSNs skipped by those jumps
	OutOfOrder uint64 `json:"out_of_order"` // packets behind the expected PSN, not seen before (filling a gap)
	Duplicates uint64 `json:"duplicates"`   // packets whose PSN was seen before: retransmissions
	Lost       uint64 `json:"lost"`         // Missing never seen afterwards: lost before the capture point
}

// psnTracker follows one flow's request (or response) PSN sequence.
type psnTracker struct {
	started   bool
	next      uint32 // expected PSN
	slackPSNs uint32 // PSNs the next packet may skip without a gap (after an RDMA READ request)
	seen      [psnWindow]uint32
	PSNStats
}

func (t *psnTracker) mark(psn uint32) { t.seen[psn%psnWindow] = psn + 1 }

// resync accepts psn as the new sequence point without judging it.
func (t *psnTracker) resync(psn uint32) {
	t.started, t.next, t.slackPSNs = true, (psn+1)&psnMask, 0
	t.mark(psn)
}

// add checks one packet's PSN against the sequence.
func (t *psnTracker) add(psn uint32) {
	if !t.started {
		t.resync(psn)
		return
	}
	d := psnDiff(psn, t.next)
	slack := t.slackPSNs
	t.slackPSNs = 0
	switch {
	case d == 0 || (d > 0 && uint32(d) <= slack):
		t.next = (psn + 1) & psnMask
		t.mark(psn)
	case d > 0:
		t.Gaps++
		t.Missing += uint64(uint32(d) - slack)
		t.next = (psn + 1) & psnMask
		t.mark(psn)
	case -d <= psnWindow && t.seen[psn%psnWindow] != psn+1:
		t.OutOfOrder++
		t.mark(psn)
	default:
		t.Duplicates++
	}
}

// readRequest notes an RDMA READ request of dmaLenB bytes at the current
// PSN: its responses use PSNs the requester's next packet skips.
func (t *psnTracker) readRequest(dmaLenB uint32) {
	if n := (dmaLenB + minPathMTUBytes - 1) / minPathMTUBytes; n > 1 {
		t.slackPSNs = n - 1
	}
}

func (t *psnTracker) stats() PSNStats {
	s := t.PSNStats
	if s.OutOfOrder < s.Missing {
		s.Lost = s.Missing - s.OutOfOrder
	}
	return s
}

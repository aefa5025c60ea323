package protostate

import "github.com/ibscope/ibscope/decode"

// PauseSpan is one continuous pause of one priority on one link direction:
// [StartNs, EndNs), ns.
type PauseSpan struct {
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// PauseEvent says what a PFC or PAUSE frame did to a priority's pause.
type PauseEvent uint8

// What PauseTimer.Request did.
const (
	PauseNothing   PauseEvent = iota // an XON while not paused
	PauseStarted                     // a pause began
	PauseRefreshed                   // a frame during a pause restarted its timer
	PauseResumed                     // an XON (time 0) ended the pause early
)

// PauseTimer follows the pause of one priority on one link direction as the
// frames asking for it come, the way the paused port's timer runs (802.3
// Annex 31B, 802.1Qbb): a frame with time q pauses for q quanta (PauseNs)
// from its arrival; a frame during the pause restarts the timer with its own
// time, which may be shorter; a time of 0 ends the pause at once. The zero
// value is not paused.
type PauseTimer struct {
	active           bool
	startNs, untilNs int64
	lastNs           int64
}

// Request applies a frame asking for quanta at tNs on a link of
// linkBitsPerSec. It returns the pause that ended before or at the frame,
// if one did (ended), and what the frame did. A frame stamped before the
// previous one is taken at that one's time, so that pauses stay in order.
func (t *PauseTimer) Request(tNs int64, quanta uint16, linkBitsPerSec int64) (span PauseSpan, ended bool, ev PauseEvent) {
	tNs = max(tNs, t.lastNs)
	t.lastNs = tNs
	if t.active && tNs >= t.untilNs { // it ran out before this frame
		span, ended, t.active = PauseSpan{t.startNs, t.untilNs}, true, false
	}
	d := decode.PauseNs(quanta, linkBitsPerSec) // 0 for a time of 0, or under 1 ns
	switch {
	case d > 0 && t.active:
		t.untilNs, ev = tNs+d, PauseRefreshed
	case d > 0:
		t.active, t.startNs, t.untilNs, ev = true, tNs, tNs+d, PauseStarted
	case t.active && quanta == 0: // XON
		span, ended, t.active, ev = PauseSpan{t.startNs, tNs}, true, false, PauseResumed
	case t.active: // a refresh shorter than 1 ns: the pause ends now
		span, ended, t.active, ev = PauseSpan{t.startNs, tNs}, true, false, PauseRefreshed
	}
	return span, ended, ev
}

// Running returns the pause under way, counted to its timer's end, if any.
func (t *PauseTimer) Running() (PauseSpan, bool) {
	return PauseSpan{t.startNs, t.untilNs}, t.active
}

// PausedAt reports whether the priority is paused at tNs.
func (t *PauseTimer) PausedAt(tNs int64) bool {
	return t.active && tNs >= t.startNs && tNs < t.untilNs
}

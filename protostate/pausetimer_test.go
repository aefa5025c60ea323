package protostate

import "testing"

// At 100 Gb/s a quantum is 5.12 ns: 1000 quanta are 5,120 ns.
func TestPauseTimer(t *testing.T) {
	const rate = 100e9
	type step struct {
		tNs    int64
		quanta uint16
		ended  bool
		span   PauseSpan
		ev     PauseEvent
	}
	var pt PauseTimer
	for i, s := range []step{
		{0, 1000, false, PauseSpan{}, PauseStarted},
		{3000, 1000, false, PauseSpan{}, PauseRefreshed},                  // until 8,120
		{6000, 0, true, PauseSpan{StartNs: 0, EndNs: 6000}, PauseResumed}, // XON
		{7000, 0, false, PauseSpan{}, PauseNothing},
		{10_000, 100, false, PauseSpan{}, PauseStarted},                             // 512 ns
		{20_000, 10, true, PauseSpan{StartNs: 10_000, EndNs: 10_512}, PauseStarted}, // ran out, a new one
		{19_000, 0, true, PauseSpan{StartNs: 20_000, EndNs: 20_000}, PauseResumed},  // late: taken at 20,000
	} {
		span, ended, ev := pt.Request(s.tNs, s.quanta, rate)
		if ended != s.ended || span != s.span || ev != s.ev {
			t.Errorf("step %d: %v %v %v, want %v %v %v", i, span, ended, ev, s.span, s.ended, s.ev)
		}
	}
	pt.Request(30_000, 1000, rate)
	if run, ok := pt.Running(); !ok || run != (PauseSpan{StartNs: 30_000, EndNs: 35_120}) || !pt.PausedAt(35_119) || pt.PausedAt(35_120) || pt.PausedAt(29_999) {
		t.Errorf("running %v %v", run, ok)
	}
}

package analyze

// liveCut lets the reports so far of a live input (a pipe: ibcap -w - |
// ibanalyze flows --interval 1s -) come as their interval closes. A report
// is due when a packet stamped at or after its time leaves the reorder
// window, and a window of N packets hands a packet out only once N more
// have been read: at a few packets a second, a report came seconds late,
// or at the end. Once a packet stamped at or after the cut (the report's
// time) has been read, the stream reads nothing more until it has handed
// that packet out: the packets before it go first, in order, then Run
// reports and sets the next cut. A packet that comes later stamped before
// one already handed out is Late, as any packet beyond the window.
type liveCut struct {
	everyNs int64 // RunOptions.EveryNs; 0: no cut (the input is not live)
	atNs    int64 // the report's time; 0 until the first packet is read
	held    bool  // a packet stamped at or after atNs is in the window
}

// cutEvery starts the cuts: the first falls everyNs after the first
// packet read, where Run's first report falls on an input in order.
func (s *Stream) cutEvery(everyNs int64) { s.cut.everyNs = everyNs }

// cutAt sets the next cut, at Run's next report time; a packet already
// in the window at or after it holds the reading at once.
func (s *Stream) cutAt(atNs int64) {
	if s.cut.everyNs == 0 {
		return
	}
	s.cut.atNs, s.cut.held = atNs, false
	for i := 0; i < s.n; i++ {
		if s.ring[s.ringAt(s.head, i)].TsNs >= atNs {
			s.cut.held = true
			return
		}
	}
}

// cutRead notes a packet read into the window.
func (s *Stream) cutRead(tsNs int64) {
	c := &s.cut
	if c.everyNs == 0 {
		return
	}
	if c.atNs == 0 {
		c.atNs = addNs(tsNs, c.everyNs)
	}
	if tsNs >= c.atNs {
		c.held = true
	}
}

// cutHandedOut notes a packet handed out: the one at or after the cut
// lets the reading go on (Run sets the next cut after its report).
func (s *Stream) cutHandedOut(tsNs int64) {
	if s.cut.held && tsNs >= s.cut.atNs {
		s.cut.held = false
	}
}

package sim

// xmitWait is a port's PortXmitWait counter and the truth behind it. IBA
// defines PortXmitWait as the number of ticks during which the port had
// data to send but sent none during the entire tick; so the counter adds,
// per waiting interval, the ticks that lie wholly inside it. Ticks are
// aligned to multiples of tickPs from a per-port phase.
type xmitWait struct {
	tickPs, phasePs int64
	mergeGapPs      int64 // waits closer than this join one congestion interval

	startPs   int64 // start of the open waiting interval, -1 when not waiting
	ticks     uint64
	waitPs    int64
	intervals int
	episodes  []episode
}

// episode is one congestion interval: waits separated by less than the
// merge gap, with what they added up to.
type episode struct {
	startPs, endPs int64
	waitPs         int64
	ticks          uint64
	waits          int
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// slots counts whole ticks inside [a, b).
func (x *xmitWait) slots(a, b int64) uint64 {
	n := floorDiv(b-x.phasePs, x.tickPs) - (floorDiv(a-x.phasePs+x.tickPs-1, x.tickPs))
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func (x *xmitWait) start(nowPs int64) {
	if x.startPs < 0 {
		x.startPs = nowPs
	}
}

func (x *xmitWait) stop(nowPs int64) {
	if x.startPs < 0 {
		return
	}
	a := x.startPs
	x.startPs = -1
	if nowPs <= a {
		return
	}
	t := x.slots(a, nowPs)
	x.ticks += t
	x.waitPs += nowPs - a
	x.intervals++
	if n := len(x.episodes); n > 0 && a-x.episodes[n-1].endPs <= x.mergeGapPs {
		e := &x.episodes[n-1]
		e.endPs, e.waitPs, e.ticks, e.waits = nowPs, e.waitPs+nowPs-a, e.ticks+t, e.waits+1
		return
	}
	x.episodes = append(x.episodes, episode{startPs: a, endPs: nowPs, waitPs: nowPs - a, ticks: t, waits: 1})
}

// counter is the PortXmitWait value at nowPs, the open interval included.
func (x *xmitWait) counter(nowPs int64) uint64 {
	if x.startPs >= 0 && nowPs > x.startPs {
		return x.ticks + x.slots(x.startPs, nowPs)
	}
	return x.ticks
}

package analyze

import (
	"math"
	"sync/atomic"
)

// Analysis is the one shape of every analysis here: the packets of a
// Stream go in one at a time, in stream order, and a report comes out.
// Run is its driver, so that what a command reads (standard input, several
// files, a rotated set) is the stream's business, not the analysis's.
//
// Report is the report so far, not an end: it may be called at any point,
// any number of times, and Add may follow it. It changes nothing the
// analysis will report, so calling it N times on the way and once after the
// last packet gives the same final report as calling it only at the end;
// that is what --interval and live metrics rest on. Its cost is bounded by
// what the analysis already holds (its flows, series or kept packets), never
// by the packets seen, and the memory it takes is given back with the
// report. A report may share memory with the analysis: use it (print it,
// encode it) before the next Add.
type Analysis[R any] interface {
	// Add takes the next packet; p is reused after the call.
	Add(p *Packet)
	// Err says why the analysis cannot go on (reading then stops), nil
	// while it can.
	Err() error
	// Report is the result on the packets added so far; s is the stream
	// they came from (its file names, counts and timestamp resolution).
	Report(s *Stream) (R, error)
}

// RunOptions are what Run does on the way besides feeding packets.
type RunOptions[R any] struct {
	// Progress, if not nil, is called every 65536 packets.
	Progress func(s *Stream)
	// EveryNs is the packet time between reports so far (0: none). The
	// reports fall on the first packet's time plus multiples of EveryNs;
	// a gap in the packets that spans several of them gives one report.
	EveryNs int64
	// OnReport takes each report so far: the report on the packets
	// before the first one stamped at or after untilNs, and the error
	// Report gave with it (an analysis may have too little yet, as credits
	// without an FCP). The stream's counts are what it has read by then:
	// its packets include that first one, read and not yet added, and its
	// frames run ahead by up to the reorder window.
	OnReport func(untilNs int64, r R, err error)
	// Live says the input is live (a pipe, a terminal): each report so
	// far is made as soon as a packet at or after its time has been read,
	// not once that packet has passed through the reorder window
	// (livecut.go).
	Live bool
	// Stop, once set, ends the reading of the stream (an interrupted
	// command): the packets already read into the reorder window are still
	// added, then Run returns the report on them. A read that waits for
	// data which does not come is the reader's to end (close the pipe).
	// A flag, not a channel: it is looked at before every packet, and an
	// atomic load costs nothing there where a channel poll cost 5 ns.
	Stop *atomic.Bool
}

// progressEvery is how many packets pass between progress reports and
// checks for a failed analysis.
const progressEvery = 1 << 16

// Run feeds the stream to its end (or until the analysis fails) through a
// and returns a's report on every packet read.
func Run[R any](s *Stream, a Analysis[R], o RunOptions[R]) (R, error) {
	if o.Stop != nil {
		// The stream looks at it too, before every frame it reads: one
		// that skips a long run of frames it does not hand out (not IB,
		// not decodable) stops within it.
		s.in.SetStop(o.Stop)
	}
	every := o.EveryNs > 0 && o.OnReport != nil
	if every && o.Live {
		s.cutEvery(o.EveryNs)
	}
	var nextNs int64
	for n := 1; ; n++ {
		if o.Stop != nil && !s.eof && o.Stop.Load() {
			s.eof = true // what the window holds is handed out, nothing more is read
		}
		p := s.next() // in the window, as it is: the analysis copies what it keeps
		if p == nil {
			break
		}
		if every {
			switch {
			case n == 1:
				nextNs = addNs(p.TsNs, o.EveryNs)
				s.cutAt(nextNs)
			case p.TsNs >= nextNs:
				r, err := a.Report(s)
				o.OnReport(nextNs, r, err)
				nextNs = addNs(nextNs, (p.TsNs-nextNs)/o.EveryNs*o.EveryNs+o.EveryNs)
				s.cutAt(nextNs)
			}
		}
		a.Add(p)
		if n%progressEvery == 0 {
			if a.Err() != nil {
				break
			}
			if o.Progress != nil {
				o.Progress(s)
			}
		}
	}
	s.final = true
	return a.Report(s)
}

// addNs is t + d for d >= 0, held at the end of time rather than wrapping.
func addNs(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

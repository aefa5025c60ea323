package analyze

// Analysis is the one shape of every analysis here: the packets of a
// Stream go in one at a time, in stream order, and a report comes out.
// Run is its driver, so that what a command reads (standard input, several
// files, a rotated set) is the stream's business, not the analysis's.
type Analysis[R any] interface {
	// Add takes the next packet; p is reused after the call.
	Add(p *Packet)
	// Err says why the analysis cannot go on (reading then stops), nil
	// while it can.
	Err() error
	// Report ends the analysis with its result on the packets added; s
	// is the stream they came from (its file names, counts and timestamp
	// resolution). It is called once: reports on the way (--interval) are
	// for a later Snapshot.
	Report(s *Stream) (R, error)
}

// progressEvery is how many packets pass between progress reports and
// checks for a failed analysis.
const progressEvery = 1 << 16

// Run feeds the stream to its end (or until the analysis fails) through a
// and returns a's report. progress, if not nil, is called every 65536 packets.
func Run[R any](s *Stream, a Analysis[R], progress func(s *Stream)) (R, error) {
	var p Packet
	for n := 1; s.Next(&p) == nil; n++ {
		a.Add(&p)
		if n%progressEvery == 0 {
			if a.Err() != nil {
				break
			}
			if progress != nil {
				progress(s)
			}
		}
	}
	return a.Report(s)
}

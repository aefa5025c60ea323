package correlate

import (
	"errors"
	"io"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/samefile"
)

// captureSet reads several captures as one stream in timestamp order (a
// k-way merge: each file is in time order already, or nearly), decoding
// every frame into the reader's own Frame.
type captureSet struct {
	readers []*decode.Reader
	frames  []decode.Frame
	live    []bool // reader i has a frame waiting in frames[i]
	last    int    // reader whose frame next returned last, -1 before the first
	// onDecodeError is told about frames that could not be decoded; they
	// are still returned, with what was decoded. It is also told about
	// frames without a timestamp, which are skipped: they have no place in
	// time to be merged or binned at.
	onDecodeError func(*decode.DecodeError)
	decodeErrors  int64
	untimed       int64
}

func openCaptures(paths []string, onDecodeError func(*decode.DecodeError)) (*captureSet, error) {
	cs := &captureSet{onDecodeError: onDecodeError, last: -1}
	for _, p := range paths {
		r, err := decode.Open(p)
		if err != nil {
			cs.close()
			return nil, err // names p (decode.Open)
		}
		cs.readers = append(cs.readers, r)
	}
	cs.frames = make([]decode.Frame, len(paths))
	cs.live = make([]bool, len(paths))
	for i := range cs.readers {
		if err := cs.fill(i); err != nil {
			cs.close()
			return nil, err
		}
	}
	return cs, nil
}

// fill reads reader i's next frame with a timestamp. A damaged file ends
// there: scanCaptures, which read the same records first, reported it.
func (cs *captureSet) fill(i int) error {
	f := &cs.frames[i]
	for {
		err := cs.readers[i].Next(f)
		var de *decode.DecodeError
		var fe *decode.FileError
		switch {
		case err == io.EOF, errors.As(err, &fe):
			cs.live[i] = false
			return nil
		case errors.As(err, &de):
			cs.decodeErrors++
			if cs.onDecodeError != nil {
				cs.onDecodeError(de)
			}
		case err != nil:
			return err
		case f.NoTs:
			cs.untimed++
			if cs.onDecodeError != nil {
				cs.onDecodeError(decode.NoTimeError(cs.readers[i].Name(), f))
			}
		}
		if !f.NoTs {
			cs.live[i] = true
			return nil
		}
	}
}

// next returns the earliest waiting frame and the link type of its file,
// or nil at the end of every file. The frame stays valid until the next call.
func (cs *captureSet) next() (*decode.Frame, int, error) {
	if cs.last >= 0 {
		if err := cs.fill(cs.last); err != nil {
			return nil, 0, err
		}
	}
	best := -1
	for i, ok := range cs.live {
		if ok && (best < 0 || cs.frames[i].TsNs < cs.frames[best].TsNs) {
			best = i
		}
	}
	cs.last = best
	if best < 0 {
		return nil, 0, nil
	}
	return &cs.frames[best], cs.readers[best].LinkType(), nil
}

func (cs *captureSet) close() {
	for _, r := range cs.readers {
		r.Close()
	}
}

// captureSpan is what a quick pass over the records (no decoding) learns:
// the time range and, when asked, bytes per time bin for offset estimation.
type captureSpan struct {
	firstNs, lastNs int64 // earliest and latest timestamp, ns
	frames          int64
	hist            *byteHist // nil unless asked for
	// damaged holds a *decode.FileError per capture that is damaged (cut
	// mid-record, say): its records before the damage are used.
	damaged []error
}

// scanCaptures reads every record of every capture without decoding it.
// binNs > 0 asks for a byte histogram with bins of that width. Records
// without a timestamp are left out (the binning pass reports them).
func scanCaptures(paths []string, binNs int64) (captureSpan, error) {
	sp := captureSpan{}
	if err := samefile.Check(paths); err != nil {
		return sp, err
	}
	if binNs > 0 {
		sp.hist = newByteHist(binNs)
	}
	var f decode.Frame
	for _, p := range paths {
		r, err := decode.Open(p)
		if err != nil {
			return sp, err // names p (decode.Open)
		}
		for {
			_, err := r.NextRecord(&f)
			if err == io.EOF {
				break
			}
			var de *decode.DecodeError
			var fe *decode.FileError
			if errors.As(err, &fe) {
				sp.damaged = append(sp.damaged, err)
				break
			}
			if err != nil && !errors.As(err, &de) {
				r.Close()
				return sp, err
			}
			if f.NoTs {
				continue
			}
			if sp.frames == 0 || f.TsNs < sp.firstNs {
				sp.firstNs = f.TsNs
			}
			if sp.frames == 0 || f.TsNs > sp.lastNs {
				sp.lastNs = f.TsNs
			}
			sp.frames++
			if sp.hist != nil {
				sp.hist.add(f.TsNs, int64(f.WireLen))
			}
		}
		r.Close()
	}
	return sp, nil
}

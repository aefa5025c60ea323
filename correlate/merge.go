package correlate

import (
	"io"

	"github.com/ibscope/ibscope/capfile"
)

// openFrames opens the captures as one stream of frames in time order for
// the binning pass: a frame that could not be decoded comes with what was
// decoded, a frame without a timestamp is told to onDecodeError and left
// out (it has no place in time to be binned at), and a damaged capture just
// ends (scanCaptures, which read the same records first, reported it).
// workers above 1 decode on that many goroutines.
func openFrames(paths []string, onDecodeError func(*capfile.DecodeError), workers int) (*capfile.Stream, error) {
	return capfile.OpenStream(paths, capfile.StreamOptions{CheckCRC: true, Undecoded: true, OnDecodeError: onDecodeError, Workers: workers})
}

// captureSpan is what a quick pass over the records (no decoding) learns:
// the time range and, when asked, bytes and packets per time bin for offset
// estimation.
type captureSpan struct {
	firstNs, lastNs int64 // earliest and latest timestamp, ns
	frames          int64
	bytes, packets  *countHist // nil unless asked for
	// damaged holds a *capfile.FileError per capture that is damaged (cut
	// mid-record, say): its records before the damage are used.
	damaged []error
	meta    map[string]string // what the captures say of themselves (captureMeta)
}

// histWant is what scanCaptures is to count per time bin of binNs (0: nothing).
type histWant struct {
	binNs          int64
	bytes, packets bool
}

// scanCaptures reads every record of every capture without decoding it,
// counting bytes and packets per time bin as want asks. Records without a
// timestamp are left out (the binning pass reports them).
func scanCaptures(paths []string, want histWant) (captureSpan, error) {
	sp := captureSpan{}
	if want.binNs > 0 && want.bytes {
		sp.bytes = newCountHist(want.binNs)
	}
	if want.binNs > 0 && want.packets {
		sp.packets = newCountHist(want.binNs)
	}
	in, err := capfile.OpenStream(paths, capfile.StreamOptions{Records: true, Undecoded: true,
		OnFileError: func(err error) { sp.damaged = append(sp.damaged, err) }})
	if err != nil {
		return sp, err // names the capture (capfile.Open)
	}
	defer in.Close()
	for {
		f, _, err := in.Next()
		if err == io.EOF {
			sp.meta = map[string]string{}
			captureMeta(in, sp.meta)
			return sp, nil
		}
		if sp.frames == 0 || f.TsNs < sp.firstNs {
			sp.firstNs = f.TsNs
		}
		if sp.frames == 0 || f.TsNs > sp.lastNs {
			sp.lastNs = f.TsNs
		}
		sp.frames++
		if sp.bytes != nil {
			sp.bytes.add(f.TsNs, int64(f.WireLen))
		}
		if sp.packets != nil {
			sp.packets.add(f.TsNs, 1)
		}
	}
}

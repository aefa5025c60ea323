package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// What decode counts of each frame, and decode --summary on several cores:
// there the workers that decode a batch of frames also say what each one
// counts as (summaryBatch), and the caller adds a whole batch at once
// (Stream.NextBatch). Taking the frames one at a time instead, the
// caller's goroutine spent a sixth of the CPU time on handing them over,
// time it did not decode.

// frameFacts is what decode's tally counts of one frame (factsOf).
type frameFacts uint8

const (
	factDecoded    frameFacts = 1 << iota // decoded as IB or RoCE, without error
	factSkipped                           // neither IB nor RoCE
	factCut                               // cut by the snap length: CRCs not checked
	factCutHeaders                        // cut inside its IB headers (no whole BTH)
	factICRCBad                           // ICRC checked and wrong
	factVCRCBad                           // VCRC or LPCRC checked and wrong
)

// factsOf is what frame f counts as, given with err (a *capfile.DecodeError
// or nil) by the stream.
func factsOf(f *decode.Frame, err error) frameFacts {
	if err == nil && !f.Decoded() {
		return factSkipped
	}
	var k frameFacts
	if err == nil {
		k |= factDecoded
	}
	if f.Truncated() {
		k |= factCut
		if f.Has&(decode.HasBTH|decode.HasPFC|decode.HasPause) == 0 && f.Transport != decode.TransportLink {
			k |= factCutHeaders
		}
	}
	if f.Has&decode.CRCsCheck != 0 {
		if f.Has&decode.HasICRC != 0 && !f.ICRCOK {
			k |= factICRCBad
		}
		if f.Has&decode.HasVCRC != 0 && !f.VCRCOK {
			k |= factVCRCBad
		}
	}
	return k
}

// add counts a frame's facts (not the frame itself, nor its error).
func (t *decodeTally) add(k frameFacts) {
	if k&factSkipped != 0 {
		t.skipped++
		return
	}
	if k&factDecoded != 0 {
		t.decoded++
	}
	if k&factCut != 0 {
		t.cut++
		if k&factCutHeaders != 0 {
			t.cutHeaders++
		}
	}
	if k&factICRCBad != 0 {
		t.icrcBad++
	}
	if k&factVCRCBad != 0 {
		t.vcrcBad++
	}
}

// failed counts a frame of path that could not be decoded, and tells the
// first maxWarnings of them.
func (t *decodeTally) failed(path string, de *capfile.DecodeError) {
	t.errors++
	if t.errors <= maxWarnings {
		warnf("%v", de)
	} else if t.errors == maxWarnings+1 {
		warnf("%s: more frames could not be decoded; counting them without messages", path)
	}
}

// cutFrame names a frame cut by the snap length for the warning.
func cutFrame(number int, offset int64, capLen, wireLen int) string {
	return fmt.Sprintf("frame %d (record at byte offset %d, %d of %d bytes captured)", number, offset, capLen, wireLen)
}

// summaryBatch is decode --summary's Projection: what the frames of one
// batch count as, written by the worker that decodes them.
type summaryBatch struct {
	facts []frameFacts // frame i's
	errs  []frameError // the frames that could not be decoded, in order
	cuts  []cutAt      // the frames cut by the snap length, in order
	// lastOffset is the byte offset of the batch's last frame, for the progress.
	lastOffset int64
}

type frameError struct {
	i  int
	de *capfile.DecodeError
}

type cutAt struct {
	i, number, capLen, wireLen int
	offset                     int64
}

// Project is told the batch's frames in order, from 0.
func (b *summaryBatch) Project(i int, f *decode.Frame, err error) {
	if i == 0 {
		b.facts, b.errs, b.cuts = b.facts[:0], b.errs[:0], b.cuts[:0]
	}
	k := factsOf(f, err)
	b.facts = append(b.facts, k)
	if de, _ := err.(*capfile.DecodeError); de != nil {
		b.errs = append(b.errs, frameError{i, de})
	}
	if k&factCut != 0 {
		b.cuts = append(b.cuts, cutAt{i: i, number: f.Number, capLen: f.CapLen, wireLen: f.WireLen, offset: f.Offset})
	}
	b.lastOffset = f.Offset
}

// Renumber adds by to the cut frames' numbers (capfile.Projection).
func (b *summaryBatch) Renumber(by int) {
	for i := range b.cuts {
		b.cuts[i].number += by
	}
}

// tallyBatches counts the frames of s, a stream of path Batched with
// summaryBatch Projections, a batch at a time: what decodeFile's loop
// counts of them one at a time for --summary.
func tallyBatches(s *capfile.Stream, path string, jsonOut bool) decodeTally {
	var t decodeTally
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	prog := newProgress(path, size, jsonOut)
	defer prog.done()
	for {
		p, from, to, err := s.NextBatch()
		if err == io.EOF {
			return t
		}
		b := p.(*summaryBatch)
		for _, e := range b.errs {
			if e.i >= from && e.i < to {
				t.failed(path, e.de)
			}
		}
		frames, cut := t.frames, t.cut
		for _, k := range b.facts[from:to] {
			t.add(k)
		}
		t.frames += to - from
		if cut == 0 && t.cut > 0 {
			for _, c := range b.cuts {
				if c.i >= from {
					t.firstCut = cutFrame(c.number, c.offset, c.capLen, c.wireLen)
					break
				}
			}
		}
		if frames>>14 != t.frames>>14 {
			prog.update(t.frames, b.lastOffset)
		}
	}
}

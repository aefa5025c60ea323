package capfile

import "io"

// Taking a file read ahead a batch at a time. A caller that only counts
// the frames (ibanalyze decode --summary) has the workers count them in
// its Projection and takes each batch's frames at once: reading them one
// at a time through Next (a frame head handed over, the stream's counts
// and bookkeeping for each) was a sixth of decode --summary's CPU time on
// two cores, all of it on the caller's goroutine, which then had that much
// less time to decode.

// Batched reports whether NextBatch may be called: the stream is of one
// file, read ahead, and hands out every frame as it comes (Undecoded and
// Untimed, no Keep, nothing to tell OnDecodeError), so that a batch's
// frames are those Next would give, with nothing for the caller to do
// between them.
func (s *Stream) Batched() bool {
	return len(s.files) == 1 && s.files[0].ahead != nil && !s.opts.Records && s.opts.Keep == nil &&
		s.opts.Undecoded && s.opts.Untimed && s.opts.OnDecodeError == nil
}

// NextBatch hands out at once the frames Next would hand out next, up to
// the end of the batch they were read ahead in: the batch's Projection
// (StreamOptions.Project; nil without it) and their indexes in it, from
// from to to (exclusive); io.EOF after the last frame. The Projection is
// valid until the next call of NextBatch or Next. Only where Batched.
//
// Stats counts the frames as Next would (Frames, DecodeErrors, NoTime) and
// Progress follows them, but the timestamps after the first of each batch
// are not looked at: ResolutionNs and the disorder counts (OutOfOrder)
// leave them out.
func (s *Stream) NextBatch() (p Projection, from, to int, err error) {
	sf := s.files[0]
	if s.last >= 0 {
		s.advance(0) // the first frame of the next batch, with all that Next does for it
	}
	if !sf.ok {
		s.last = -1
		return nil, 0, 0, io.EOF
	}
	s.last = 0
	a := sf.ahead
	b := a.cur
	from, to = a.i-1, b.n
	if rest := b.n - a.i; rest > 0 {
		failed, untimed := b.counts(a.i)
		s.stats.Frames += rest
		s.stats.DecodeErrors += failed
		s.stats.NoTime += untimed
		a.i = b.n
		if off := b.offset(b.n - 1); off > 0 {
			sf.doneB = min(off, sf.size)
		}
	}
	return b.proj, from, to, nil
}

// counts is how many of the batch's frames from i on have an error and
// how many have no timestamp: the batch's counts less those before i.
func (b *batch) counts(i int) (failed, untimed int) {
	failed, untimed = b.failed, b.untimed
	for k := range i {
		var noTs, bad bool
		if b.heads != nil {
			noTs, bad = b.heads[k].noTs, b.heads[k].failed
		} else {
			noTs, bad = b.frames[k].NoTs, b.errs[k] != nil
		}
		if bad {
			failed--
		}
		if noTs {
			untimed--
		}
	}
	return failed, untimed
}

// offset is frame i's byte offset in its file.
func (b *batch) offset(i int) int64 {
	if b.heads != nil {
		return b.heads[i].offset
	}
	return b.frames[i].Offset
}

package metrics

import (
	"errors"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
)

// countingSource is a capture.Source whose packets are counted in the flow
// metrics as Next hands them out, in the capture loop's own goroutine:
// every packet while the packet rate stays at most Config.SamplePps, and
// above it the packets of one sampling window in every N (sampler).
type countingSource struct {
	capture.Source
	l *Live
	s sampler
	// skippedBytes are the captured bytes of the packets not analysed since
	// the lock was last taken: added to capBytes then.
	skippedBytes uint64
}

func (s *countingSource) Next() (capfile.Packet, error) {
	p, err := s.Source.Next()
	if err != nil {
		if errors.Is(err, capture.ErrTimeout) && s.skippedBytes > 0 {
			s.l.flowMu.Lock() // idle: the bytes reach the next scrape
			s.flushSkipped()
			s.l.flowMu.Unlock()
		}
		return p, err
	}
	if s.s.newPeriod(p.TsNs) {
		s.s.begin(p.TsNs)
		s.startPeriod()
	}
	if !s.s.analyse(p.TsNs) {
		s.skippedBytes += uint64(len(p.Data))
		return p, nil
	}
	l := s.l
	l.flowMu.Lock()
	s.flushSkipped()
	l.count(&p, s.s.every)
	l.flowMu.Unlock()
	return p, nil
}

// startPeriod publishes the sampling rate of the period that begins and,
// when packets were left out since the last analysed one (the period before
// sampled, or this one does: its window may not be its first), has every
// flow's next packet begin its PSN sequence and IPD anew: a jump over the
// packets not seen is no loss and no delay.
func (s *countingSource) startPeriod() {
	l := s.l
	l.flowMu.Lock()
	s.flushSkipped()
	if s.s.sampledBefore || s.s.every > 1 {
		l.flows.epoch++
	}
	l.sampleEvery = s.s.every
	l.flowMu.Unlock()
}

// flushSkipped adds the skipped packets' bytes to capBytes; the caller
// holds flowMu.
func (s *countingSource) flushSkipped() {
	s.l.capBytes += s.skippedBytes
	s.skippedBytes = 0
}

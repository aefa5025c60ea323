package metrics

import (
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
)

// countingSource is a capture.Source whose packets are counted in the flow
// metrics as Next hands them out, in the capture loop's own goroutine.
type countingSource struct {
	capture.Source
	l *Live
}

func (s *countingSource) Next() (capfile.Packet, error) {
	p, err := s.Source.Next()
	if err == nil {
		s.l.flowMu.Lock()
		s.l.count(&p)
		s.l.flowMu.Unlock()
	}
	return p, err
}

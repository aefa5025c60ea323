package main

import (
	"fmt"
	"io"

	"github.com/ibscope/ibscope/capture"
)

// statusLine redraws one line on a terminal with the counts so far.
type statusLine struct {
	out   io.Writer
	on    bool
	last  capture.Report // the counts at the previous redraw, for the rates
	drawn bool
}

func newStatusLine(out io.Writer, on bool) *statusLine { return &statusLine{out: out, on: on} }

// update is capture.RunOptions.Status.
func (s *statusLine) update(r capture.Report) {
	if !s.on {
		return
	}
	secs := (r.Elapsed - s.last.Elapsed).Seconds()
	if secs <= 0 {
		return
	}
	pps := float64(r.Written-s.last.Written) / secs
	bps := float64(r.Bytes-s.last.Bytes) * 8 / secs
	fmt.Fprintf(s.out, "\r\x1b[K%d packets, %s, %.0f pkt/s, %s, %d filtered, %d dropped",
		r.Written, bytesText(r.Bytes), pps, bitsText(bps), r.Filtered, r.Dropped())
	s.last, s.drawn = r, true
}

// clear erases the line before the final report.
func (s *statusLine) clear() {
	if s.drawn {
		fmt.Fprint(s.out, "\r\x1b[K")
	}
}

func bytesText(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

func bitsText(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gb/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.1f Mb/s", bps/1e6)
	}
	return fmt.Sprintf("%.0f kb/s", bps/1e3)
}

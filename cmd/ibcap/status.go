package main

import (
	"fmt"
	"io"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/units"
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
	// As in the final report: no filtered count where it would be a false
	// 0 (what a kernel filter keeps out is never counted).
	filtered := ""
	if !r.KernelFilter || r.Filtered > 0 {
		filtered = fmt.Sprintf(", %d filtered", r.Filtered)
	}
	fmt.Fprintf(s.out, "\r\x1b[K%s, %s, %.0f pkt/s, %s%s, %d dropped",
		units.Count(r.Written, "packet"), units.FormatBytes(r.Bytes), pps, units.FormatBitRate(bps), filtered, r.Dropped())
	s.last, s.drawn = r, true
}

// note prints a line of its own, erasing the status line first; the next
// update draws it again below.
func (s *statusLine) note(line string) {
	s.clear()
	s.drawn = false
	fmt.Fprintln(s.out, line)
}

// clear erases the line before the final report.
func (s *statusLine) clear() {
	if s.drawn {
		fmt.Fprint(s.out, "\r\x1b[K")
	}
}

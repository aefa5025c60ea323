package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/pflag"
)

// maxIntervalNs bounds --interval: a week of packet time (168h, as Set
// says). More is a slip of the unit rather than a report anyone waits for.
const maxIntervalNs = 7 * 24 * 3600 * 1_000_000_000

// intervalFlag is --interval D: no reports so far unless given; given, D
// is more than 0 and at most maxIntervalNs, so a command never checks it.
type intervalFlag struct{ units.DurationNs }

// Set parses and checks D.
func (f *intervalFlag) Set(s string) error {
	if err := f.DurationNs.Set(s); err != nil {
		return err
	}
	if f.DurationNs <= 0 || f.DurationNs > maxIntervalNs {
		return errors.New("want a duration of packet time from 1ns to 168h (a week), such as 1s (without --interval: the totals only)")
	}
	return nil
}

// addIntervalFlag adds --interval to a command whose reports so far are
// what of the packets read.
func addIntervalFlag(f *pflag.FlagSet, p *intervalFlag, what string) {
	f.Var(p, "interval", "also report the "+what+" so far every `DURATION` of packet time (e.g. 1s)")
}

// intervalHelp is the paragraph of a command's help on --interval and
// on stopping it, which the command may follow with lines of its own.
const intervalHelp = selectHelp + `
--interval D also reports on the packets so far every D of packet time from
the first packet (a table headed "== so far", or a JSON object with
until_ns, the first packet time it stops before), then the totals as
without it (headed "== totals"): one JSON object after another.
SIGINT or SIGTERM stops the reading, and the totals of what was read
follow (exit 0); a second signal exits at once (status 130 or 143).
`

// reports writes what a run of an analysis gives: with --interval, the
// report so far every interval of packet time, then the totals. Each is
// written as it comes, so memory holds one report at a time.
type reports[R any] struct {
	out     io.Writer
	json    bool
	everyNs int64
	live    bool // the input is live: each report as soon as its interval closes (RunOptions.Live)
	// write writes one report whole, text or JSON.
	write func(w io.Writer, r R) error
	// started: a report so far was made; startNs is then the first packet's
	// time (Run makes the first one due at the first packet plus everyNs).
	started bool
	startNs int64
	err     error // the first write that failed: no reports after it
}

func newReports[R any](out io.Writer, interval intervalFlag, json bool, write func(w io.Writer, r R) error) *reports[R] {
	return &reports[R]{out: out, json: json, everyNs: int64(interval.DurationNs), write: write}
}

// runOptions are what Run does for the command on the way: progress
// (nil for none), the reports so far, and the stop on SIGINT or SIGTERM.
func (rs *reports[R]) runOptions(progress func(s *analyze.Stream)) analyze.RunOptions[R] {
	return analyze.RunOptions[R]{Progress: progress, EveryNs: rs.everyNs, OnReport: rs.soFar, Stop: readingStopped, Live: rs.live}
}

// soFar writes the report on the packets before untilNs, or why there is
// none yet (credits before a flow-control packet, tick before its episode).
func (rs *reports[R]) soFar(untilNs int64, r R, err error) {
	if rs.err != nil {
		return
	}
	if !rs.started {
		rs.started, rs.startNs = true, untilNs-rs.everyNs
	}
	w := bufio.NewWriter(rs.out)
	var werr error
	switch {
	case rs.json && err != nil:
		werr = writeJSON(w, struct {
			UntilNs int64  `json:"until_ns"`
			Error   string `json:"error"`
		}{untilNs, err.Error()})
	case rs.json:
		werr = rs.write(&untilNsWriter{w: w, untilNs: untilNs}, r)
	default:
		fmt.Fprintf(w, "== so far: packets before +%s of packet time\n", units.FormatNs(untilNs-rs.startNs))
		if err != nil {
			fmt.Fprintf(w, "no report yet: %v\n", err)
		} else {
			werr = rs.write(w, r)
		}
		fmt.Fprintln(w)
	}
	if ferr := w.Flush(); ferr != nil && werr == nil {
		werr = fmt.Errorf("write output: %w", ferr)
	}
	if werr != nil {
		rs.err = werr
		stopReading() // of a live stream, which would go on unseen
	}
}

// totals writes the final report (headed "== totals" after text reports so
// far), or returns the error that stopped the reports so far.
func (rs *reports[R]) totals(r R) error {
	if rs.err != nil {
		return rs.err
	}
	if rs.everyNs > 0 && !rs.json {
		fmt.Fprintln(rs.out, "== totals")
	}
	return rs.write(rs.out, r)
}

// untilNsWriter puts "until_ns" first in the JSON object written through
// it, so that every report, whatever its type, says it is a report so far
// the same way.
type untilNsWriter struct {
	w       io.Writer
	untilNs int64
	done    bool
}

func (u *untilNsWriter) Write(b []byte) (int, error) {
	i := bytes.IndexByte(b, '{')
	if u.done || i < 0 {
		return u.w.Write(b)
	}
	u.done = true
	key := append([]byte("{\n  \"until_ns\": "), strconv.FormatInt(u.untilNs, 10)...)
	if _, err := u.w.Write(append(append(b[:i:i], key...), ',')); err != nil {
		return 0, err
	}
	n, err := u.w.Write(b[i+1:])
	return i + 1 + n, err
}

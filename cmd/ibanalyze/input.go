package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/units"
)

// Every analysis command reads its captures the same way: an input, with
// one policy for what could not be used, and for a command with one stream
// runStreamed, which opens it, runs the analysis with progress, reports so
// far and the stop on a signal.

// input is a command's reading of its captures. Its policy for what could
// not be used: a frame that could not be decoded and a damaged file are
// told on stderr as they come, naming the file, the frame and the byte
// offset (frames past the first maxWarnings only counted), the rest of the
// input is read to the end and analysed, the report is written, and then
// damaged makes the command exit with status 1. Frames cut inside their
// IB headers (no whole BTH) are damage too, told in one line per stream
// once it is read. The reports' input counts (decode_errors, no_time,
// cut_headers, file_errors) say how many, and so does the text summary
// (unusable).
type input struct {
	opts                     analyze.StreamOptions
	warnings                 decodeWarnings
	decodeErrors, fileErrors int
	streams                  []*analyze.Stream // opened, for their cut_headers
}

// newInput reads with opts (the window, CRC checks, the frames the
// analysis needs), the selection the command's flags make (selected) and
// the policy above.
func newInput(opts analyze.StreamOptions) (*input, error) {
	in := &input{opts: opts}
	var err error
	if in.opts.Workers, err = workers(false); err != nil {
		return nil, err
	}
	sel, err := selected.selection()
	if err != nil {
		return nil, err
	}
	in.opts.Select = sel
	in.opts.OnDecodeError = func(err *capfile.DecodeError) {
		in.decodeErrors++
		in.warnings.warn(err)
	}
	in.opts.OnFileError = func(err error) {
		in.fileErrors++
		warnf("%v (the rest of this file is not read)", err)
	}
	// From the open on, which reads up to the first packet: a signal is
	// heard inside any run of frames the stream skips (stopReading).
	in.opts.Stop = readingStopped
	in.opts.Map = true // main recovers the fault of a capture cut short under it (execute)
	return in, nil
}

// open opens paths as one stream, on the cores not busy when reading
// ahead pays for them (readAheadPays) and -j does not say.
func (in *input) open(paths []string) (*analyze.Stream, error) {
	opts := in.opts // this stream's: buffer's senders and receiver are two
	if !jobs.set && readAheadPays(paths) {
		opts.Workers, _ = workers(true) // without -j, no error
	}
	s, err := analyze.OpenStream(paths, opts)
	if err == nil {
		in.streams = append(in.streams, s)
	}
	return s, err
}

// damaged tells the frames cut inside their headers and returns err, or,
// when there is none, errReported if a frame or a file could not be used.
func (in *input) damaged(err error) error {
	cut := 0
	for _, s := range in.streams {
		if st := s.Input(); st.CutHeaders > 0 {
			cut += st.CutHeaders
			warnf("%s: %s cut inside the IB headers (no whole BTH), not analysed: the snap length is too short for them",
				strings.Join(st.Files, ", "), units.Count(st.CutHeaders, "IB/RoCE frame"))
		}
	}
	if err == nil && in.decodeErrors+in.fileErrors+cut > 0 {
		return errReported
	}
	return err
}

// unusable is the text summary's account of what could not be used, ""
// when everything could: "; could not use 4 frames not decodable, 1 frame
// cut inside its headers, 1 file damaged (not read to its end)".
func unusable(in analyze.Input) string {
	var parts []string
	count := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	count(in.DecodeErrors, "frame not decodable", "frames not decodable")
	count(in.NoTime, "frame without a time", "frames without a time")
	count(in.CutHeaders, "frame cut inside its headers", "frames cut inside their headers")
	count(in.FileErrors, "file damaged (not read to its end)", "files damaged (not read to their end)")
	if len(parts) == 0 {
		return ""
	}
	return "; could not use " + strings.Join(parts, ", ")
}

// decodeWarnings warns about the first maxWarnings frames that could not be
// decoded and counts them all.
type decodeWarnings struct{ n int }

func (d *decodeWarnings) warn(err *capfile.DecodeError) {
	d.n++
	switch {
	case d.n <= maxWarnings:
		warnf("%v", err)
	case d.n == maxWarnings+1:
		warnf("more frames could not be decoded; counting them without messages")
	}
}

// streamed is what runStreamed gives: the analysis' report, the writer of
// the reports (whose totals the command writes after its warnings), and the
// stream read, closed, for its counts.
type streamed[R any] struct {
	report  R
	reports *reports[R]
	stream  *analyze.Stream
}

// runStreamed opens paths as one stream through in, makes the analysis for
// it (newAnalysis may look at the stream: its timestamp resolution) and
// runs it to the end: the first signal stops the reading, progress shows
// on a terminal, and --interval reports so far go through write, as the
// totals will (reports.totals). The error is the analysis' (or opening's);
// damage to the input is left to in.damaged.
func runStreamed[R any](stdout io.Writer, paths []string, label string, in *input, interval intervalFlag, jsonOut bool,
	newAnalysis func(s *analyze.Stream) (analyze.Analysis[R], error), write func(io.Writer, R) error) (streamed[R], error) {
	var run streamed[R]
	if err := stopOnSignal(paths); err != nil {
		return run, err
	}
	if interval.DurationNs > 0 && allLive(paths) &&
		(in.opts.WindowPackets == 0 || in.opts.WindowPackets == analyze.DefaultWindowPackets) {
		// A report so far comes when a packet past its interval leaves the
		// reorder window: on a live capture (ibcap -w - | ibanalyze flows
		// --interval 1s -) a window of 4,096 packets would hold it back by
		// as many packets, minutes at a low rate. A live capture comes in
		// order; --window still sets any other size.
		in.opts.WindowPackets = liveWindowPackets
	}
	s, err := in.open(paths)
	if err != nil {
		return run, err
	}
	defer s.Close()
	run.stream = s
	a, err := newAnalysis(s)
	if err != nil {
		return run, err
	}
	_, total := s.Progress()
	prog := newProgress(label, total, jsonOut)
	run.reports = newReports(stdout, interval, jsonOut, write)
	run.reports.live = allLive(paths)
	run.report, err = analyze.Run(s, a, run.reports.runOptions(streamProgress(prog)))
	prog.done()
	return run, err
}

// analysis is newAnalysis for runStreamed when the analysis is made
// before the stream.
func analysis[R any](a analyze.Analysis[R]) func(*analyze.Stream) (analyze.Analysis[R], error) {
	return func(*analyze.Stream) (analyze.Analysis[R], error) { return a, nil }
}

// stdinOnce refuses "-" given to both sides of a two-sided command (ipd
// --compare, buffer), which open a stream each: standard input is read once.
func stdinOnce(paths []string) error {
	n := 0
	for _, p := range paths {
		if p == capfile.Stdin {
			n++
		}
	}
	if n > 1 {
		return errors.New("- (standard input) is given twice: each input is read once, give it once")
	}
	return nil
}

// streamProgress reports a stream's progress on a terminal.
func streamProgress(p *progress) func(s *analyze.Stream) {
	return func(s *analyze.Stream) {
		done, _ := s.Progress()
		p.update(s.Stats().Frames, done)
	}
}

// warnInput reports what the input held that the user should know about.
func warnInput(in analyze.Input) {
	d := in.Disorder
	if d.OutOfOrder > 0 {
		what := "frames are stamped earlier than the frame before them"
		if d.OutOfOrder == 1 {
			what = "frame is stamped earlier than the frame before it"
		}
		warnf("%d %s (first: %s; largest step back %s); sorted within a window of %d packets",
			d.OutOfOrder, what, d.First, units.FormatNs(d.MaxStepBackNs), d.WindowPackets)
	}
	if d.Late > 0 {
		warnf("%s out of order beyond the window (first: %s): kept in the file's order and given no IPD; try a larger --window", units.CountVerb(d.Late, "packet", "was", "were"), d.FirstLate)
	}
}

// noPackets explains an input with nothing to analyse.
func noPackets(in analyze.Input) error {
	return fmt.Errorf("no IB or RoCE transport packets in %s: %d frames read, %d neither IB nor RoCE, %d link packets, %d could not be decoded",
		strings.Join(in.Files, ", "), in.Frames, in.NotIB, in.LinkPackets, in.DecodeErrors)
}

// liveWindowPackets is the reorder window of a live input read with
// --interval, unless --window says otherwise.
const liveWindowPackets = 64

// allLive reports whether every input is live: a pipe, a FIFO or a
// terminal (liveInput).
func allLive(paths []string) bool {
	for _, p := range paths {
		if !liveInput(p) {
			return false
		}
	}
	return len(paths) > 0
}

// liveInput reports whether path (- for standard input) is a pipe, a FIFO
// or a terminal: a capture still being written, to be shown as it comes.
func liveInput(path string) bool {
	var fi os.FileInfo
	var err error
	if path == capfile.Stdin {
		fi, err = os.Stdin.Stat()
	} else {
		fi, err = os.Stat(path)
	}
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) != 0
}

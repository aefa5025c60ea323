package correlate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/filter"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/telemetry"
)

// Options control Correlate.
type Options struct {
	Format Format
	// OffsetGiven says OffsetNs holds the clock offset for every series
	// (capture time = telemetry time + OffsetNs); otherwise it is estimated
	// per series from the byte counters.
	OffsetGiven bool
	OffsetNs    int64
	// WindowNs > 0 makes the rows fixed windows of that many ns, aligned to
	// multiples of it since the epoch, instead of the telemetry's intervals.
	WindowNs int64
	// Local names the NIC's addresses or LIDs, to split packets into sent
	// (tx_) and received (rx_). Without it the captures' own record of
	// direction is used: pcapng epb_flags, Linux cooked packet types, ERF
	// interfaces 0 (tx) and 1 (rx).
	Local Local
	// Ports names the telemetry series to join by their source column
	// (DEVICE/PORT, or the file's name for a file that names no port);
	// empty joins the ports the capture saw (chooseSeries).
	Ports []string
	// Telemetry tunes the telemetry readers (DOCA data IDs, clear-on-sample).
	Telemetry *telemetry.Options
	// OnDecodeError is told about each frame that could not be decoded; it
	// is still counted with what could be decoded of it.
	OnDecodeError func(*capfile.DecodeError)
	// Progress, if set, is called every 64K frames of the binning pass.
	Progress func(frames int, offsetBytes int64)
	// Meta is stored as schema metadata (Parquet key-value metadata) in the
	// file, besides what Correlate says of the captures and the series.
	Meta map[string]string
	// PauseBitsPerSec is the link rate PFC and PAUSE quanta are counted at
	// for the cap_paused_ns_p* columns (0: DefaultPauseBitsPerSec).
	PauseBitsPerSec int64
	// Select, when set, chooses the packets the cap_* columns count. The
	// capture's time range and the clock offset are still taken from every
	// packet: the counters count them all.
	Select *filter.Selection
	// MaxTelemetryValues bounds the telemetry held, all files together, in
	// values (samples × (counters + 3 times and ID)); 0 is
	// DefaultMaxTelemetryValues. Past it the files are refused, naming it.
	MaxTelemetryValues int64
	// Workers, above 1, decodes the captures of the binning pass on that
	// many goroutines (capfile.StreamOptions.Workers); the rows are the same.
	Workers int
}

// DefaultMaxTelemetryValues is 32 million values, ~1.3 GB while
// correlating: about 40 bytes a value as measured (a 2-million-row sidecar
// of two counters, 10 million values, took 424 MB RSS), 8 million samples
// of a sidecar of one counter.
const DefaultMaxTelemetryValues = 32_000_000

// MaxMaxTelemetryValues is the most --max-telemetry-values takes.
const MaxMaxTelemetryValues = 1 << 36

// OptionError is an Options value that does not suit the input: Field
// names it ("OffsetNs", "WindowNs") so that a command can name the flag that
// set it; the message says the value and what to do.
type OptionError struct {
	Field string
	Err   error
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// SeriesResult says how one telemetry series was joined.
type SeriesResult struct {
	File     string
	Source   string
	Clock    string
	OffsetNs int64           // capture time = telemetry time + OffsetNs
	Estimate *OffsetEstimate // nil when the offset was given
	// Evidence is how well the counters follow the capture at OffsetNs
	// (the estimate's, or checked at a given offset); nil when it could not
	// be had, NoEvidence saying why.
	Evidence   *OffsetEvidence
	NoEvidence string
	// Better is, for a given offset, an estimate at which the counters
	// follow the capture clearly better (OffsetEstimate.fitsBetterThan):
	// the given offset is likely wrong. Nil otherwise.
	Better *OffsetEstimate
	Rows   int
}

// Result says what Correlate wrote.
type Result struct {
	Path             string
	Rows             int64
	Frames           int64 // frames read in the binning pass
	DecodeErrors     int64
	NotSelected      int64 // frames Options.Select left out of the cap_* columns
	CaptureFirstNs   int64 // earliest packet, ns since the epoch
	CaptureLastNs    int64 // latest packet
	Series           []SeriesResult
	Skipped          []SkippedSeries // telemetry series not joined
	DirectionKnown   bool            // tx_/rx_ columns are filled
	LateIPDs         int64           // inter-packet delays dropped for packets out of time order
	TelemetryWarning []string        // what the telemetry readers stepped over, naming file and line
}

// maxWindows bounds the rows of --window (each holds ~200 bytes of
// statistics while the capture is read).
const maxWindows = 4 << 20

// Correlate joins captures with telemetry files and writes one row per
// telemetry interval (or window) and source to out. See the package comment
// for the columns. A capture damaged part way (cut mid-record) is used up to
// the damage: out is written, and the error names each damage.
func Correlate(captures, telemetryFiles []string, out string, opt Options) (Result, error) {
	res := Result{Path: out}
	if opt.PauseBitsPerSec < 0 {
		return res, &OptionError{"PauseBitsPerSec", fmt.Errorf("pause link rate of %d bit/s: want a positive rate (0 for 100 Gb/s)", opt.PauseBitsPerSec)}
	}
	if slices.Contains(captures, capfile.Stdin) {
		return res, errors.New("correlate reads its captures twice (their time range and byte rate, then the join), and standard input can be read once: save it to a file first")
	}
	series, warnings, err := readTelemetry(telemetryFiles, opt.Telemetry, cmp.Or(opt.MaxTelemetryValues, DefaultMaxTelemetryValues))
	if err != nil {
		return res, err
	}
	res.TelemetryWarning = warnings

	// Pass 1: the captures' time range, and their byte rate when offsets
	// are to be estimated.
	// An estimate, and the evidence for a given offset, compare the
	// capture's counts per time bin with the counters.
	var want histWant
	for _, in := range series {
		// A series that cannot be estimated fails in alignSeries, after
		// the plainer complaint that it does not overlap at all.
		sig, err := offsetSignalOf(in.s)
		if err != nil {
			continue
		}
		if b, err := histBinNs(in.s, sig); err == nil && (want.binNs == 0 || b < want.binNs) {
			want.binNs = b
		}
		want.bytes = want.bytes || !sig.packets
		want.packets = want.packets || sig.packets
	}
	span, err := scanCaptures(captures, want)
	if err != nil {
		return res, err
	}
	if span.frames == 0 {
		return res, fmt.Errorf("%s: no frames in the capture", strings.Join(captures, ", "))
	}
	res.CaptureFirstNs, res.CaptureLastNs = span.firstNs, span.lastNs

	series, res.Skipped, err = chooseSeries(series, span, opt)
	if err != nil {
		return res, err
	}

	sets, err := intervalSets(series, span, opt.WindowNs)
	if err != nil {
		return res, err
	}
	// Pass 2: every frame into every interval set.
	if err := binCaptures(captures, sets, opt, &res); err != nil {
		return res, err
	}
	if err := writeJoined(out, series, sets, span, opt, &res); err != nil {
		return res, err
	}
	for _, in := range series {
		res.Series = append(res.Series, SeriesResult{File: in.file, Source: in.source(), Clock: in.s.Clock.String(),
			OffsetNs: in.offsetNs, Estimate: in.estimate, Evidence: in.evidence, NoEvidence: in.noEvidence, Better: in.better})
	}
	if len(span.damaged) > 0 { // out is written, from the records before the damage
		return res, fmt.Errorf("%w; %s written from the %d frames before it", errors.Join(span.damaged...), out, res.Frames+res.NotSelected)
	}
	return res, nil
}

// alignSeries sets the series' offset (given or estimated) and refuses a
// series that does not overlap the capture in time.
func alignSeries(in *inSeries, span captureSpan, opt Options) error {
	epoch := in.s.Clock == telemetry.ClockHost || in.s.Clock == telemetry.ClockNICRealTime
	switch {
	case opt.OffsetGiven:
		in.offsetNs = opt.OffsetNs
		if overlaps(in, span) {
			ev, err := evidenceAt(span, in.s, in.offsetNs)
			if err != nil {
				in.noEvidence = err.Error()
			}
			in.evidence = ev
			if est, err := estimateOffset(span, in.s); err == nil && ev != nil && est.fitsBetterThan(in.offsetNs, ev) {
				in.better = &est
			}
		}
	case epoch && !overlaps(in, span):
		// Clocks on the same epoch that do not even overlap are not a
		// matter for estimation: the files do not belong together, or the
		// clocks are far apart and the user must say by how much.
		return &OptionError{"OffsetNs", noOverlap(in, span, "; if the clocks differ, give the offset")}
	default:
		est, err := estimateOffset(span, in.s)
		if err != nil {
			return &OptionError{"OffsetNs", fmt.Errorf("cannot estimate the clock offset of %s: %v; give the offset", in.name(), err)}
		}
		in.offsetNs, in.estimate, in.evidence = est.OffsetNs, &est, &est.OffsetEvidence
	}
	if !overlaps(in, span) {
		return noOverlap(in, span, "")
	}
	in.times = in.s.Times(nil)
	for i := range in.times {
		in.times[i] += in.offsetNs
	}
	return nil
}

func overlaps(in *inSeries, span captureSpan) bool {
	a, b := in.spanNs()
	return a <= span.lastNs && b >= span.firstNs
}

func noOverlap(in *inSeries, span captureSpan, hint string) error {
	a, b := in.spanNs()
	off := ""
	if in.offsetNs != 0 {
		off = fmt.Sprintf(" after an offset of %s", units.FormatSignedNs(in.offsetNs))
	}
	return fmt.Errorf("%s does not overlap the capture in time%s: the capture spans %s, the telemetry (clock %s) spans %s%s",
		in.name(), off, fmtRange(span.firstNs, span.lastNs), in.s.Clock, fmtRange(a, b), hint)
}

// fmtRange shows a time range as UTC times with its length.
func fmtRange(a, b int64) string {
	ts := func(ns int64) string { return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z") }
	return fmt.Sprintf("%s .. %s (%s)", ts(a), ts(b), units.FormatNs(b-a))
}

// intervalSets makes the binners: one per distinct set of sample times (or
// one for --window), and points each series at its set.
func intervalSets(series []*inSeries, span captureSpan, windowNs int64) ([]*binner, error) {
	if windowNs > 0 {
		w, err := windowSet(series, span, windowNs)
		if err != nil {
			return nil, err
		}
		return []*binner{w}, nil
	}
	var sets []*binner
	for _, in := range series {
		starts := make([]int64, len(in.times))
		starts[0] = in.times[0] // sample 0 has no interval before it: [t0, t0) holds nothing
		copy(starts[1:], in.times[:len(in.times)-1])
		var found *binner
		for _, b := range sets {
			if slices.Equal(b.endNs, in.times) {
				found = b
				break
			}
		}
		if found == nil {
			found = newBinner(starts, in.times)
			sets = append(sets, found)
		}
		in.set = found
	}
	return sets, nil
}

// binCaptures reads every frame of the captures, merged in time order, into
// every interval set.
func binCaptures(captures []string, sets []*binner, opt Options, res *Result) error {
	in, err := openFrames(captures, opt.OnDecodeError, opt.Workers)
	if err != nil {
		return err
	}
	defer in.Close()
	rt := newRetransmits()
	cong := newCongestionTracker(opt.PauseBitsPerSec)
	var read int64 // frames read, selected or not
	for {
		f, file, err := in.Next()
		if err == io.EOF {
			break
		}
		if read++; opt.Progress != nil && read&0xFFFF == 0 {
			done, _ := in.Progress()
			opt.Progress(int(read), done)
		}
		if opt.Select != nil {
			keep, done := opt.Select.Keep(f)
			if done {
				break
			}
			if !keep {
				res.NotSelected++
				continue
			}
		}
		d := directionOf(f, &opt.Local, in.LinkType(file))
		if d != dirUnknown {
			res.DirectionKnown = true
		}
		p := factsOf(f, d, rt)
		for _, b := range sets {
			b.add(&p)
		}
		cong.add(f, sets)
		res.Frames++
	}
	res.DecodeErrors = int64(in.Stats().DecodeErrors)
	cong.finish(sets)
	for _, b := range sets {
		b.closeCurrent()
		res.LateIPDs += b.lateIPDs
	}
	if res.Frames == 0 && res.NotSelected == 0 {
		return errors.New("no frames in the captures")
	}
	return nil
}

package correlate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/internal/samefile"
	"github.com/ibscope/ibscope/telemetry"
)

// inSeries is one telemetry series with where it came from and how it lines
// up with the capture.
type inSeries struct {
	s        *telemetry.Series
	file     string
	offsetNs int64           // capture time = telemetry time + offsetNs
	estimate *OffsetEstimate // nil when the offset was given
	// evidence is how well the counters follow the capture at offsetNs;
	// nil when it could not be had, noEvidence saying why.
	evidence   *OffsetEvidence
	noEvidence string
	better     *OffsetEstimate // for a given offset, one the counters fit clearly better
	times      []int64         // nominal sample times, on the capture clock
	set        *binner         // the capture binned into this series' intervals (not with Options.WindowNs)
}

// name is how messages refer to the series.
func (in *inSeries) name() string { return in.file + " (" + in.s.Source.String() + ")" }

// source is the series' source column: DEVICE/PORT, or the telemetry file's
// base name when the file does not say which port it describes, so the rows
// of two such files stay apart.
func (in *inSeries) source() string {
	if in.s.Source == (telemetry.Source{}) {
		return filepath.Base(in.file)
	}
	return in.s.Source.String()
}

// readTelemetry reads every series of every file. A file without samples, or
// a series whose time goes backwards, is refused: its intervals would not
// tile the time axis.
func readTelemetry(paths []string, opts *telemetry.Options, maxValues int64) ([]*inSeries, []string, error) {
	if err := samefile.Check(paths); err != nil {
		return nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	var out []*inSeries
	var warnings []string
	var values int64
	for _, p := range paths {
		ss, err := telemetry.ReadFile(p, opts)
		if err != nil {
			return nil, nil, err // "telemetry: FILE:LINE: ...", context enough
		}
		for _, s := range ss {
			values += int64(s.Len()) * int64(len(s.Counters)+3)
		}
		if values > maxValues {
			return nil, nil, fmt.Errorf("%s: the telemetry read so far holds %d values (samples × (counters + 3)), past the bound of %d (--max-telemetry-values): "+
				"cut the telemetry to the capture's time, or raise --max-telemetry-values (each value costs ~40 bytes while correlating)", p, values, maxValues)
		}
		n, problems := 0, 0
		var reasons []string
		for _, s := range ss {
			problems += s.WarningTotal()
			for _, w := range s.Warnings {
				switch {
				case w.Msg == "no samples": // what the error says anyway
					problems--
				case len(reasons) < maxReasons:
					reasons = append(reasons, lineReason(w))
				}
			}
			for _, w := range s.Warnings {
				warnings = append(warnings, w.String())
			}
			if s.Len() == 0 {
				continue
			}
			n++
			in := &inSeries{s: s, file: p}
			if err := in.checkOrder(); err != nil {
				return nil, nil, err
			}
			out = append(out, in)
		}
		if n == 0 {
			why := ""
			if len(reasons) > 0 {
				// Without them the rows' faults (warnings the caller never
				// sees after this error) stay hidden.
				why = fmt.Sprintf(": %d problem(s) reading it, the first: %s", problems, strings.Join(reasons, "; "))
			}
			return nil, nil, fmt.Errorf("%s: no telemetry samples in the file%s", p, why)
		}
	}
	if err := checkJoinedWidth(out, paths); err != nil {
		return nil, nil, err
	}
	return out, warnings, nil
}

// maxReasons is how many of a file's warnings the no-samples error quotes.
const maxReasons = 3

// lineReason is a warning without its file name, which the error gives once.
func lineReason(w telemetry.Warning) string {
	if w.Line == 0 {
		return w.Msg
	}
	return fmt.Sprintf("line %d: %s", w.Line, w.Msg)
}

func (in *inSeries) checkOrder() error {
	s := in.s
	if s.Clock == telemetry.ClockNone {
		// A line the reader passed over may be the date line in a form it
		// does not read: name it.
		unread := ""
		for _, w := range s.Warnings {
			if strings.Contains(w.Msg, "not a perfquery line") {
				unread = fmt.Sprintf(" (%s; the date forms read are listed by ibanalyze correlate --help)", lineReason(w))
				break
			}
		}
		return fmt.Errorf("%s: the samples carry no timestamps%s, so they cannot be put on the capture's time axis; "+
			"save a date line before each sample (perfquery: while sleep 1; do date; perfquery -x; done)", in.name(), unread)
	}
	for i := 1; i < s.Len(); i++ {
		if s.TimeNs(i) >= s.TimeNs(i-1) {
			continue
		}
		// The reader warned, naming the line; repeat its words.
		for _, w := range s.Warnings {
			if strings.Contains(w.Msg, "backwards") {
				return fmt.Errorf("%s: samples out of time order, cannot form intervals: %s", in.name(), w)
			}
		}
		return fmt.Errorf("%s: sample_id %d (at %d ns) is earlier than sample_id %d (at %d ns): samples out of time order, cannot form intervals",
			in.name(), s.SampleID[i], s.TimeNs(i), s.SampleID[i-1], s.TimeNs(i-1))
	}
	return nil
}

// spanNs is the series' first and last sample time on the capture clock.
func (in *inSeries) spanNs() (int64, int64) {
	return in.s.TimeNs(0) + in.offsetNs, in.s.TimeNs(in.s.Len()-1) + in.offsetNs
}

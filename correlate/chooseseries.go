package correlate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// SkippedSeries is a telemetry series Correlate did not join, and why.
type SkippedSeries struct {
	File, Source string
	Reason       string
	// Estimate is the offset estimate that showed the series' counters do
	// not follow the capture; nil when there was none (a given offset).
	Estimate *OffsetEstimate
	// Evidence is how well they follow it at the offset estimated or
	// given; nil when there was none.
	Evidence *OffsetEvidence
}

// chooseSeries aligns the series with the capture (alignSeries) and picks
// the ones to join: the ports named (Options.Ports); else the series whose
// counters follow the capture at their offset, estimated or given (not
// weak: followsCapture), the ports the capture saw, with the series whose
// counters cannot be compared (no byte or packet counters, too few
// intervals). A series that cannot be aligned (no counters to estimate
// from, no overlap) is left out while another is joined. When none
// follows the capture, the weak ones are all joined, for the caller to
// warn about; when none could be aligned, the first failure is the error.
func chooseSeries(series []*inSeries, span captureSpan, opt Options) ([]*inSeries, []SkippedSeries, error) {
	skip := func(in *inSeries, why string) SkippedSeries {
		return SkippedSeries{File: in.file, Source: in.source(), Reason: why, Estimate: in.estimate, Evidence: in.evidence}
	}
	if len(opt.Ports) > 0 {
		if err := checkNamed(series, opt.Ports); err != nil {
			return nil, nil, err
		}
		var named []*inSeries
		var skipped []SkippedSeries
		for _, in := range series {
			if !slices.Contains(opt.Ports, in.source()) {
				skipped = append(skipped, skip(in, "not a port named to join"))
				continue
			}
			if err := alignSeries(in, span, opt); err != nil {
				return nil, nil, err
			}
			named = append(named, in)
		}
		return named, skipped, nil
	}
	var follow, weak []*inSeries
	var skipped, weakSkipped []SkippedSeries
	var firstErr error
	for _, in := range series {
		if err := alignSeries(in, span, opt); err != nil {
			firstErr = cmp.Or(firstErr, err)
			skipped = append(skipped, skip(in, err.Error()))
			continue
		}
		if ok, why := in.followsCapture(); !ok {
			weak = append(weak, in)
			weakSkipped = append(weakSkipped, skip(in, "not a port the capture saw: "+why))
			continue
		}
		follow = append(follow, in)
	}
	switch {
	case len(follow) > 0:
		return follow, append(skipped, weakSkipped...), nil
	case len(weak) > 0:
		return weak, skipped, nil
	}
	return nil, nil, firstErr
}

// followsCapture reports whether the series' counters follow the capture
// at its offset, and if not, why: an estimate that is not OffsetWeak, or
// at a given offset r >= MinFollowR. A series without evidence cannot be
// told apart and counts as following.
func (in *inSeries) followsCapture() (bool, string) {
	switch {
	case in.estimate != nil:
		return in.estimate.Quality() != OffsetWeak, in.estimate.Why()
	case in.evidence != nil && !(in.evidence.R >= MinFollowR):
		return false, fmt.Sprintf("the counters hardly follow the capture at the given offset: r = %.3f over %d intervals, below %.1f",
			in.evidence.R, in.evidence.Intervals, MinFollowR)
	}
	return true, ""
}

// checkNamed refuses a named port the telemetry does not hold, listing
// the ones it does.
func checkNamed(series []*inSeries, ports []string) error {
	var have []string
	for _, in := range series {
		have = append(have, in.source())
	}
	for _, p := range ports {
		if !slices.Contains(have, p) {
			return &OptionError{"Ports", fmt.Errorf("port %s is not in the telemetry, which describes %s", p, strings.Join(have, ", "))}
		}
	}
	return nil
}

package correlate

import (
	"fmt"

	"github.com/ibscope/ibscope/internal/units"
)

// OffsetQuality says how far an offset estimate can be trusted, from its
// evidence: how well the series' counters follow the capture at the offset
// (R) and how much better than at any other offset (NextR).
type OffsetQuality uint8

const (
	// OffsetClear: the counters follow the capture (R ≥ MinFollowR) and
	// fit at no other offset nearly as well.
	OffsetClear OffsetQuality = iota
	// OffsetAmbiguous: they follow the capture, but another offset at least
	// two samples away (NextOffsetNs) fits nearly as well: the traffic is
	// too regular to pin the offset down.
	OffsetAmbiguous
	// OffsetWeak: they hardly follow the capture (R < MinFollowR): the
	// counters of another port, or of traffic the capture does not hold.
	OffsetWeak
)

// MinFollowR is the least correlation at which a series' counters are
// taken to follow the capture: they explain r² ≥ 64 % of how the
// capture's counts vary from interval to interval.
const MinFollowR = 0.8

// ambiguousFactor and ambiguousMargin say when the next best offset fits
// nearly as well: when the variation it leaves unexplained (1 − r²) is
// less than ambiguousFactor times the best offset's plus ambiguousMargin.
// Comparing what is left unexplained, not r itself, tells r = 1.000 against
// 0.988 (nothing left against 2.4 %: clear) from 0.95 against 0.94 (9.8 %
// against 11.6 %: ambiguous), which the difference in r alone does not.
// Without a next candidate NextR is 0, which leaves everything
// unexplained: never ambiguous above MinFollowR.
const (
	ambiguousFactor = 2
	ambiguousMargin = 0.01
)

func (q OffsetQuality) String() string {
	switch q {
	case OffsetClear:
		return "clear"
	case OffsetAmbiguous:
		return "ambiguous"
	}
	return "weak"
}

// unexplained is the share of the capture's variation a fit with
// correlation r leaves unexplained; a negative or undefined r explains
// nothing.
func unexplained(r float64) float64 {
	if !(r > 0) {
		return 1
	}
	return 1 - r*r
}

// Quality judges the estimate by its evidence.
func (e *OffsetEstimate) Quality() OffsetQuality {
	switch {
	case !(e.R >= MinFollowR):
		return OffsetWeak
	case unexplained(e.NextR) < ambiguousFactor*unexplained(e.R)+ambiguousMargin:
		return OffsetAmbiguous
	}
	return OffsetClear
}

// Why says in words what Quality found, with the numbers it rests on.
func (e *OffsetEstimate) Why() string {
	switch e.Quality() {
	case OffsetWeak:
		return fmt.Sprintf("the counters hardly follow the capture: r = %.3f at the best offset, below %.1f", e.R, MinFollowR)
	case OffsetAmbiguous:
		return fmt.Sprintf("another offset, %s, fits nearly as well (r = %.3f against %.3f): the traffic is too regular to tell them apart",
			units.FormatSignedNs(e.NextOffsetNs), e.NextR, e.R)
	}
	return fmt.Sprintf("r = %.3f; the next best offset, %s, r = %.3f", e.R, units.FormatSignedNs(e.NextOffsetNs), e.NextR)
}

// fitsBetterThan reports whether the estimate lines the counters up with
// the capture clearly better than a given offset with evidence ev does: it
// is more than a grid step away, not weak, and ev leaves more than
// ambiguousFactor times its unexplained share (plus ambiguousMargin)
// unexplained; the rule that tells an ambiguous estimate, turned round.
func (e *OffsetEstimate) fitsBetterThan(givenNs int64, ev *OffsetEvidence) bool {
	d := e.OffsetNs - givenNs
	return (d > e.ResolutionNs || d < -e.ResolutionNs) && e.Quality() != OffsetWeak &&
		unexplained(ev.R) >= ambiguousFactor*unexplained(e.R)+ambiguousMargin
}

package correlate

import "testing"

// The labels match the numbers: the examples the rule is stated with.
func TestOffsetQuality(t *testing.T) {
	for _, tc := range []struct {
		r, next float64
		want    OffsetQuality
	}{
		{1.000, 0.988, OffsetClear},   // ibsim's tapped port: nothing left unexplained against 2.4 %
		{0.9999, 0.988, OffsetClear},  // 0.02 % against 2.4 %
		{0.95, 0.94, OffsetAmbiguous}, // 9.8 % against 11.6 %
		{0.99, 0.95, OffsetClear},     // 2 % against 9.8 %
		{0.99, 0.985, OffsetAmbiguous},
		{0.85, 0, OffsetClear},          // no other candidate
		{0.537, 0.196, OffsetWeak},      // issue 24's sender port
		{-0.2, -0.5, OffsetWeak},        // counters that move against the capture
		{0.8, 0.79, OffsetAmbiguous},    // at the threshold, a near twin
		{0.7999, 0.1, OffsetWeak},       // just below it
		{1.000, 1.000, OffsetAmbiguous}, // periodic traffic: two offsets fit perfectly
		{0.999999, 0.9999, OffsetAmbiguous},
	} {
		e := OffsetEstimate{OffsetEvidence: OffsetEvidence{R: tc.r}, NextR: tc.next, NextOffsetNs: 175_000}
		if got := e.Quality(); got != tc.want {
			t.Errorf("r = %v, next r = %v: %s, want %s (%s)", tc.r, tc.next, got, tc.want, e.Why())
		}
	}
}

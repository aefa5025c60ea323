package correlate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/ibscope/ibscope/telemetry"
)

// OffsetEvidence is how well a series' counters follow the capture at an
// offset (estimated, or given with --offset): the evidence an offset is
// judged by (OffsetEstimate.Quality, chooseSeries).
type OffsetEvidence struct {
	// R is the Pearson correlation, at the offset, between the telemetry's
	// per-interval counter deltas and the capture's bytes (or packets) in
	// the same (shifted) intervals: 1 is a perfect match.
	R         float64
	Intervals int // telemetry intervals inside the capture at the offset: the matched samples
	Counters  []string
	// Packets says the counters count packets (the series has no byte
	// counters): the capture's frames were matched against them.
	Packets bool
}

// OffsetEstimate is the clock offset between a telemetry series and the
// capture found by cross-correlating the capture's rate with the series'
// counters (byte counters, or packet counters where it has none): capture
// time = telemetry time + OffsetNs. Its evidence (R, the confidence) is
// that at OffsetNs.
type OffsetEstimate struct {
	OffsetNs int64
	OffsetEvidence
	// NextOffsetNs and NextR are the best other candidate, at least two
	// sample intervals away: a NextR close to R means the traffic is too
	// regular to pin the offset down.
	NextOffsetNs int64
	NextR        float64
	ResolutionNs int64 // grid step of the search; the result is refined below it
}

// offsetInterval is one telemetry interval with its counters' delta.
type offsetInterval struct {
	startNs, endNs int64   // on the telemetry clock
	amount         float64 // bytes, or packets (offsetSignal.packets)
}

// offsetSignal is what a series' offset is estimated from: the columns
// whose deltas are bytes moved, or else packets moved, and which.
type offsetSignal struct {
	cols    []int
	packets bool
}

// offsetSignalOf picks the counters of s to compare with the capture: its
// byte counters, else its packet counters (telemetry.PacketCounters).
func offsetSignalOf(s *telemetry.Series) (offsetSignal, error) {
	if cols := byteCounters(s); len(cols) > 0 {
		return offsetSignal{cols: cols}, nil
	}
	if cols := telemetry.PacketCounters(s); len(cols) > 0 {
		return offsetSignal{cols: cols, packets: true}, nil
	}
	return offsetSignal{}, fmt.Errorf("none of its counters is known to count bytes or packets (%s): a byte counter is one whose unit is bytes "+
		"(perfquery's and sysfs' port_xmit_data, in 4-byte words; a DOCA column whose data ID the catalogue knows, or whose name ends in _bytes), "+
		"a packet counter port_xmit_packets, port_rcv_packets, rxe's sent_pkts, rcvd_pkts, tx_packets or rx_packets", counterUnits(s))
}

// counterUnits lists a series' first counters with their units, as the
// reader took them: "port_xmit_data (count), np_cnp_sent (count), and 3 more".
func counterUnits(s *telemetry.Series) string {
	const shown = 4
	var parts []string
	for i, c := range s.Counters {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(s.Counters)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", c.Name, c.Unit))
	}
	if len(parts) == 0 {
		return "it has none"
	}
	return strings.Join(parts, ", ")
}

// byteCounters are the columns whose deltas are bytes moved: what the
// capture's byte rate is compared with.
func byteCounters(s *telemetry.Series) []int {
	var cols []int
	for i, c := range s.Counters {
		if base, _ := c.Unit.Base(); base == telemetry.UnitBytes && c.Kind == telemetry.KindCounter {
			cols = append(cols, i)
		}
	}
	return cols
}

// telemetryIntervals sums the signal's counter deltas per interval, leaving
// out intervals whose deltas cannot be trusted.
func telemetryIntervals(s *telemetry.Series, sig offsetSignal) []offsetInterval {
	var out []offsetInterval
	const untrusted = telemetry.FlagNoPrev | telemetry.FlagNoTime | telemetry.FlagReset | telemetry.FlagMissing
	for i := 1; i < s.Len(); i++ {
		iv := offsetInterval{startNs: s.TimeNs(i - 1), endNs: s.TimeNs(i)}
		ok := iv.endNs > iv.startNs
		for _, col := range sig.cols {
			d := s.Delta(i, col)
			if d.Flags&untrusted != 0 {
				ok = false
				break
			}
			v, _ := s.Counters[col].ToBase(d.Value)
			iv.amount += float64(v)
		}
		if ok {
			out = append(out, iv)
		}
	}
	return out
}

// medianIntervalNs is the typical sample spacing of a series.
func medianIntervalNs(ivs []offsetInterval) int64 {
	d := make([]int64, len(ivs))
	for i, iv := range ivs {
		d[i] = iv.endNs - iv.startNs
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// histBinNs is the capture histogram resolution offset estimation wants for
// a series: an eighth of its sample spacing (finer cannot be resolved from
// interval totals; the refinement interpolates within bins), at least 1 µs.
func histBinNs(s *telemetry.Series, sig offsetSignal) (int64, error) {
	ivs := telemetryIntervals(s, sig)
	if len(ivs) < minOffsetIntervals {
		return 0, fmt.Errorf("it has %d usable intervals of %s counters, need %d", len(ivs), sig.what(), minOffsetIntervals)
	}
	return max(medianIntervalNs(ivs)/8, 1000), nil
}

func (sig offsetSignal) what() string {
	if sig.packets {
		return "packet"
	}
	return "byte"
}

// minOffsetIntervals is the fewest telemetry intervals inside the capture
// that an estimate may rest on.
const minOffsetIntervals = 8

// maxFFTLen bounds the cross-correlation's grid (two 4M-point transforms).
const maxFFTLen = 1 << 23

// estimateOffset finds the offset that best lines up the series' counters
// (offsetSignalOf) with the capture's histogram of the same kind: a
// normalised cross-correlation on the histogram's grid (by FFT) picks the
// candidate, and the Pearson correlation of interval totals refines and
// scores it. The histogram may be coarsened in place.
func estimateOffset(span captureSpan, s *telemetry.Series) (OffsetEstimate, error) {
	sig, ivs, h, err := offsetInputs(span, s)
	if err != nil {
		return OffsetEstimate{}, err
	}
	est := OffsetEstimate{OffsetEvidence: OffsetEvidence{Packets: sig.packets, Counters: sig.names(s)}}
	t0, t1 := ivs[0].startNs, ivs[len(ivs)-1].endNs
	for len(h.counts)+int((t1-t0)/h.binNs)+2 > maxFFTLen/2 {
		h.coarsen()
	}
	b := h.binNs
	est.ResolutionNs = b
	x := append([]float64(nil), h.counts...)
	y, covered := spreadIntervals(ivs, t0, b)
	demean(x, nil)
	demean(y, covered)

	medBins := int(medianIntervalNs(ivs)/b) + 1
	ls := newLagScores(x, y, minOffsetIntervals*medBins)
	best, bestS := ls.best(1, 0)
	if math.IsInf(bestS, -1) {
		return est, fmt.Errorf("its %s counters and the capture's %ss never overlap enough, or do not vary, to be compared", sig.what(), sig.what())
	}
	next, nextS := ls.best(best-2*medBins, best+2*medBins)

	// Offset for lag L: capture bin k+L lines up with telemetry bin k.
	lagOffset := func(L int) int64 { return h.originNs - t0 + int64(L)*b }
	cum := h.cumulative()
	rAt := func(off int64) (float64, int) { return intervalR(h, cum, ivs, off, span.firstNs, span.lastNs) }
	// Refine within ±2 bins in eighth-bin steps, scoring by interval totals.
	est.R = math.Inf(-1)
	for j := -16; j <= 16; j++ {
		off := lagOffset(best) + int64(j)*b/8
		if r, m := rAt(off); m >= minOffsetIntervals && r > est.R {
			est.OffsetNs, est.R, est.Intervals = off, r, m
		}
	}
	if math.IsInf(est.R, -1) {
		_, m := rAt(lagOffset(best))
		return est, fmt.Errorf("only %d of its intervals fall inside the capture at the best offset, need %d (with varying traffic)", m, minOffsetIntervals)
	}
	if !math.IsInf(nextS, -1) {
		est.NextOffsetNs = lagOffset(next)
		est.NextR, _ = rAt(est.NextOffsetNs)
	}
	return est, nil
}

// spreadIntervals spreads each telemetry interval's amount evenly over the
// bins of b ns from t0 that it covers; covered marks the bins any interval
// reaches.
func spreadIntervals(ivs []offsetInterval, t0, b int64) (y []float64, covered []bool) {
	ny := int((ivs[len(ivs)-1].endNs-t0)/b) + 1
	y, covered = make([]float64, ny), make([]bool, ny)
	for _, iv := range ivs {
		rate := iv.amount / float64(iv.endNs-iv.startNs)
		for k := int((iv.startNs - t0) / b); k < ny && t0+int64(k)*b < iv.endNs; k++ {
			lo, hi := max(iv.startNs, t0+int64(k)*b), min(iv.endNs, t0+int64(k+1)*b)
			y[k] += rate * float64(hi-lo)
			covered[k] = true
		}
	}
	return y, covered
}

// lagScores scores each lag L (capture bin k+L against telemetry bin k) by
// the Pearson correlation of the bins that overlap at it, from one FFT
// cross-correlation and prefix sums of squares.
type lagScores struct {
	corr       []float64 // corr[L mod n] = n · Σ_k x[k+L]·y[k]
	px, py     []float64 // prefix sums of x² and y²
	n          int
	nx, ny     int
	minOverlap int // bins that must overlap for a lag to count
}

// newLagScores prepares the scores of demeaned x (capture) and y
// (telemetry); a lag counts when half the shorter series overlaps, or
// minBins, whichever is more (at most the shorter series).
func newLagScores(x, y []float64, minBins int) *lagScores {
	n := 1
	for n < len(x)+len(y) {
		n <<= 1
	}
	fft := fourier.NewFFT(n)
	xp, yp := make([]float64, n), make([]float64, n)
	copy(xp, x)
	copy(yp, y)
	X := fft.Coefficients(nil, xp)
	Y := fft.Coefficients(nil, yp)
	for i := range X {
		X[i] *= complex(real(Y[i]), -imag(Y[i]))
	}
	nx, ny := len(x), len(y)
	minOverlap := min(max(min(nx, ny)/2, minBins), min(nx, ny))
	return &lagScores{corr: fft.Sequence(nil, X), px: squares(x), py: squares(y), n: n, nx: nx, ny: ny, minOverlap: minOverlap}
}

// score is lag L's correlation; false when too few bins overlap or one
// side does not vary there.
func (ls *lagScores) score(L int) (float64, bool) {
	lo, hi := max(0, -L), min(ls.ny, ls.nx-L)
	if hi-lo < ls.minOverlap {
		return 0, false
	}
	sxx, syy := ls.px[hi+L]-ls.px[lo+L], ls.py[hi]-ls.py[lo]
	if sxx <= 0 || syy <= 0 {
		return 0, false
	}
	c := ls.corr[(L%ls.n+ls.n)%ls.n] / float64(ls.n)
	return c / math.Sqrt(sxx*syy), true
}

// best is the best-scoring lag outside skipLo..skipHi (an empty range,
// skipLo > skipHi, skips none), the first of equals; its score is -Inf
// when no lag counts.
func (ls *lagScores) best(skipLo, skipHi int) (int, float64) {
	best, bestS := 0, math.Inf(-1)
	for L := -(ls.ny - 1); L < ls.nx; L++ {
		if L >= skipLo && L <= skipHi {
			continue
		}
		if sc, ok := ls.score(L); ok && sc > bestS {
			best, bestS = L, sc
		}
	}
	return best, bestS
}

// evidenceAt is the evidence for a given offset: how well the series'
// counters follow the capture at it. It fails when the series has no
// counters to compare or too few intervals inside the capture.
func evidenceAt(span captureSpan, s *telemetry.Series, offNs int64) (*OffsetEvidence, error) {
	sig, ivs, h, err := offsetInputs(span, s)
	if err != nil {
		return nil, err
	}
	r, n := intervalR(h, h.cumulative(), ivs, offNs, span.firstNs, span.lastNs)
	if n < minOffsetIntervals || math.IsNaN(r) {
		return nil, fmt.Errorf("%d of its intervals of %s counters fall inside the capture at the offset (need %d, with varying traffic)", n, sig.what(), minOffsetIntervals)
	}
	return &OffsetEvidence{R: r, Intervals: n, Packets: sig.packets, Counters: sig.names(s)}, nil
}

// offsetInputs is what estimating an offset and judging a given one both
// compare: the series' signal (offsetSignalOf), its usable intervals, and
// the capture's histogram of the same kind. It fails when the series has
// no counters to compare or too few usable intervals.
func offsetInputs(span captureSpan, s *telemetry.Series) (offsetSignal, []offsetInterval, *countHist, error) {
	sig, err := offsetSignalOf(s)
	if err != nil {
		return sig, nil, nil, err
	}
	ivs := telemetryIntervals(s, sig)
	if len(ivs) < minOffsetIntervals {
		return sig, nil, nil, fmt.Errorf("it has %d usable intervals of %s counters, need %d", len(ivs), sig.what(), minOffsetIntervals)
	}
	h := span.bytes
	if sig.packets {
		h = span.packets
	}
	if h == nil {
		return sig, nil, nil, fmt.Errorf("no capture histogram of %ss was made", sig.what()) // a bug: Correlate asks for what the series need
	}
	return sig, ivs, h, nil
}

// names are the names of the signal's counters in s.
func (sig offsetSignal) names(s *telemetry.Series) []string {
	out := make([]string, 0, len(sig.cols))
	for _, c := range sig.cols {
		out = append(out, s.Counters[c].Name)
	}
	return out
}

// demean subtracts the mean over the covered entries (all when covered is
// nil) and zeroes the rest.
func demean(v []float64, covered []bool) {
	var sum float64
	var n int
	for i, x := range v {
		if covered == nil || covered[i] {
			sum += x
			n++
		}
	}
	if n == 0 {
		return
	}
	m := sum / float64(n)
	for i := range v {
		if covered == nil || covered[i] {
			v[i] -= m
		} else {
			v[i] = 0
		}
	}
}

// squares returns prefix sums of v².
func squares(v []float64) []float64 {
	p := make([]float64, len(v)+1)
	for i, x := range v {
		p[i+1] = p[i] + x*x
	}
	return p
}

// intervalR is the Pearson correlation between the telemetry intervals'
// amounts and the capture's counts in the same intervals shifted by off,
// over the intervals that lie inside the capture; it also returns how many
// those are.
func intervalR(h *countHist, cum []float64, ivs []offsetInterval, off, capFirstNs, capLastNs int64) (float64, int) {
	var n, sx, sy, sxx, syy, sxy float64
	for _, iv := range ivs {
		a, e := iv.startNs+off, iv.endNs+off
		if a < capFirstNs || e > capLastNs {
			continue
		}
		c := h.countBefore(cum, e) - h.countBefore(cum, a)
		n++
		sx += iv.amount
		sy += c
		sxx += iv.amount * iv.amount
		syy += c * c
		sxy += iv.amount * c
	}
	if n < 2 {
		return math.NaN(), int(n)
	}
	cov := sxy - sx*sy/n
	vx, vy := sxx-sx*sx/n, syy-sy*sy/n
	if vx <= 0 || vy <= 0 {
		return math.NaN(), int(n)
	}
	return cov / math.Sqrt(vx*vy), int(n)
}

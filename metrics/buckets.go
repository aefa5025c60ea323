package metrics

import (
	"fmt"

	"github.com/ibscope/ibscope/analyze"
)

// maxIPDBuckets bounds the IPD histogram's buckets: each is a series.
const maxIPDBuckets = 200

// Defaults of the IPD histogram: exponential from 100 ns, 24 buckets
// (up to about 0.84 s), since live bins cannot be picked from the data.
const (
	DefaultIPDFirstNs = 100
	DefaultIPDBuckets = 24
)

// IPDBucketsNs turns a histogram spec of ibanalyze ipd's kinds (linear,
// exponential or free edges) into the upper bounds of Prometheus buckets,
// in ns. Prometheus buckets are cumulative and open below, so a leading
// edge of 0 adds nothing and is dropped; a zero width or count takes the
// defaults.
func IPDBucketsNs(h analyze.HistSpec) ([]float64, error) {
	var b []float64
	switch h.Mode {
	case analyze.ModeEdges:
		for _, e := range h.EdgesNs {
			if e > 0 {
				b = append(b, float64(e))
			}
		}
	case analyze.ModeLinear, analyze.ModeExp, "":
		width, n := h.BinNs, h.Bins
		if width < 0 || n < 0 {
			return nil, fmt.Errorf("IPD histogram: bin width %d ns and %d bins: want positive values", width, n)
		}
		if width == 0 {
			width = DefaultIPDFirstNs
		}
		if n == 0 {
			n = DefaultIPDBuckets
		}
		if n > maxIPDBuckets || (h.Mode == analyze.ModeExp && n > analyze.MaxExpBins) {
			return nil, fmt.Errorf("IPD histogram: %d bins, at most %d", n, min(maxIPDBuckets, analyze.MaxExpBins))
		}
		edge := float64(width)
		for range n {
			b = append(b, edge)
			if h.Mode == analyze.ModeExp {
				edge *= 2
			} else {
				edge += float64(width)
			}
		}
	default:
		return nil, fmt.Errorf("IPD histogram: unknown mode %q", h.Mode)
	}
	return b, checkBuckets(b)
}

// DefaultIPDBucketsNs are the buckets of IPDBucketsNs with --exp and no
// width or count.
func DefaultIPDBucketsNs() []float64 {
	b, _ := IPDBucketsNs(analyze.HistSpec{Mode: analyze.ModeExp})
	return b
}

package analyze

// maxSeriesBins bounds a throughput series: when a capture outlasts it, the
// bins double in width and pairs merge, so memory stays fixed per flow.
const maxSeriesBins = 512

// rateSeries counts bytes per time bin from a common origin.
type rateSeries struct {
	originNs int64
	binNs    int64
	bytes    []uint64
}

func newRateSeries(originNs, binNs int64) rateSeries {
	return rateSeries{originNs: originNs, binNs: binNs}
}

func (r *rateSeries) add(tsNs int64, b uint64) {
	i := max((tsNs-r.originNs)/r.binNs, 0)
	for i >= maxSeriesBins {
		r.coarsen()
		i /= 2
	}
	if int(i) >= len(r.bytes) {
		r.bytes = append(r.bytes, make([]uint64, int(i)+1-len(r.bytes))...)
	}
	r.bytes[i] += b
}

// coarsen doubles the bin width.
func (r *rateSeries) coarsen() {
	n := (len(r.bytes) + 1) / 2
	for i := range n {
		v := r.bytes[2*i]
		if 2*i+1 < len(r.bytes) {
			v += r.bytes[2*i+1]
		}
		r.bytes[i] = v
	}
	r.bytes = r.bytes[:n]
	r.binNs *= 2
}

// gbps returns the series re-binned to binNs (a power-of-two multiple of
// its own width) in Gb/s per bin.
func (r *rateSeries) gbps(binNs int64) []float64 {
	for r.binNs < binNs {
		r.coarsen()
	}
	out := make([]float64, len(r.bytes))
	for i, b := range r.bytes {
		out[i] = float64(b) * 8 / float64(r.binNs)
	}
	return out
}

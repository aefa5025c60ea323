package correlate

// countHist counts what the capture moved (bytes or packets) per
// fixed-width time bin: the capture's rate on a grid, what offset
// estimation correlates with the telemetry's counters.
type countHist struct {
	binNs    int64
	originNs int64     // start of bin 0, ns
	counts   []float64 // per bin
}

// maxHistBins bounds the histogram (32 MB); past it bins double in width.
const maxHistBins = 1 << 22

func newCountHist(binNs int64) *countHist { return &countHist{binNs: binNs} }

func (h *countHist) add(tsNs, n int64) {
	if h.counts == nil {
		h.originNs = tsNs - tsNs%h.binNs
		h.counts = make([]float64, 1, 1024)
	}
	if tsNs < h.originNs {
		// A file that starts earlier than the first: grow at the front.
		k := int((h.originNs - tsNs + h.binNs - 1) / h.binNs)
		h.counts = append(make([]float64, k, k+len(h.counts)), h.counts...)
		h.originNs -= int64(k) * h.binNs
	}
	i := int((tsNs - h.originNs) / h.binNs)
	for i >= len(h.counts) {
		if len(h.counts) >= maxHistBins {
			h.coarsen()
			i = int((tsNs - h.originNs) / h.binNs)
			continue
		}
		h.counts = append(h.counts, 0)
	}
	h.counts[i] += float64(n)
	if len(h.counts) > maxHistBins {
		h.coarsen()
	}
}

// coarsen merges pairs of bins, doubling their width.
func (h *countHist) coarsen() {
	n := (len(h.counts) + 1) / 2
	for i := 0; i < n; i++ {
		v := h.counts[2*i]
		if 2*i+1 < len(h.counts) {
			v += h.counts[2*i+1]
		}
		h.counts[i] = v
	}
	h.counts = h.counts[:n]
	h.binNs *= 2
}

// cumulative is the running count at each bin edge: cum[k] is the count
// in [originNs, originNs+k*binNs).
func (h *countHist) cumulative() []float64 {
	cum := make([]float64, len(h.counts)+1)
	for i, v := range h.counts {
		cum[i+1] = cum[i] + v
	}
	return cum
}

// countBefore is the count before tNs, from cum (cumulative()), spreading
// each bin's count evenly over it.
func (h *countHist) countBefore(cum []float64, tNs int64) float64 {
	if tNs <= h.originNs {
		return 0
	}
	x := float64(tNs-h.originNs) / float64(h.binNs)
	k := int(x)
	if k >= len(h.counts) {
		return cum[len(cum)-1]
	}
	return cum[k] + (x-float64(k))*h.counts[k]
}

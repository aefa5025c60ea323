package correlate

// byteHist counts capture bytes per fixed-width time bin: the capture's byte
// rate on a grid, what offset estimation correlates with the telemetry.
type byteHist struct {
	binNs    int64
	originNs int64     // start of bin 0, ns
	bytes    []float64 // per bin
}

// maxHistBins bounds the histogram (32 MB); past it bins double in width.
const maxHistBins = 1 << 22

func newByteHist(binNs int64) *byteHist { return &byteHist{binNs: binNs} }

func (h *byteHist) add(tsNs, n int64) {
	if h.bytes == nil {
		h.originNs = tsNs - tsNs%h.binNs
		h.bytes = make([]float64, 1, 1024)
	}
	if tsNs < h.originNs {
		// A file that starts earlier than the first: grow at the front.
		k := int((h.originNs - tsNs + h.binNs - 1) / h.binNs)
		h.bytes = append(make([]float64, k, k+len(h.bytes)), h.bytes...)
		h.originNs -= int64(k) * h.binNs
	}
	i := int((tsNs - h.originNs) / h.binNs)
	for i >= len(h.bytes) {
		if len(h.bytes) >= maxHistBins {
			h.coarsen()
			i = int((tsNs - h.originNs) / h.binNs)
			continue
		}
		h.bytes = append(h.bytes, 0)
	}
	h.bytes[i] += float64(n)
	if len(h.bytes) > maxHistBins {
		h.coarsen()
	}
}

// coarsen merges pairs of bins, doubling their width.
func (h *byteHist) coarsen() {
	n := (len(h.bytes) + 1) / 2
	for i := 0; i < n; i++ {
		v := h.bytes[2*i]
		if 2*i+1 < len(h.bytes) {
			v += h.bytes[2*i+1]
		}
		h.bytes[i] = v
	}
	h.bytes = h.bytes[:n]
	h.binNs *= 2
}

// cumulative is the running byte count at each bin edge: cum[k] is the
// bytes in [originNs, originNs+k*binNs).
func (h *byteHist) cumulative() []float64 {
	cum := make([]float64, len(h.bytes)+1)
	for i, v := range h.bytes {
		cum[i+1] = cum[i] + v
	}
	return cum
}

// bytesBefore is the bytes before tNs, from cum (cumulative()), spreading
// each bin's bytes evenly over it.
func (h *byteHist) bytesBefore(cum []float64, tNs int64) float64 {
	if tNs <= h.originNs {
		return 0
	}
	x := float64(tNs-h.originNs) / float64(h.binNs)
	k := int(x)
	if k >= len(h.bytes) {
		return cum[len(cum)-1]
	}
	return cum[k] + (x-float64(k))*h.bytes[k]
}

package analyze

// maxSeriesBins bounds a throughput series: when a capture outlasts it, the
// bins double in width and pairs merge, so a series never spans more than
// this many bins from the capture's start.
const maxSeriesBins = 512

// rateSeries counts bytes per time bin, the bins numbered from a common
// origin (the capture's first packet) so that every flow's series lines up.
// It holds only the bins from its own first packet to its last: a flow
// seen once costs one bin, not all the bins since the capture began.
// Its bins are DefaultThroughputBinNs << shift wide; the zero value is an
// empty series of the narrowest bins.
type rateSeries struct {
	bytes    []uint64 // bins startBin, startBin+1, ...
	startBin int32    // number of bytes[0], below maxSeriesBins
	shift    uint8
}

// binNs is the width of the series' bins.
func (r *rateSeries) binNs() int64 { return DefaultThroughputBinNs << r.shift }

// add counts b bytes at tsNs; originNs is the capture's first packet.
func (r *rateSeries) add(originNs, tsNs int64, b uint64) {
	i := max((tsNs-originNs)/r.binNs(), 0)
	for i >= maxSeriesBins {
		r.coarsen()
		i /= 2
	}
	r.put(int32(i), b)
}

// put counts b bytes in bin i (below maxSeriesBins).
func (r *rateSeries) put(i int32, b uint64) {
	switch {
	case len(r.bytes) == 0:
		r.startBin = i
		r.bytes = append(r.bytes, 0)
	case i < r.startBin: // a late packet before the first: grow at the front
		grown := make([]uint64, int(r.startBin-i)+len(r.bytes))
		copy(grown[r.startBin-i:], r.bytes)
		r.bytes, r.startBin = grown, i
	case int(i-r.startBin) >= len(r.bytes):
		r.bytes = append(r.bytes, make([]uint64, int(i-r.startBin)+1-len(r.bytes))...)
	}
	r.bytes[i-r.startBin] += b
}

// coarsen doubles the bin width: bins 2k and 2k+1 become bin k.
func (r *rateSeries) coarsen() {
	r.shift++
	if len(r.bytes) == 0 {
		return
	}
	start := r.startBin / 2
	n := 0
	for k, v := range r.bytes {
		// Targets never pass their sources (j <= k), and come in order.
		j := int((r.startBin+int32(k))/2 - start)
		if j == n {
			r.bytes[j] = v
			n++
		} else {
			r.bytes[j] += v
		}
	}
	r.bytes = r.bytes[:n]
	r.startBin = start
}

// gbps returns the series re-binned to binNs (a power-of-two multiple of
// its own width) in Gb/s per bin, from bin 0 (the origin). It leaves the
// series as it is (a report so far must not change the analysis): bin j
// of width 2^k times its own sums its bins j<<k .. (j+1)<<k - 1, as k
// coarsen steps would.
func (r *rateSeries) gbps(binNs int64) []float64 {
	k := uint8(0)
	for DefaultThroughputBinNs<<(r.shift+k) < binNs {
		k++
	}
	widthNs := float64(int64(DefaultThroughputBinNs) << (r.shift + k))
	if len(r.bytes) == 0 {
		return make([]float64, r.startBin)
	}
	out := make([]float64, (int(r.startBin)+len(r.bytes)-1)>>k+1)
	j, sum := int(r.startBin)>>k, uint64(0)
	for i, b := range r.bytes {
		if t := (int(r.startBin) + i) >> k; t != j {
			out[j] = float64(sum) * 8 / widthNs
			j, sum = t, 0
		}
		sum += b
	}
	out[j] = float64(sum) * 8 / widthNs
	return out
}

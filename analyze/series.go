package analyze

// maxSeriesBins bounds a throughput series: when a capture outlasts it, the
// bins double in width and pairs merge, so a series never spans more than
// this many bins from the capture's start.
const maxSeriesBins = 512

// rateSeries counts bytes per time bin, the bins numbered from a common
// origin (the capture's first packet) so that every flow's series lines up.
// It holds only the bins from its own first packet to its last: a flow
// seen once costs one bin, not all the bins since the capture began, and
// a flow whose packets all fell in one bin no list at all (that bin holds
// every byte the series counted, which its owner keeps anyway: the flow's
// wire bytes). Its bins are DefaultThroughputBinNs << shift wide; the zero
// value is an empty series of the narrowest bins.
type rateSeries struct {
	more     *[]uint64 // bins startBin, startBin+1, ... once there are two; nil with one
	startBin int16     // number of the first bin, below maxSeriesBins
	shift    uint8
	used     bool // a byte was counted
}

// binNs is the width of the series' bins.
func (r *rateSeries) binNs() int64 { return DefaultThroughputBinNs << r.shift }

// add counts b bytes at usBin, the number of the narrowest bin (of
// DefaultThroughputBinNs) its time falls in; before is the bytes the
// series counted so far. The caller divides once a packet by a constant,
// a multiplication, where a division by binNs would be a division.
// A packet in a bin the series has costs a few instructions and no call.
func (r *rateSeries) add(usBin int64, b, before uint64) {
	i := usBin >> r.shift
	if r.more != nil {
		if bins, j := *r.more, i-int64(r.startBin); uint64(j) < uint64(len(bins)) {
			bins[j] += b
			return
		}
	} else if r.used && i == int64(r.startBin) {
		return
	}
	r.addOutside(usBin, b, before)
}

// addOutside counts b bytes at usBin, outside the bins so far.
func (r *rateSeries) addOutside(usBin int64, b, before uint64) {
	i := usBin >> r.shift
	for i >= maxSeriesBins {
		r.coarsen()
		i = usBin >> r.shift
	}
	r.extend(int16(i), b, before)
}

// extend counts b bytes in bin i (below maxSeriesBins).
func (r *rateSeries) extend(i int16, b, before uint64) {
	switch {
	case !r.used:
		r.startBin, r.used = i, true
		return
	case r.more == nil && i == r.startBin:
		return
	case r.more == nil:
		r.more = &[]uint64{before}
	}
	bins := *r.more
	switch {
	case i < r.startBin: // a late packet before the first: grow at the front
		grown := make([]uint64, int(r.startBin-i)+len(bins))
		copy(grown[r.startBin-i:], bins)
		bins, r.startBin = grown, i
	case int(i-r.startBin) >= len(bins):
		bins = append(bins, make([]uint64, int(i-r.startBin)+1-len(bins))...)
	}
	bins[i-r.startBin] += b
	*r.more = bins
}

// bins returns the series' bins from startBin; total is every byte counted.
func (r *rateSeries) bins(total uint64) []uint64 {
	switch {
	case !r.used:
		return nil
	case r.more == nil:
		return []uint64{total}
	}
	return *r.more
}

// coarsen doubles the bin width: bins 2k and 2k+1 become bin k.
func (r *rateSeries) coarsen() {
	r.shift++
	if r.more == nil {
		r.startBin /= 2
		return
	}
	bins := *r.more
	start := r.startBin / 2
	n := 0
	for k, v := range bins {
		// Targets never pass their sources (j <= k), and come in order.
		j := int((r.startBin+int16(k))/2 - start)
		if j == n {
			bins[j] = v
			n++
		} else {
			bins[j] += v
		}
	}
	*r.more = bins[:n]
	r.startBin = start
}

// gbps returns the series re-binned to binNs (a power-of-two multiple of
// its own width) in Gb/s per bin, from bin 0 (the origin). It leaves the
// series as it is (a report so far must not change the analysis): bin j
// of width 2^k times its own sums its bins j<<k .. (j+1)<<k - 1, as k
// coarsen steps would.
// total is every byte the series counted.
//
// With the link rate known (linkGbps > 0) no bin is above it: a packet's
// bytes are counted in the bin of its timestamp, where a packet stamped
// near a bin's end is still on the wire in the next one, so a flow sending
// at the line rate read up to a packet a bin more than the link (42.8 Gb/s
// on 40 GbE, 4 us bins, ibsim's incast-small-roce). What a bin holds past
// the link is carried into the bins after it, as the wire carried it; what
// is still carried after the last bin goes into bins after it, at most
// maxSeriesBins in all, the rest into the last: no byte is lost.
func (r *rateSeries) gbps(binNs int64, total uint64, linkGbps float64) []float64 {
	k := uint8(0)
	for DefaultThroughputBinNs<<(r.shift+k) < binNs {
		k++
	}
	widthNs := float64(int64(DefaultThroughputBinNs) << (r.shift + k))
	bins := r.bins(total)
	if len(bins) == 0 {
		return make([]float64, r.startBin)
	}
	out := make([]float64, (int(r.startBin)+len(bins)-1)>>k+1)
	j, sum := int(r.startBin)>>k, uint64(0)
	for i, b := range bins {
		if t := (int(r.startBin) + i) >> k; t != j {
			out[j] = float64(sum) * 8 / widthNs
			j, sum = t, 0
		}
		sum += b
	}
	out[j] = float64(sum) * 8 / widthNs
	if linkGbps > 0 {
		out = carryPastLink(out, linkGbps)
	}
	return out
}

// carryPastLink carries what each bin of out (Gb/s) holds past linkGbps
// into the bins after it (rateSeries.gbps).
func carryPastLink(out []float64, linkGbps float64) []float64 {
	carry := 0.0
	for i, v := range out {
		v += carry
		carry = max(v-linkGbps, 0)
		out[i] = v - carry
	}
	// What float rounding leaves over is no packet.
	for carry > linkGbps*1e-9 {
		if len(out) >= maxSeriesBins {
			out[len(out)-1] += carry
			break
		}
		v := min(carry, linkGbps)
		out = append(out, v)
		carry -= v
	}
	return out
}

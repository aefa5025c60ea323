package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

var descIPD = prometheus.NewDesc("ibscope_flow_ipd_seconds", "Inter-packet delay: the time from a packet to the next one of the same flow.", nil, nil)

// ipdHistogram is the inter-packet delay histogram, counted by the capture
// loop under Live's lock with plain adds: a prometheus.Histogram's Observe
// pays three atomic adds a packet for a concurrency the lock already gives.
// It is served as a constant histogram at each scrape.
type ipdHistogram struct {
	edgesNs []int64  // the buckets' upper bounds (inclusive, as Prometheus' le)
	counts  []uint64 // per bucket, not cumulative; the last one is +Inf
	count   uint64
	sumNs   float64
}

func newIPDHistogram(edgesNs []float64) *ipdHistogram {
	h := &ipdHistogram{edgesNs: make([]int64, len(edgesNs)), counts: make([]uint64, len(edgesNs)+1)}
	for i, e := range edgesNs {
		h.edgesNs[i] = int64(e)
	}
	return h
}

// observe counts a gap weight times (the sampling rate).
func (h *ipdHistogram) observe(gapNs int64, weight uint64) {
	i, _ := slices.BinarySearch(h.edgesNs, gapNs) // the first edge >= gap: gap <= le
	h.counts[i] += weight
	h.count += weight
	h.sumNs += float64(weight) * float64(gapNs)
}

// snapshot is the histogram as Prometheus serves it: cumulative counts by
// upper bound in seconds.
func (h *ipdHistogram) snapshot() (count uint64, sumSeconds float64, buckets map[float64]uint64) {
	buckets = make(map[float64]uint64, len(h.edgesNs))
	var cum uint64
	for i, e := range h.edgesNs {
		cum += h.counts[i]
		buckets[float64(e)/1e9] = cum
	}
	return h.count, h.sumNs / 1e9, buckets
}

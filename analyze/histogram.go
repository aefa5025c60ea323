package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ibscope/ibscope/internal/units"
)

// HistMode is how a histogram lays out its bins; the modes' names are DOCA
// PCC's.
type HistMode string

const (
	ModeLinear HistMode = "linear" // equal bins of BinNs from 0
	ModeExp    HistMode = "exp"    // [0, BinNs), then bins that double: [BinNs, 2 BinNs), [2 BinNs, 4 BinNs), ...
	ModeEdges  HistMode = "edges"  // free edges given by the user
)

// HistSpec says how to bin values. A zero BinNs (linear, exp) asks for a
// width picked from the data.
type HistSpec struct {
	Mode    HistMode // ModeLinear (default), ModeExp or ModeEdges
	BinNs   int64    // linear: bin width; exp: first bin's width; ns
	Bins    int      // number of bins (linear, exp); 0 picks from the data
	EdgesNs []int64  // ModeEdges: ascending bin edges, ns
}

// MaxBins bounds a linear or free-edge histogram's bins, and MaxExpBins an
// exponential one's (its last edge doubles the first 62 times): memory and
// output stay small.
const (
	MaxBins    = 10000
	MaxExpBins = 62
)

// Histogram counts values into bins [Edges[i], Edges[i+1]); values below the
// first edge or at or above the last are counted as Below and Above.
type Histogram struct {
	Mode    HistMode
	EdgesNs []int64 // len(Counts)+1 ascending edges, ns
	Counts  []uint64
	Below   uint64 // values < EdgesNs[0]
	Above   uint64 // values >= EdgesNs[len-1]
	widthNs int64  // linear mode: bin width, for the division fast path
}

// Bin is one histogram bin, as the JSON contract writes it.
type Bin struct {
	LoNs  int64  `json:"lo_ns"`
	HiNs  int64  `json:"hi_ns"`
	Count uint64 `json:"count"`
}

// ErrBinsTooFine is wrapped by the errors for bins narrower than the
// capture's clock tick.
var ErrBinsTooFine = errors.New("a bin must be at least one tick of the capture's clock wide")

// Validate checks the spec against the capture's timestamp resolution: a
// bin narrower than the clock's tick cannot be filled truthfully.
func (h HistSpec) Validate(resolutionNs int64) error {
	res := units.FormatNs(resolutionNs)
	switch h.Mode {
	case ModeLinear, "":
		if h.BinNs < 0 || h.Bins < 0 || h.Bins > MaxBins {
			return fmt.Errorf("linear histogram: bin width %s and %d bins: need a positive width and at most %d bins", units.FormatNs(h.BinNs), h.Bins, MaxBins)
		}
		if h.BinNs > 0 && h.Bins > 0 && h.BinNs > math.MaxInt64/int64(h.Bins+1) {
			return fmt.Errorf("linear histogram: %d bins of %s end past the largest time this can count (%s)", h.Bins, units.FormatNs(h.BinNs), units.FormatNs(math.MaxInt64))
		}
		if h.BinNs > 0 && h.BinNs < resolutionNs {
			return fmt.Errorf("bin width %s is finer than the capture's timestamp resolution %s: %w", units.FormatNs(h.BinNs), res, ErrBinsTooFine)
		}
	case ModeExp:
		if h.BinNs < 0 || h.Bins < 0 || h.Bins > MaxExpBins {
			return fmt.Errorf("exponential histogram: first bin %s and %d bins: need a positive width and at most %d bins", units.FormatNs(h.BinNs), h.Bins, MaxExpBins)
		}
		if h.BinNs > 0 && h.Bins > 0 && h.BinNs > math.MaxInt64>>uint(h.Bins) {
			return fmt.Errorf("exponential histogram: %d bins doubling from %s end past the largest time this can count (%s)", h.Bins, units.FormatNs(h.BinNs), units.FormatNs(math.MaxInt64))
		}
		if h.BinNs > 0 && h.BinNs < resolutionNs {
			return fmt.Errorf("first bin %s is finer than the capture's timestamp resolution %s: %w", units.FormatNs(h.BinNs), res, ErrBinsTooFine)
		}
	case ModeEdges:
		for i := 1; i < len(h.EdgesNs); i++ {
			if w := h.EdgesNs[i] - h.EdgesNs[i-1]; w < resolutionNs {
				return fmt.Errorf("bin [%s, %s) is %s wide, finer than the capture's timestamp resolution %s: %w", units.FormatNs(h.EdgesNs[i-1]), units.FormatNs(h.EdgesNs[i]), units.FormatNs(w), res, ErrBinsTooFine)
			}
		}
	default:
		return fmt.Errorf("histogram mode %q: want linear, exp or edges", h.Mode)
	}
	return nil
}

// Resolve fills in what the spec left to the data (width and bin count),
// from a sample of the values and the timestamp resolution.
func (h HistSpec) Resolve(sample []int64, resolutionNs int64) HistSpec {
	resolutionNs = max(resolutionNs, 1)
	s := slices.Clone(sample)
	slices.Sort(s)
	q := func(f float64) int64 {
		if len(s) == 0 {
			return 0
		}
		return min(s[min(int(f*float64(len(s))), len(s)-1)], maxAutoNs)
	}
	switch h.Mode {
	case ModeLinear, "":
		h.Mode = ModeLinear
		// Twice the 90th percentile: the bulk is drawn in detail and
		// outliers (a 320 us stall among 2 us gaps) fall in Above.
		span := max(2*q(0.9), 10*resolutionNs)
		if h.BinNs == 0 {
			h.BinNs = max(niceCeil(span/20), resolutionNs)
		}
		if h.Bins == 0 {
			h.Bins = int(min(max((span+h.BinNs-1)/h.BinNs, 10), 200))
		}
	case ModeExp:
		if h.BinNs == 0 {
			h.BinNs = max(niceCeil(max(q(0.01), 1)/2), resolutionNs)
		}
		if h.Bins == 0 {
			top := max(q(1), h.BinNs)
			h.Bins = 2
			for e := h.BinNs; e <= top && h.Bins < 40; e *= 2 {
				h.Bins++
			}
		}
	}
	return h
}

// maxAutoNs caps the values bins are picked from (about three years), so
// that picked edges stay far from int64 overflow whatever the timestamps.
const maxAutoNs = int64(1e17)

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v int64) int64 {
	if v <= 1 {
		return 1
	}
	p := int64(1)
	for p < (v+9)/10 { // p*10 < v without overflow
		p *= 10
	}
	for _, m := range []int64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// NewHistogram builds an empty histogram from a resolved spec.
func NewHistogram(h HistSpec) (*Histogram, error) {
	var edges []int64
	switch h.Mode {
	case ModeLinear:
		if h.BinNs <= 0 || h.Bins <= 0 || h.Bins > MaxBins || h.BinNs > math.MaxInt64/int64(h.Bins+1) {
			return nil, fmt.Errorf("linear histogram: bin width %d ns, %d bins", h.BinNs, h.Bins)
		}
		for i := 0; i <= h.Bins; i++ {
			edges = append(edges, int64(i)*h.BinNs)
		}
	case ModeExp:
		if h.BinNs <= 0 || h.Bins <= 0 || h.Bins > MaxExpBins || h.BinNs > math.MaxInt64>>uint(h.Bins) {
			return nil, fmt.Errorf("exponential histogram: first bin %d ns, %d bins", h.BinNs, h.Bins)
		}
		edges = append(edges, 0)
		for e, i := h.BinNs, 0; i < h.Bins; e, i = e*2, i+1 {
			edges = append(edges, e)
		}
	case ModeEdges:
		if len(h.EdgesNs) < 2 {
			return nil, fmt.Errorf("free-edge histogram: %d edges, need at least 2", len(h.EdgesNs))
		}
		edges = slices.Clone(h.EdgesNs)
	default:
		return nil, fmt.Errorf("histogram mode %q: want linear, exp or edges", h.Mode)
	}
	hist := &Histogram{Mode: h.Mode, EdgesNs: edges, Counts: make([]uint64, len(edges)-1)}
	if h.Mode == ModeLinear {
		hist.widthNs = h.BinNs
	}
	return hist, nil
}

// Empty returns a histogram with the same edges and no counts.
func (h *Histogram) Empty() *Histogram {
	return &Histogram{Mode: h.Mode, EdgesNs: h.EdgesNs, Counts: make([]uint64, len(h.Counts)), widthNs: h.widthNs}
}

// Add counts one value.
func (h *Histogram) Add(v int64) {
	switch i := h.slot(v); {
	case i < len(h.Counts):
		h.Counts[i]++
	case i == len(h.Counts):
		h.Below++
	default:
		h.Above++
	}
}

// slots is how many places a value can be counted in: the bins, below
// and above.
func (h *Histogram) slots() int { return len(h.Counts) + 2 }

// slot returns where v is counted: its bin, len(Counts) for below the first
// edge, len(Counts)+1 for at or above the last.
func (h *Histogram) slot(v int64) int {
	if h.widthNs > 0 && v >= 0 { // linear, whose first edge is 0
		if i := v / h.widthNs; i < int64(len(h.Counts)) {
			return int(i)
		}
	}
	return h.slotSearch(v)
}

// slotSearch is slot of a value outside a linear histogram's bins, or of
// any value in the other modes.
func (h *Histogram) slotSearch(v int64) int {
	if v < h.EdgesNs[0] {
		return len(h.Counts)
	}
	i, found := slices.BinarySearch(h.EdgesNs, v)
	if !found {
		i--
	}
	if i >= len(h.Counts) {
		return len(h.Counts) + 1
	}
	return i
}

// binCounts counts values into the slots of a Histogram kept elsewhere, in
// little memory: while few values are counted, as (slot, count) pairs
// sorted by slot, one word each; once a slot holds as many values as there
// are slots, or pairs would take half as much room as counts, as one count
// per slot (never more than 8 bytes per value counted).
type binCounts struct {
	c     []uint64
	dense bool
}

// A pair is slot << pairCountBits | count; a count in a pair stays below
// the number of slots (at most MaxBins+2).
const pairCountBits = 32

// add counts one value into slot, of slots in all.
func (b *binCounts) add(slot, slots int) {
	if b.dense { // small enough to inline
		b.c[slot]++
		return
	}
	b.addPair(slot, slots)
}

// addPair is add while the counts are pairs.
func (b *binCounts) addPair(slot, slots int) {
	i, found := slices.BinarySearchFunc(b.c, slot, func(p uint64, s int) int { return cmp.Compare(int(p>>pairCountBits), s) })
	switch {
	case found && int(uint32(b.c[i])) < slots:
		b.c[i]++
	case !found && 2*(len(b.c)+1) <= slots:
		b.c = slices.Insert(b.c, i, uint64(slot)<<pairCountBits|1)
	default:
		d := make([]uint64, slots)
		for _, p := range b.c {
			d[p>>pairCountBits] += uint64(uint32(p))
		}
		b.c, b.dense = d, true
		b.c[slot]++
	}
}

// fill adds the counts to h, a histogram of the slots counted into.
func (b *binCounts) fill(h *Histogram) {
	put := func(slot int, c uint64) {
		switch {
		case slot < len(h.Counts):
			h.Counts[slot] += c
		case slot == len(h.Counts):
			h.Below += c
		default:
			h.Above += c
		}
	}
	for i, c := range b.c {
		if b.dense {
			put(i, c)
		} else {
			put(int(c>>pairCountBits), uint64(uint32(c)))
		}
	}
}

// Total returns every value counted, Below and Above included.
func (h *Histogram) Total() uint64 {
	t := h.Below + h.Above
	for _, c := range h.Counts {
		t += c
	}
	return t
}

// Bins returns the bins in the JSON contract's shape.
func (h *Histogram) Bins() []Bin {
	out := make([]Bin, len(h.Counts))
	for i, c := range h.Counts {
		out[i] = Bin{LoNs: h.EdgesNs[i], HiNs: h.EdgesNs[i+1], Count: c}
	}
	return out
}

package analyze

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// The hops analysis reads IFA 2.0 probes (decode/ifa.go): every switch on a
// probe's path appends its metadata, and of it this reads the residence
// time (arrival to departure, ns) and the egress queue's occupancy (the
// first opaque word, Packet's IFAHop) per switch (LNS, device ID) and
// egress port; per flow, the hop where its probes spent the most time; and
// per port a time series on the capture clock (the probe's timestamp).
// IFA 1.0 probes carry their metadata undecoded and are not read.

// Defaults and bounds of HopsOptions.
const (
	// DefaultResidenceBinNs is the first bin of the default residence
	// histogram: exponential, [0, 64 ns), [64, 128), ... up to 2^32 ns
	// (the field's range), 27 bins.
	DefaultResidenceBinNs = 64
	// DefaultHopIntervalNs is the series' interval when the caller gives
	// none; an interval doubles whenever a port's series would span more
	// than maxHopSeriesBins.
	DefaultHopIntervalNs = 1000
	maxHopSeriesBins     = 512
	// maxHopPorts bounds the (switch, port) pairs kept apart (each at most
	// 16 KB of series and 8 bytes per bin of its two histograms); records
	// of later ones are counted in OtherRecords.
	maxHopPorts = 16384
	// maxFlowHops bounds the hops a flow keeps apart (a path has at most
	// 31; more come from paths that change).
	maxFlowHops = 64
	// defaultLinearBins is the linear histograms' bin count when not given.
	defaultLinearBins = 100
)

// HopsOptions configure the hops analysis. The zero value is usable.
type HopsOptions struct {
	// Residence bins residence times, ns (zero Mode: exponential from
	// DefaultResidenceBinNs). Linear bins need BinNs; Bins 0 is 100 linear
	// bins, or for exp as many as reach 2^32.
	Residence HistSpec
	// Occupancy bins queue occupancy, in the device's units, the same way
	// (zero Mode: exponential from 1).
	Occupancy HistSpec
	// IntervalNs is the series' interval (0: DefaultHopIntervalNs); it
	// doubles when a series would pass 512 intervals.
	IntervalNs int64
	// MaxFlows bounds the flows kept apart (0: DefaultMaxFlows); probes of
	// later flows count for their ports but not per flow (OtherProbes).
	MaxFlows int
}

// HopsReport is the hops analysis's report (the ibanalyze hops --json contract).
type HopsReport struct {
	Input      Input `json:"input"`
	Probes     int   `json:"probes"`      // IFA 2.0 probes with hop metadata
	HopRecords int   `json:"hop_records"` // hop entries read from them
	// The series: intervals of IntervalNs from OriginNs (the first probe).
	OriginNs   int64 `json:"origin_ns"`
	IntervalNs int64 `json:"interval_ns"`
	// Ports lists every (switch, egress port), most residence time first.
	Ports []HopPort `json:"ports"`
	// Flows lists every flow with probes, most residence time first.
	Flows        []HopFlow `json:"flows"`
	OtherRecords int       `json:"other_records,omitempty"` // records of ports past the bound (16,384)
	MaxFlows     int       `json:"max_flows,omitempty"`     // set when flows were past the bound
	OtherProbes  int       `json:"other_probes,omitempty"`  // probes of the flows past it
}

// HopID names one egress port of one switch.
type HopID struct {
	LNS        uint8  `json:"lns"`
	DeviceID   uint32 `json:"device_id"`
	EgressPort uint16 `json:"egress_port"`
}

func (h HopID) String() string {
	return decode.IFAPortName(h.DeviceID, h.LNS, h.EgressPort)
}

// HopPort is what the probes saw at one egress port.
type HopPort struct {
	HopID
	Records   uint64 `json:"records"`   // probes through it
	Congested uint64 `json:"congested"` // of them with congestion bits 3 (CE)
	// ResidenceNs and Occupancy: min, max, mean over the records.
	ResidenceNs        ValueStats      `json:"residence_ns"`
	Occupancy          ValueStats      `json:"occupancy"`
	ResidenceHistogram HistCounts      `json:"residence_histogram"`
	OccupancyHistogram OccupancyCounts `json:"occupancy_histogram"`
	// Series has one point per interval with records, in time order.
	Series []HopPoint `json:"series"`
}

// ValueStats summarises values: count, min, max, mean.
type ValueStats struct {
	Min  uint32  `json:"min"`
	Max  uint32  `json:"max"`
	Mean float64 `json:"mean"`
}

// OccupancyCounts is a histogram of queue occupancy (the device's units):
// HistCounts' shape with unitless edges.
type OccupancyCounts struct {
	Mode  HistMode       `json:"mode"`
	Bins  []OccupancyBin `json:"bins"`
	Below uint64         `json:"below"`
	Above uint64         `json:"above"`
}

// OccupancyBin is one occupancy bin [Lo, Hi).
type OccupancyBin struct {
	Lo    int64  `json:"lo"`
	Hi    int64  `json:"hi"`
	Count uint64 `json:"count"`
}

// HopPoint is one interval of a port's series.
type HopPoint struct {
	StartNs         int64   `json:"start_ns"`
	Records         uint32  `json:"records"`
	MeanResidenceNs float64 `json:"mean_residence_ns"`
	MaxResidenceNs  uint32  `json:"max_residence_ns"`
	MeanOccupancy   float64 `json:"mean_occupancy"`
	MaxOccupancy    uint32  `json:"max_occupancy"`
}

// HopFlow is one flow's probes: the residence time each hop added.
type HopFlow struct {
	Key     GroupKey `json:"key"`
	Probes  int      `json:"probes"`
	FirstNs int64    `json:"first_ns"`
	LastNs  int64    `json:"last_ns"`
	// MeanPathResidenceNs is the probes' residence summed over their hops, averaged.
	MeanPathResidenceNs float64 `json:"mean_path_residence_ns"`
	// WorstHop is the hop that added the most residence time over the
	// flow's probes (Hops[0]).
	WorstHop FlowHop `json:"worst_hop"`
	// Hops are every hop the flow's probes crossed, most residence first
	// (at most 64; OtherHopNs sums the rest).
	Hops       []FlowHop `json:"hops"`
	OtherHopNs uint64    `json:"other_hop_ns,omitempty"`
}

// FlowHop is one hop of a flow's path.
type FlowHop struct {
	HopID
	Records         uint32  `json:"records"`
	ResidenceNs     uint64  `json:"residence_ns"` // summed over the flow's probes
	MeanResidenceNs float64 `json:"mean_residence_ns"`
	MaxResidenceNs  uint32  `json:"max_residence_ns"`
	Share           float64 `json:"share"` // of the flow's residence time
}

// hopBin is one interval of a port's series.
type hopBin struct {
	n              uint32
	resMax, occMax uint32
	resSum, occSum uint64
}

func (b *hopBin) merge(o hopBin) {
	b.n += o.n
	b.resSum += o.resSum
	b.occSum += o.occSum
	b.resMax, b.occMax = max(b.resMax, o.resMax), max(b.occMax, o.occMax)
}

// hopSeries is a port's series from its first interval to its last,
// numbered from the analysis's origin; its intervals are baseNs << shift.
type hopSeries struct {
	bins  []hopBin
	start int64
	shift uint8
}

func (s *hopSeries) add(i int64, b hopBin) {
	i >>= s.shift
	for len(s.bins) > 0 && (i-s.start >= maxHopSeriesBins || s.start+int64(len(s.bins))-i > maxHopSeriesBins) {
		s.coarsen()
		i >>= 1
	}
	switch {
	case len(s.bins) == 0:
		s.start = i
		s.bins = append(s.bins, hopBin{})
	case i < s.start: // a late probe before the first
		grown := make([]hopBin, int(s.start-i)+len(s.bins))
		copy(grown[s.start-i:], s.bins)
		s.bins, s.start = grown, i
	case int(i-s.start) >= len(s.bins):
		s.bins = append(s.bins, make([]hopBin, int(i-s.start)+1-len(s.bins))...)
	}
	s.bins[i-s.start].merge(b)
}

// coarsen doubles the interval: intervals 2k and 2k+1 become k.
func (s *hopSeries) coarsen() {
	s.shift++
	start := s.start >> 1
	n := 0
	for k, b := range s.bins {
		j := int((s.start+int64(k))>>1 - start)
		if j == n {
			s.bins[j] = b
			n++
		} else {
			s.bins[j].merge(b)
		}
	}
	s.bins, s.start = s.bins[:n], start
}

// points returns the series at shift (>= its own), leaving it as it is.
func (s *hopSeries) points(originNs, baseNs int64, shift uint8) []HopPoint {
	out := []HopPoint{}
	k := shift - s.shift
	for i := 0; i < len(s.bins); {
		j := (s.start + int64(i)) >> k
		var b hopBin
		for ; i < len(s.bins) && (s.start+int64(i))>>k == j; i++ {
			b.merge(s.bins[i])
		}
		if b.n == 0 {
			continue
		}
		out = append(out, HopPoint{StartNs: originNs + j*(baseNs<<shift), Records: b.n,
			MeanResidenceNs: float64(b.resSum) / float64(b.n), MaxResidenceNs: b.resMax,
			MeanOccupancy: float64(b.occSum) / float64(b.n), MaxOccupancy: b.occMax})
	}
	return out
}

// hopPort is one (switch, egress port).
type hopPort struct {
	id                   HopID
	n, congested         uint64
	resSum, occSum       uint64
	resMin, resMax       uint32
	occMin, occMax       uint32
	resCounts, occCounts binCounts
	series               hopSeries
}

// flowHop is one hop of a flow.
type flowHop struct {
	id     HopID
	n      uint32
	resMax uint32
	resSum uint64
}

// hopFlow is one flow's probes: about 240 bytes with its map entry, plus
// 32 per hop (measured: 332 for 3 hops over 300,000 flows).
type hopFlow struct {
	probes          int
	firstNs, lastNs int64
	pathSum         uint64
	otherNs         uint64
	hops            []flowHop
}

// HopsAnalysis is the hops analysis.
type HopsAnalysis struct {
	opts         HopsOptions
	resHist      *Histogram // the shared bins; counts live in each port
	occHist      *Histogram
	ports        map[HopID]*hopPort
	flows        map[decode.FlowKey]*hopFlow
	started      bool
	originNs     int64
	probes, recs int
	otherRecords int
	otherProbes  int
}

// resolveHopHist fills a histogram spec's defaults for values up to 2^32.
func resolveHopHist(h HistSpec, what string, firstBin int64) (*Histogram, error) {
	switch h.Mode {
	case "":
		h = HistSpec{Mode: ModeExp, BinNs: firstBin}
		fallthrough
	case ModeExp:
		if h.BinNs == 0 {
			h.BinNs = firstBin
		}
		if h.Bins == 0 && h.BinNs > 0 { // up to 2^32: the fields' range
			h.Bins = 1
			for e := h.BinNs; e < 1<<32 && h.Bins < MaxExpBins; e *= 2 {
				h.Bins++
			}
		}
	case ModeLinear:
		if h.BinNs == 0 {
			return nil, fmt.Errorf("%s histogram: linear bins need a width", what)
		}
		if h.Bins == 0 {
			h.Bins = defaultLinearBins
		}
	}
	if err := h.Validate(1); err != nil {
		return nil, fmt.Errorf("%s histogram: %w", what, err)
	}
	return NewHistogram(h)
}

// NewHopsAnalysis returns a hops analysis, or an error naming an option out of range.
func NewHopsAnalysis(o HopsOptions) (*HopsAnalysis, error) {
	if o.IntervalNs < 0 {
		return nil, fmt.Errorf("series interval of %d ns: want a positive duration (0 for the default 1us)", o.IntervalNs)
	}
	if err := checkMaxFlows(o.MaxFlows); err != nil {
		return nil, err
	}
	if o.IntervalNs == 0 {
		o.IntervalNs = DefaultHopIntervalNs
	}
	if o.MaxFlows == 0 {
		o.MaxFlows = DefaultMaxFlows
	}
	res, err := resolveHopHist(o.Residence, "residence", DefaultResidenceBinNs)
	if err != nil {
		return nil, err
	}
	occ, err := resolveHopHist(o.Occupancy, "occupancy", 1)
	if err != nil {
		return nil, err
	}
	return &HopsAnalysis{opts: o, resHist: res, occHist: occ, ports: map[HopID]*hopPort{}, flows: map[decode.FlowKey]*hopFlow{}}, nil
}

// Err is always nil: the analysis has no failure that stops reading.
func (a *HopsAnalysis) Err() error { return nil }

// Add takes the next packet.
func (a *HopsAnalysis) Add(p *Packet) {
	if len(p.IFAHops) == 0 {
		return
	}
	if !a.started {
		a.started, a.originNs = true, p.TsNs
	}
	a.probes++
	var f *hopFlow
	if f = a.flows[p.Key]; f == nil {
		if len(a.flows) < a.opts.MaxFlows {
			f = &hopFlow{firstNs: p.TsNs, lastNs: p.TsNs}
			a.flows[p.Key] = f
		} else {
			a.otherProbes++
		}
	}
	if f != nil {
		f.probes++
		f.firstNs, f.lastNs = min(f.firstNs, p.TsNs), max(f.lastNs, p.TsNs)
	}
	// Intervals are numbered from the origin; a late probe before it
	// falls in interval -1 and earlier (floor division).
	d := p.TsNs - a.originNs
	iv := d / a.opts.IntervalNs
	if d < 0 && d%a.opts.IntervalNs != 0 {
		iv--
	}
	for _, h := range p.IFAHops {
		a.recs++
		id := HopID{LNS: h.LNS, DeviceID: h.DeviceID, EgressPort: h.EgressPort}
		a.addPort(id, h, iv)
		if f != nil {
			f.addHop(id, h.ResidenceNs)
		}
	}
}

func (a *HopsAnalysis) addPort(id HopID, h IFAHop, iv int64) {
	pt := a.ports[id]
	if pt == nil {
		if len(a.ports) >= maxHopPorts {
			a.otherRecords++
			return
		}
		pt = &hopPort{id: id, resMin: h.ResidenceNs, occMin: h.QueueOccupancy}
		a.ports[id] = pt
	}
	pt.n++
	if h.Congestion == 3 {
		pt.congested++
	}
	pt.resSum += uint64(h.ResidenceNs)
	pt.occSum += uint64(h.QueueOccupancy)
	pt.resMin, pt.resMax = min(pt.resMin, h.ResidenceNs), max(pt.resMax, h.ResidenceNs)
	pt.occMin, pt.occMax = min(pt.occMin, h.QueueOccupancy), max(pt.occMax, h.QueueOccupancy)
	pt.resCounts.add(a.resHist.slot(int64(h.ResidenceNs)), a.resHist.slots())
	pt.occCounts.add(a.occHist.slot(int64(h.QueueOccupancy)), a.occHist.slots())
	pt.series.add(iv, hopBin{n: 1, resMax: h.ResidenceNs, occMax: h.QueueOccupancy, resSum: uint64(h.ResidenceNs), occSum: uint64(h.QueueOccupancy)})
}

func (f *hopFlow) addHop(id HopID, resNs uint32) {
	f.pathSum += uint64(resNs)
	for i := range f.hops {
		if h := &f.hops[i]; h.id == id {
			h.n++
			h.resSum += uint64(resNs)
			h.resMax = max(h.resMax, resNs)
			return
		}
	}
	if len(f.hops) >= maxFlowHops {
		f.otherNs += uint64(resNs)
		return
	}
	f.hops = append(f.hops, flowHop{id: id, n: 1, resMax: resNs, resSum: uint64(resNs)})
}

// Report returns the report on the packets added so far.
func (a *HopsAnalysis) Report(st *Stream) (*HopsReport, error) {
	r := &HopsReport{Probes: a.probes, HopRecords: a.recs, OriginNs: a.originNs, OtherRecords: a.otherRecords,
		Ports: []HopPort{}, Flows: []HopFlow{}}
	if st != nil {
		r.Input = st.Input()
	}
	var shift uint8 // every port's series on the widest interval, so that they line up
	for _, pt := range a.ports {
		shift = max(shift, pt.series.shift)
	}
	r.IntervalNs = a.opts.IntervalNs << shift
	ports := slices.Collect(maps.Values(a.ports))
	slices.SortFunc(ports, func(x, y *hopPort) int {
		if c := cmp.Compare(y.resSum, x.resSum); c != 0 {
			return c
		}
		return cmpHopID(x.id, y.id)
	})
	for _, pt := range ports {
		rh, oh := a.resHist.Empty(), a.occHist.Empty()
		pt.resCounts.fill(rh)
		pt.occCounts.fill(oh)
		hp := HopPort{HopID: pt.id, Records: pt.n, Congested: pt.congested,
			ResidenceNs:        ValueStats{Min: pt.resMin, Max: pt.resMax, Mean: float64(pt.resSum) / float64(pt.n)},
			Occupancy:          ValueStats{Min: pt.occMin, Max: pt.occMax, Mean: float64(pt.occSum) / float64(pt.n)},
			ResidenceHistogram: HistCounts{Mode: rh.Mode, Bins: rh.Bins(), Below: rh.Below, Above: rh.Above},
			OccupancyHistogram: OccupancyCounts{Mode: oh.Mode, Bins: []OccupancyBin{}, Below: oh.Below, Above: oh.Above},
			Series:             pt.series.points(a.originNs, a.opts.IntervalNs, shift)}
		for _, b := range oh.Bins() {
			hp.OccupancyHistogram.Bins = append(hp.OccupancyHistogram.Bins, OccupancyBin{Lo: b.LoNs, Hi: b.HiNs, Count: b.Count})
		}
		r.Ports = append(r.Ports, hp)
	}
	for k, f := range a.flows {
		hf := HopFlow{Key: keyJSON(k, ByFlow), Probes: f.probes, FirstNs: f.firstNs, LastNs: f.lastNs,
			MeanPathResidenceNs: float64(f.pathSum) / float64(f.probes), OtherHopNs: f.otherNs}
		for _, h := range f.hops {
			fh := FlowHop{HopID: h.id, Records: h.n, ResidenceNs: h.resSum, MeanResidenceNs: float64(h.resSum) / float64(h.n), MaxResidenceNs: h.resMax}
			if f.pathSum > 0 {
				fh.Share = float64(h.resSum) / float64(f.pathSum)
			}
			hf.Hops = append(hf.Hops, fh)
		}
		slices.SortStableFunc(hf.Hops, func(x, y FlowHop) int {
			if c := cmp.Compare(y.ResidenceNs, x.ResidenceNs); c != 0 {
				return c
			}
			return cmpHopID(x.HopID, y.HopID)
		})
		hf.WorstHop = hf.Hops[0]
		r.Flows = append(r.Flows, hf)
	}
	slices.SortFunc(r.Flows, func(x, y HopFlow) int {
		if c := cmp.Compare(y.MeanPathResidenceNs*float64(y.Probes), x.MeanPathResidenceNs*float64(x.Probes)); c != 0 {
			return c
		}
		if c := cmp.Compare(x.FirstNs, y.FirstNs); c != 0 {
			return c
		}
		return cmp.Compare(x.Key.String(), y.Key.String())
	})
	if a.otherProbes > 0 {
		r.MaxFlows, r.OtherProbes = a.opts.MaxFlows, a.otherProbes
	}
	return r, nil
}

func cmpHopID(x, y HopID) int {
	if c := cmp.Compare(x.DeviceID, y.DeviceID); c != 0 {
		return c
	}
	if c := cmp.Compare(x.LNS, y.LNS); c != 0 {
		return c
	}
	return cmp.Compare(x.EgressPort, y.EgressPort)
}

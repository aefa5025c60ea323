package analyze

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/protostate"
	"github.com/ibscope/ibscope/telemetry"
)

// The PortXmitWait tick. IBA defines PortXmitWait as the number of ticks
// during which the port had data to send and sent none for the whole tick.
// A capture of the port's transmissions shows when it waited: during a
// congestion episode (a phase of longer packet spacing, found by phase
// detection) the port is idle between a packet's last byte and the next
// packet's first byte. Over the telemetry samples that fall within the
// episode, tick = time waited / ΔPortXmitWait. Because only whole ticks
// count, a wait of L adds about L/T − 1 ticks, not L/T; the estimate
// solves Σ(L/T − 1) = ΔPortXmitWait over the waits at least a tick long.
// The congestion duration divided by ΔPortXmitWait is reported too: it
// equals the tick only if the port waited the whole time, which a port
// that still gets its share of the link never does.

// ErrNoXmitWait is returned when the telemetry has no PortXmitWait counter.
var ErrNoXmitWait = errors.New("no PortXmitWait (port_xmit_wait) counter in the telemetry")

// TickOptions tune Tick.
type TickOptions struct {
	// Rate and Lanes are the link's speed and width; a zero Rate infers
	// them from back-to-back packets in the capture.
	Rate  protostate.LinkRate
	Lanes int
	// Iface selects the capture interface (direction) whose data packets
	// the port sends; -1 takes the one with the most data packets.
	Iface int
	// Source selects the telemetry series; the zero value takes the one
	// whose perfquery LID is the captured packets' SLID, or the only one.
	Source telemetry.Source
	// MinPhasePackets is the shortest phase (DefaultPhasePackets if 0).
	MinPhasePackets int
	// MaxPackets bounds the data packets kept, 16 bytes each
	// (DefaultMaxPackets when 0, MaxPacketsLimit at most).
	MaxPackets int
}

// TickReport is the tick estimate and what it rests on.
type TickReport struct {
	File         string  `json:"file"`
	Telemetry    string  `json:"telemetry"`
	Series       string  `json:"series"` // telemetry source used, e.g. "lid:1/1"
	Iface        int     `json:"iface"`
	Packets      int     `json:"packets"` // data packets of that direction
	SLID         uint16  `json:"slid"`
	Rate         string  `json:"rate"`
	Lanes        int     `json:"lanes"`
	RateInferred bool    `json:"rate_inferred"`
	NsPerByte    float64 `json:"ns_per_byte"`
	SymbolNs     float64 `json:"symbol_ns"` // one 8-bit symbol on one lane
	Phases       []Phase `json:"phases"`
	// The congestion episode: the phase of longest packet spacing.
	CongestionStartNs int64    `json:"congestion_start_ns"`
	CongestionEndNs   int64    `json:"congestion_end_ns"`
	BaselineIPDNs     int64    `json:"baseline_ipd_ns"`   // spacing outside it (or one packet time)
	CongestedIPDNs    int64    `json:"congested_ipd_ns"`  // spacing within it
	WindowStartNs     int64    `json:"window_start_ns"`   // the telemetry samples used, within the episode
	WindowEndNs       int64    `json:"window_end_ns"`     //
	XmitWaitDelta     uint64   `json:"xmit_wait_delta"`   // PortXmitWait increase over the window, ticks
	WaitNs            int64    `json:"wait_ns"`           // time the port waited within the window
	Waits             int      `json:"waits"`             // separate waits at least one tick long
	TickNs            float64  `json:"tick_ns"`           // the estimate
	TickSymbols       float64  `json:"tick_symbols"`      // the tick in symbol times
	NaiveTickNs       float64  `json:"naive_tick_ns"`     // window length / ΔPortXmitWait
	TimestampStepNs   int64    `json:"timestamp_step_ns"` // coarsest step all timestamps are multiples of
	Warnings          []string `json:"warnings,omitempty"`
	Input             Input    `json:"input"` // what the stream read and could not use
}

type txPkt struct {
	tsNs  int64
	bytes int32
}

// TickAnalysis keeps the native IB data packets of each direction, then
// estimates the PortXmitWait tick from them and the port's telemetry.
type TickAnalysis struct {
	opts          TickOptions
	series        []*telemetry.Series
	telemetryName string
	maxPackets    int
	kept          int
	byIface       map[int8][]txPkt
	slids         map[int8]map[uint16]int
	roce          int // RoCE packets read, which tick cannot time
}

// NewTickAnalysis checks opts and starts the analysis.
func NewTickAnalysis(series []*telemetry.Series, telemetryName string, opts TickOptions) (*TickAnalysis, error) {
	if err := checkPhasePackets(opts.MinPhasePackets); err != nil {
		return nil, err
	}
	maxPackets, err := checkMaxPackets(opts.MaxPackets)
	if err != nil {
		return nil, err
	}
	if opts.Iface < -1 || opts.Iface > math.MaxInt8 {
		return nil, fmt.Errorf("interface %d: captures number interfaces 0 to %d (-1: the busiest)", opts.Iface, math.MaxInt8)
	}
	return &TickAnalysis{opts: opts, series: series, telemetryName: telemetryName, maxPackets: maxPackets,
		byIface: map[int8][]txPkt{}, slids: map[int8]map[uint16]int{}}, nil
}

// Add keeps a native IB data packet.
func (a *TickAnalysis) Add(p *Packet) {
	if p.Key.Transport == decode.TransportRoCEv1 || p.Key.Transport == decode.TransportRoCEv2 {
		a.roce++
	}
	if p.Key.Transport != decode.TransportIB || !p.OpCode.IsData() || a.kept > a.maxPackets {
		return
	}
	if a.kept++; a.kept > a.maxPackets {
		return
	}
	a.byIface[p.Iface] = append(a.byIface[p.Iface], txPkt{p.TsNs, int32(p.IBBytes)})
	if a.slids[p.Iface] == nil {
		a.slids[p.Iface] = map[uint16]int{}
	}
	a.slids[p.Iface][p.Key.SLID]++
}

// Err stops the reading past the packets the analysis may keep.
func (a *TickAnalysis) Err() error {
	if a.kept > a.maxPackets {
		return ErrTooManyPackets
	}
	return nil
}

// Report estimates the tick.
func (a *TickAnalysis) Report(in *Stream) (*TickReport, error) {
	opts, series, telemetryName := a.opts, a.series, a.telemetryName
	path := strings.Join(in.Names(), ", ")
	if a.kept > a.maxPackets {
		return nil, fmt.Errorf("%s: %w (%d): tick keeps every native IB data packet (16 bytes each) to time the waits; cut the capture to the congestion episode", path, ErrTooManyPackets, a.maxPackets)
	}
	rep := &TickReport{File: path, Telemetry: telemetryName, Input: in.Input()}
	pkts, err := a.pickIface(rep, path)
	if err != nil {
		return rep, err
	}
	if err := rep.setRate(pkts, opts); err != nil {
		return rep, fmt.Errorf("%s: %w", path, err)
	}
	s, col, err := pickXmitWait(series, opts.Source, rep.SLID, telemetryName)
	if err != nil {
		return rep, err
	}
	rep.Series = s.Source.String()

	cong, err := rep.findCongestion(pkts, opts.MinPhasePackets, path)
	if err != nil {
		return rep, err
	}
	rep.CongestionStartNs, rep.CongestionEndNs, rep.CongestedIPDNs = cong.StartNs, cong.EndNs, cong.MedianIPDNs
	d, err := s.DeltaWithin(col, cong.StartNs, cong.EndNs)
	if err != nil {
		return rep, fmt.Errorf("%s: PortXmitWait over the congestion episode %s .. %s: %w (the telemetry needs two samples within it: sample more often)",
			telemetryName, units.FormatNs(cong.StartNs%1e12), units.FormatNs(cong.EndNs%1e12), err)
	}
	rep.WindowStartNs, rep.WindowEndNs, rep.XmitWaitDelta = d.StartNs, d.EndNs, d.Value
	if d.Value == 0 {
		return rep, fmt.Errorf("%s: PortXmitWait did not move during the congestion episode: is the telemetry from the port that sends the captured packets (SLID %d)?", telemetryName, rep.SLID)
	}
	waits := rep.waits(pkts)
	rep.TickNs = solveTick(waits, float64(rep.WaitNs)/float64(d.Value), d.Value)
	for _, w := range waits {
		if float64(w) >= rep.TickNs {
			rep.Waits++
		}
	}
	rep.TickSymbols = rep.TickNs / rep.SymbolNs
	if len(waits) > 0 {
		slices.Sort(waits) // done with their order
		if med := waits[len(waits)/2]; 4*rep.TimestampStepNs > med {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("timestamps in steps of %s are coarse against waits of about %s: the count of waits, and so the whole-tick correction, is approximate",
				units.FormatNs(rep.TimestampStepNs), units.FormatNs(med)))
		}
	}
	rep.NaiveTickNs = float64(rep.WindowEndNs-rep.WindowStartNs) / float64(d.Value)
	return rep, nil
}

// pickIface chooses the interface tick times (opts.Iface, or the one with
// the most native IB data packets, the lowest number of equals) and its
// busiest SLID, and returns its packets; an error says why there are too
// few to time.
func (a *TickAnalysis) pickIface(rep *TickReport, path string) ([]txPkt, error) {
	opts, byIface := a.opts, a.byIface
	iface := int8(opts.Iface)
	if opts.Iface < 0 {
		for i, p := range byIface {
			if len(p) > len(byIface[iface]) || len(p) == len(byIface[iface]) && i < iface {
				iface = i
			}
		}
	}
	pkts := byIface[iface]
	rep.Iface, rep.Packets = int(iface), len(pkts)
	switch {
	case len(byIface) == 0 && a.roce > 0:
		return nil, fmt.Errorf("%s: no native IB data packets, %d RoCE packets: tick times the waits of native InfiniBand links (PortXmitWait), which RoCE captures do not show", path, a.roce)
	case len(byIface) == 0:
		return nil, fmt.Errorf("%s: no native IB data packets on any interface: too few to time", path)
	case len(pkts) < 2 && opts.Iface < 0:
		return nil, fmt.Errorf("%s: %d native IB data packets on interface %d, the busiest: too few to time", path, len(pkts), iface)
	case len(pkts) < 2:
		return nil, fmt.Errorf("%s: %d native IB data packets on interface %d: too few to time", path, len(pkts), iface)
	}
	for l, n := range a.slids[iface] {
		if n > a.slids[iface][rep.SLID] {
			rep.SLID = l
		}
	}
	return pkts, nil
}

// findCongestion splits the packets into phases of steady spacing and
// returns the congestion episode: the phase of the widest spacing, when it
// is at least 1.25 times the baseline (the fastest other phase, or one
// packet time). It sets the report's timestamp step, phases and baseline.
func (rep *TickReport) findCongestion(pkts []txPkt, minPhasePackets int, path string) (*Phase, error) {
	var step tsStep
	phases := newPhaseDetector(minPhasePackets)
	for _, p := range pkts {
		step.add(p.tsNs)
		phases.Add(p.tsNs)
	}
	rep.TimestampStepNs = step.value()
	rep.Phases = phases.Phases()
	var cong *Phase
	for i := range rep.Phases {
		if cong == nil || rep.Phases[i].MedianIPDNs > cong.MedianIPDNs {
			cong = &rep.Phases[i]
		}
	}
	rep.BaselineIPDNs = int64(math.Round(float64(typicalBytes(pkts)) * rep.NsPerByte))
	other := false
	for i, p := range rep.Phases {
		if &rep.Phases[i] != cong && (!other || p.MedianIPDNs < rep.BaselineIPDNs) {
			rep.BaselineIPDNs, other = p.MedianIPDNs, true
		}
	}
	if cong == nil || float64(cong.MedianIPDNs) < 1.25*float64(rep.BaselineIPDNs) {
		return nil, fmt.Errorf("%s: no congestion episode: packet spacing never rose above %s, one packet time (phases: %d)",
			path, units.FormatNs(rep.BaselineIPDNs), len(rep.Phases))
	}
	return cong, nil
}

// waits lists the port's idle times within the window: from each packet's
// last byte to the next packet's first, clipped to the window.
func (rep *TickReport) waits(pkts []txPkt) []int64 {
	var out []int64
	a, b := rep.WindowStartNs, rep.WindowEndNs
	for i := 0; i+1 < len(pkts); i++ {
		end := pkts[i].tsNs + int64(math.Round(float64(pkts[i].bytes)*rep.NsPerByte))
		next := pkts[i+1].tsNs
		lo, hi := max(end, a), min(next, b)
		if hi > lo {
			out = append(out, hi-lo)
			rep.WaitNs += hi - lo
		}
	}
	return out
}

// solveTick finds T with Σ over waits L ≥ T of (L/T − 1) = delta, starting
// from the plain ratio t0 (waited time / delta).
func solveTick(waits []int64, t0 float64, delta uint64) float64 {
	t := t0
	for range 50 {
		var sum float64
		n := 0
		for _, w := range waits {
			if float64(w) >= t {
				sum += float64(w)
				n++
			}
		}
		next := sum / (float64(delta) + float64(n))
		if math.Abs(next-t) < 1e-6*t {
			return next
		}
		t = next
	}
	return t
}

// typicalBytes is the most common packet size.
func typicalBytes(pkts []txPkt) int {
	n := map[int32]int{}
	best := int32(0)
	for _, p := range pkts {
		n[p.bytes]++
		if n[p.bytes] > n[best] {
			best = p.bytes
		}
	}
	return int(best)
}

// setRate takes the given rate or infers rate and width from the closest
// packet spacing (back-to-back packets go at the link's byte time).
func (rep *TickReport) setRate(pkts []txPkt, opts TickOptions) error {
	if opts.Rate.Name != "" {
		lanes := max(opts.Lanes, 1)
		rep.Rate, rep.Lanes, rep.SymbolNs = opts.Rate.Name, lanes, opts.Rate.SymbolTimeNs
		rep.NsPerByte = 8 / opts.Rate.DataGbps(lanes)
		return nil
	}
	best := math.Inf(1)
	for i := 0; i+1 < len(pkts); i++ {
		if dt := pkts[i+1].tsNs - pkts[i].tsNs; dt > 0 {
			best = min(best, float64(dt)/float64(pkts[i].bytes))
		}
	}
	if math.IsInf(best, 1) {
		return errors.New("cannot infer the link rate (no two packets apart in time); give it")
	}
	gbps := 8 / best
	type cand struct {
		r     protostate.LinkRate
		lanes int
		off   float64
	}
	var cs []cand
	for _, r := range protostate.LinkRates() {
		for _, l := range []int{1, 4, 8, 12} {
			cs = append(cs, cand{r, l, math.Abs(r.DataGbps(l)-gbps) / r.DataGbps(l)})
		}
	}
	// Rates and widths with the same data rate (SDR 4x and QDR 1x, EDR 4x
	// and NDR 1x) cannot be told apart by timing: prefer 4x, the usual width.
	sort.SliceStable(cs, func(i, j int) bool {
		if math.Abs(cs[i].off-cs[j].off) > 1e-3 {
			return cs[i].off < cs[j].off
		}
		return cs[i].lanes == 4 && cs[j].lanes != 4
	})
	if cs[0].off > 0.03 {
		return fmt.Errorf("back-to-back packets show %.2f Gb/s, which is no IB rate and width; give the rate", gbps)
	}
	rep.Rate, rep.Lanes, rep.SymbolNs, rep.RateInferred = cs[0].r.Name, cs[0].lanes, cs[0].r.SymbolTimeNs, true
	rep.NsPerByte = 8 / cs[0].r.DataGbps(cs[0].lanes)
	return nil
}

// pickXmitWait chooses the series and its PortXmitWait column.
func pickXmitWait(series []*telemetry.Series, want telemetry.Source, slid uint16, name string) (*telemetry.Series, int, error) {
	var with []*telemetry.Series
	for _, s := range series {
		if s.Col(telemetry.PortXmitWait) >= 0 {
			with = append(with, s)
		}
	}
	if len(with) == 0 {
		return nil, -1, fmt.Errorf("%s: %w; tick needs PortXmitWait samples of the port that sends the captured packets (perfquery's PortXmitWait, sysfs counters/port_xmit_wait)", name, ErrNoXmitWait)
	}
	if want != (telemetry.Source{}) {
		for _, s := range with {
			if s.Source == want {
				return s, s.Col(telemetry.PortXmitWait), nil
			}
		}
		return nil, -1, fmt.Errorf("%s: no PortXmitWait series for %s", name, want)
	}
	lid := fmt.Sprintf("lid:%d", slid)
	for _, s := range with {
		if s.Source.Device == lid {
			return s, s.Col(telemetry.PortXmitWait), nil
		}
	}
	if len(with) == 1 {
		return with[0], with[0].Col(telemetry.PortXmitWait), nil
	}
	return nil, -1, fmt.Errorf("%s: %d series have PortXmitWait and none is LID %d, the captured packets' source; choose one", name, len(with), slid)
}

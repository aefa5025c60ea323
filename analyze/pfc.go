package analyze

import (
	"cmp"
	"fmt"
	"net"
	"slices"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// The pfc analysis reads the pauses of lossless Ethernet (decode/pfc.go):
// a PFC frame naming priority p with time q pauses p on the link for q
// quanta of 512 bit times at the link rate; a later frame with time 0 (XON)
// ends the pause early, a later non-zero one restarts its timer with the new
// time (possibly shorter). An 802.3x PAUSE does the same for all eight
// priorities at once. The pause sender is one link direction (its source
// MAC): it stops the traffic sent to it, so a RoCE packet belongs to the
// link direction of its destination MAC, at its priority (the VLAN PCP
// when tagged, else its DSCP mapped to a priority).
//
// A pause holds back only the frames not yet begun (802.1Qbb acts at frame
// boundaries): a frame of the priority already on the wire when the pause
// begins goes on to its end. Counting that time as paused made a flow that
// kept its link busy send faster than the link while not paused (41.8 Gb/s
// on 40 Gb/s, ibsim's incast-small-roce, 111 pauses). So the flows' rates
// take it out of the paused time (PausePriority.InFlightNs): each RoCE
// frame, stamped at its first byte, occupies its link direction and
// priority for its wire bytes at the link rate.

// Defaults of PFCOptions.
const (
	// DefaultPauseBitsPerSec is the link rate pause quanta are counted at
	// when the caller gives none (a quantum is then 5.12 ns); the report
	// says it was assumed.
	DefaultPauseBitsPerSec = 100_000_000_000
	// DefaultStormNs is how long a continuous pause must last to be a
	// storm: 10 ms, about 30 refreshes of the longest pause at 100 Gb/s
	// (65,535 quanta, 335.5 us) without a gap.
	DefaultStormNs = 10_000_000
	// DefaultPauseIntervals bounds the pauses listed per link direction
	// and priority (the first ones; counts and totals cover all).
	DefaultPauseIntervals = 1000
	// MaxPauseIntervals is the most a caller may ask for.
	MaxPauseIntervals = 1_000_000
	// maxPauseLinks bounds the link directions (pause senders) kept apart;
	// the frames of later ones are counted in OtherLinkFrames.
	maxPauseLinks = 4096
	// maxStormsListed bounds the storms listed per link direction and priority.
	maxStormsListed = 100
)

// PFCOptions configure the pfc analysis. The zero value is usable.
type PFCOptions struct {
	// LinkBitsPerSec is the link rate pause quanta are counted at, bit/s
	// (0: DefaultPauseBitsPerSec, reported as assumed).
	LinkBitsPerSec int64
	// StormNs is the continuous pause past which a pause is a storm
	// (0: DefaultStormNs).
	StormNs int64
	// DSCPPriority maps an untagged RoCE packet's DSCP to its priority
	// (nil: DefaultDSCPPriority, DSCP >> 3).
	DSCPPriority *[64]uint8
	// MaxFlows bounds the RoCE flows kept apart (0: DefaultMaxFlows); the
	// packets of later flows are counted in OtherPackets.
	MaxFlows int
	// MaxIntervals bounds the pauses listed per link direction and
	// priority (0: DefaultPauseIntervals).
	MaxIntervals int
	// PausedTime keeps, per link direction and priority, the paused time
	// over every pause in bounded bins (PausePriority.PausedTime), for a
	// picture that goes on past the listed pauses.
	PausedTime bool
}

// DefaultDSCPPriority is the DSCP-to-priority map used when PFCOptions
// gives none: the DSCP's class selector bits, DSCP >> 3 (DSCP 26, AF31, is
// priority 3; 48, CS6, is 6).
func DefaultDSCPPriority() *[64]uint8 {
	var m [64]uint8
	for d := range m {
		m[d] = uint8(d >> 3)
	}
	return &m
}

// PFCReport is the pfc analysis's report (the ibanalyze pfc --json contract).
type PFCReport struct {
	Input Input `json:"input"`
	// RateGbps is the link rate quanta were counted at; RateAssumed says
	// it was not given (DefaultPauseBitsPerSec).
	RateGbps    float64 `json:"rate_gbps"`
	RateAssumed bool    `json:"rate_assumed,omitempty"`
	StormNs     int64   `json:"storm_ns"`
	// The observed span: from the first frame read to the last, or to the
	// end of the last pause when that is later. Shares are of it.
	FirstNs     int64 `json:"first_ns"`
	LastNs      int64 `json:"last_ns"`
	SpanNs      int64 `json:"span_ns"`
	PFCFrames   int   `json:"pfc_frames"`
	PauseFrames int   `json:"pause_frames"` // 802.3x
	// OtherLinkFrames are the pause frames of link directions past the
	// bound (4,096), not analysed.
	OtherLinkFrames int         `json:"other_link_frames,omitempty"`
	Links           []PauseLink `json:"links"`
	// Priorities lists, per priority, the RoCE flows sent on it, busiest first.
	Priorities []PriorityFlows `json:"priorities"`
	// UnattributedPackets are RoCE packets without Ethernet addresses
	// (a Linux cooked capture): no link direction to judge them by.
	UnattributedPackets int `json:"unattributed_packets,omitempty"`
	MaxFlows            int `json:"max_flows,omitempty"`     // set when flows were past the bound
	OtherPackets        int `json:"other_packets,omitempty"` // packets of the flows past it
}

// PauseLink is one link direction: the pauses one port sent.
type PauseLink struct {
	// Link names the pause sender: its source MAC, or "iface N" for a
	// capture without Ethernet addresses.
	Link        string          `json:"link"`
	PFCFrames   int             `json:"pfc_frames"`
	PauseFrames int             `json:"pause_frames"`
	Priorities  []PausePriority `json:"priorities"` // the priorities its frames named
	// File and Iface are where its first frame was captured (the index
	// in the stream's files, the direction the format recorded or -1),
	// for a picture to name the tapped port it paused.
	File  int `json:"-"`
	Iface int `json:"-"`
}

// PausePriority is the pauses of one priority on one link direction.
type PausePriority struct {
	Priority int `json:"priority"`
	Frames   int `json:"frames"` // frames naming it (pauses, refreshes, XONs)
	// Pauses counts continuous pauses: a frame arriving while paused
	// refreshes the pause instead of starting one.
	Pauses      int     `json:"pauses"`
	XONs        int     `json:"xons"`   // pauses ended early by a time of 0
	Quanta      uint64  `json:"quanta"` // the times asked for, summed
	PausedNs    int64   `json:"paused_ns"`
	PausedShare float64 `json:"paused_share"` // of the observed span
	LongestNs   int64   `json:"longest_ns"`
	Storms      int     `json:"storms"` // pauses longer than storm_ns
	StormNs     int64   `json:"storm_paused_ns"`
	// InFlightNs is the part of PausedNs during which a RoCE frame of the
	// priority that began before the pause was still on the wire, at the
	// link rate: the flows' rates count it as not paused.
	InFlightNs int64 `json:"in_flight_ns"`
	// Paused is true when the last pause had not ended by the last frame
	// read: it is counted to its timer's end.
	Paused bool `json:"paused,omitempty"`
	// Intervals are the first pauses (PFCOptions.MaxIntervals);
	// IntervalsLeftOut counts those past them.
	Intervals        []PauseInterval `json:"intervals"`
	IntervalsLeftOut int             `json:"intervals_left_out,omitempty"`
	StormList        []PauseInterval `json:"storm_list,omitempty"` // the first 100 storms
	// PausedTime is the paused time over every pause in bins, with
	// PFCOptions.PausedTime (for --plot; not in the JSON contract).
	PausedTime *PausedTime `json:"-"`
}

// PauseInterval is one continuous pause [StartNs, EndNs).
type PauseInterval = protostate.PauseSpan

// PriorityFlows is the RoCE traffic on one priority.
type PriorityFlows struct {
	Priority int       `json:"priority"`
	Packets  int       `json:"packets"`
	Flows    []PFCFlow `json:"flows"`
}

// PFCFlow is one RoCE flow on one priority towards one link direction,
// split by whether that direction was paused on that priority when each
// packet was captured.
type PFCFlow struct {
	Key  GroupKey `json:"key"`
	Link string   `json:"link"` // the link direction: the destination MAC
	// Bytes are wire bytes (Packet.WireBytes).
	Packets       int    `json:"packets"`
	Bytes         uint64 `json:"bytes"`
	PausedPackets int    `json:"paused_packets"`
	PausedBytes   uint64 `json:"paused_bytes"`
	UnpausedBytes uint64 `json:"unpaused_bytes"`
	// Throughput while paused: paused bytes over the link's paused time on
	// the priority less its in-flight time (PausePriority.InFlightNs); while
	// not paused: the rest over the rest of the span. Absent when the time
	// is 0.
	PausedGbps   *float64 `json:"paused_gbps,omitempty"`
	UnpausedGbps *float64 `json:"unpaused_gbps,omitempty"`
	FirstNs      int64    `json:"first_ns"`
	LastNs       int64    `json:"last_ns"`
}

// pauseLinkKey is a pause sender: a MAC, or an interface when the capture
// records no Ethernet header.
type pauseLinkKey struct {
	mac    [6]byte
	iface  int8
	hasMAC bool
}

func (k pauseLinkKey) String() string {
	if k.hasMAC {
		return net.HardwareAddr(k.mac[:]).String()
	}
	return fmt.Sprintf("iface %d", k.iface)
}

// pauseState is the pauses of one priority on one link direction.
type pauseState struct {
	timer                protostate.PauseTimer
	frames, pauses, xons int
	quanta               uint64
	closed               pauseTotals // over the pauses that have ended
	// inFlightNs is how long the frame on the wire when the running pause
	// began went on after it began.
	inFlightNs int64
}

// pauseTotals sums ended pauses.
type pauseTotals struct {
	pausedNs, longestNs, stormNs int64
	inFlightNs                   int64 // PausePriority.InFlightNs
	storms                       int
	intervals, stormList         []protostate.PauseSpan
	leftOut                      int
	pausedTime                   *PausedTime // with PFCOptions.PausedTime
}

// add counts the pause p, the first inFlightNs of it a frame begun before
// it still on the wire.
func (t *pauseTotals) add(p protostate.PauseSpan, inFlightNs, stormNs int64, maxIntervals int) {
	d := p.EndNs - p.StartNs
	t.pausedNs += d
	t.inFlightNs += min(inFlightNs, d)
	t.longestNs = max(t.longestNs, d)
	if t.pausedTime != nil {
		t.pausedTime.add(p)
	}
	if len(t.intervals) < maxIntervals {
		t.intervals = append(t.intervals, p)
	} else {
		t.leftOut++
	}
	if d > stormNs {
		t.storms++
		t.stormNs += d
		if len(t.stormList) < maxStormsListed {
			t.stormList = append(t.stormList, p)
		}
	}
}

// pauseLink is one link direction's state.
type pauseLink struct {
	key               pauseLinkKey
	file, iface       int // where its first frame was captured
	pfcFrames, pauses int
	prio              [decode.PFCPriorities]*pauseState
}

// pfcFlowKey is a RoCE flow at one priority towards one link direction.
type pfcFlowKey struct {
	flow decode.FlowKey
	link pauseLinkKey
	prio uint8
}

// pfcFlow is a flow's counts: about 220 bytes with its map entry
// (measured: 215 over 300,000 flows).
type pfcFlow struct {
	packets, pausedPackets int
	pausedBytes, unpausedB uint64
	firstNs, lastNs        int64
}

// PFCAnalysis is the pfc analysis. Its stream must hand out PFC and PAUSE
// frames: open it with StreamOptions.MACControl.
type PFCAnalysis struct {
	opts        PFCOptions
	rateAssumed bool
	dscp        *[64]uint8
	links       map[pauseLinkKey]*pauseLink
	order       []*pauseLink // in order of first frame
	// onWire is, per destination MAC of a RoCE frame (at most
	// maxPauseLinks) and priority, the last one; lastMAC and lastOn are
	// the entry used last, which the next packets mostly share.
	onWire      map[[6]byte]*[decode.PFCPriorities]lastFrame
	lastMAC     [6]byte
	lastOn      *[decode.PFCPriorities]lastFrame
	flows       map[pfcFlowKey]*pfcFlow
	started     bool
	firstNs     int64
	lastNs      int64
	pfcFrames   int
	pauseFrames int
	otherLink   int
	unattrib    int
	otherPkts   int
}

// NewPFCAnalysis returns a pfc analysis, or an error naming an option out of range.
func NewPFCAnalysis(o PFCOptions) (*PFCAnalysis, error) {
	a := &PFCAnalysis{links: map[pauseLinkKey]*pauseLink{}, flows: map[pfcFlowKey]*pfcFlow{},
		onWire: map[[6]byte]*[decode.PFCPriorities]lastFrame{}}
	switch {
	case o.LinkBitsPerSec < 0 || o.LinkBitsPerSec > 100e12:
		return nil, fmt.Errorf("link rate of %d bit/s: want 1 bit/s to 100 Tb/s (0 for the default 100 Gb/s)", o.LinkBitsPerSec)
	case o.StormNs < 0:
		return nil, fmt.Errorf("storm threshold of %d ns: want a positive duration (0 for the default 10ms)", o.StormNs)
	case o.MaxIntervals < 0 || o.MaxIntervals > MaxPauseIntervals:
		return nil, fmt.Errorf("bound of %d pauses listed: want 1 to %d (0 for the default %d)", o.MaxIntervals, MaxPauseIntervals, DefaultPauseIntervals)
	}
	if err := checkMaxFlows(o.MaxFlows); err != nil {
		return nil, err
	}
	if o.LinkBitsPerSec == 0 {
		o.LinkBitsPerSec, a.rateAssumed = DefaultPauseBitsPerSec, true
	}
	if o.StormNs == 0 {
		o.StormNs = DefaultStormNs
	}
	if o.MaxFlows == 0 {
		o.MaxFlows = DefaultMaxFlows
	}
	if o.MaxIntervals == 0 {
		o.MaxIntervals = DefaultPauseIntervals
	}
	a.dscp = o.DSCPPriority
	if a.dscp == nil {
		a.dscp = DefaultDSCPPriority()
	}
	a.opts = o
	return a, nil
}

// Err is always nil: the analysis has no failure that stops reading.
func (a *PFCAnalysis) Err() error { return nil }

// Add takes the next packet.
func (a *PFCAnalysis) Add(p *Packet) {
	if !a.started {
		a.started, a.firstNs = true, p.TsNs
	}
	a.firstNs = min(a.firstNs, p.TsNs)
	a.lastNs = max(a.lastNs, p.TsNs)
	switch {
	case p.MACControl != NoMACControl:
		a.addPause(p)
	case p.Key.Transport == decode.TransportRoCEv1 || p.Key.Transport == decode.TransportRoCEv2:
		a.addRoCE(p)
	}
}

func (a *PFCAnalysis) addPause(p *Packet) {
	if p.MACControl == MACControlPFC {
		a.pfcFrames++
	} else {
		a.pauseFrames++
	}
	k := pauseLinkKey{iface: -1}
	if p.Ethernet {
		k.mac, k.hasMAC = p.SrcMAC, true
	} else {
		k.iface = p.Iface
	}
	l := a.links[k]
	if l == nil {
		if len(a.links) >= maxPauseLinks {
			a.otherLink++
			return
		}
		l = &pauseLink{key: k, file: p.File, iface: int(p.Iface)}
		a.links[k] = l
		a.order = append(a.order, l)
	}
	if p.MACControl == MACControlPFC {
		l.pfcFrames++
	} else {
		l.pauses++
	}
	var on *[decode.PFCPriorities]lastFrame // the frames sent to k, for the pauses this one starts
	if k.hasMAC {
		on = a.onWire[k.mac]
	}
	for prio := range decode.PFCPriorities {
		if p.PauseEnable>>prio&1 == 0 {
			continue
		}
		s := l.prio[prio]
		if s == nil {
			s = &pauseState{}
			if a.opts.PausedTime {
				s.closed.pausedTime = &PausedTime{}
			}
			l.prio[prio] = s
		}
		var last lastFrame
		if on != nil {
			last = on[prio]
		}
		a.request(s, p.TsNs, p.PauseQuanta[prio], last)
	}
}

// request applies one frame's time q (quanta) for a priority at tNs, last
// being the priority's last frame on the link (zero: none).
func (a *PFCAnalysis) request(s *pauseState, tNs int64, q uint16, last lastFrame) {
	s.frames++
	s.quanta += uint64(q)
	span, ended, ev := s.timer.Request(tNs, q, a.opts.LinkBitsPerSec)
	if ended {
		s.closed.add(span, s.inFlightNs, a.opts.StormNs, a.opts.MaxIntervals)
	}
	switch ev {
	case protostate.PauseStarted:
		s.pauses++
		run, _ := s.timer.Running()
		s.inFlightNs = max(last.endNs(a.opts.LinkBitsPerSec)-run.StartNs, 0)
	case protostate.PauseResumed:
		s.xons++
	}
}

// pausedAt reports whether s is paused at tNs.
func (s *pauseState) pausedAt(tNs int64) bool { return s != nil && s.timer.PausedAt(tNs) }

// priority returns the priority a RoCE packet travels at.
func (a *PFCAnalysis) priority(p *Packet) uint8 {
	if p.VLANTagged {
		return p.VLANPCP
	}
	return a.dscp[p.DSCP&63] & 7
}

func (a *PFCAnalysis) addRoCE(p *Packet) {
	if !p.Ethernet {
		a.unattrib++
		return
	}
	prio := a.priority(p)
	k := pfcFlowKey{flow: p.Key, link: pauseLinkKey{mac: p.DstMAC, iface: -1, hasMAC: true}, prio: prio}
	b := uint64(max(p.WireBytes, 0))
	a.sent(p.DstMAC, prio, p.TsNs, p.WireBytes)
	f := a.flows[k]
	if f == nil {
		if len(a.flows) >= a.opts.MaxFlows {
			a.otherPkts++
			return
		}
		f = &pfcFlow{firstNs: p.TsNs}
		a.flows[k] = f
	}
	f.packets++
	f.firstNs, f.lastNs = min(f.firstNs, p.TsNs), max(f.lastNs, p.TsNs)
	if l := a.links[k.link]; l != nil && l.prio[prio].pausedAt(p.TsNs) {
		f.pausedPackets++
		f.pausedBytes += b
	} else {
		f.unpausedB += b
	}
}

// lastFrame is the last RoCE frame on a link direction and priority.
type lastFrame struct {
	tsNs      int64
	wireBytes int
}

// endNs is when its last byte left, at bitsPerSec.
func (f lastFrame) endNs(bitsPerSec int64) int64 {
	// A frame is at most 2^32 bytes; 2^30 * 8e9 still fits an int64.
	return f.tsNs + int64(min(max(f.wireBytes, 0), 1<<30))*8e9/bitsPerSec
}

// sent notes a frame of wireBytes to dst at priority prio from tNs: until
// its last byte, a pause of the priority does not hold it back. Only the
// frame begun last is kept: the division to its end is left to a pause.
// (Keyed by the MAC itself: comparing the pauseLinkKey just built, from
// narrower stores, stalled the load, +5 % of pfc's CPU.)
func (a *PFCAnalysis) sent(dst [6]byte, prio uint8, tNs int64, wireBytes int) {
	on := a.lastOn
	if on == nil || dst != a.lastMAC {
		if on = a.onWire[dst]; on == nil {
			if len(a.onWire) >= maxPauseLinks {
				return
			}
			on = new([decode.PFCPriorities]lastFrame)
			a.onWire[dst] = on
		}
		a.lastMAC, a.lastOn = dst, on
	}
	if tNs >= on[prio].tsNs {
		on[prio] = lastFrame{tNs, wireBytes}
	}
}

// totals returns s's totals with its running pause, if any, counted to
// its timer's end, leaving s as it is.
func (a *PFCAnalysis) totals(s *pauseState) pauseTotals {
	t := s.closed
	t.pausedTime = t.pausedTime.clone() // the report's own: later pauses change s's in place
	if run, ok := s.timer.Running(); ok {
		t.intervals = slices.Clip(t.intervals) // add appends to a copy
		t.stormList = slices.Clip(t.stormList)
		t.add(run, s.inFlightNs, a.opts.StormNs, a.opts.MaxIntervals)
	}
	return t
}

// Report returns the report on the packets added so far.
func (a *PFCAnalysis) Report(st *Stream) (*PFCReport, error) {
	r := &PFCReport{RateGbps: float64(a.opts.LinkBitsPerSec) / 1e9, RateAssumed: a.rateAssumed, StormNs: a.opts.StormNs,
		FirstNs: a.firstNs, LastNs: a.lastNs, PFCFrames: a.pfcFrames, PauseFrames: a.pauseFrames,
		OtherLinkFrames: a.otherLink, UnattributedPackets: a.unattrib, Links: []PauseLink{}, Priorities: []PriorityFlows{}}
	if st != nil {
		r.Input = st.Input()
	}
	for _, l := range a.order {
		for _, s := range l.prio {
			if s == nil {
				continue
			}
			if run, ok := s.timer.Running(); ok {
				r.LastNs = max(r.LastNs, run.EndNs)
			}
		}
	}
	r.SpanNs = r.LastNs - r.FirstNs
	pausedNs := a.pauseLinks(r)
	r.Priorities = append(r.Priorities, a.priorityFlows(r.SpanNs, pausedNs)...)
	if a.otherPkts > 0 {
		r.MaxFlows, r.OtherPackets = a.opts.MaxFlows, a.otherPkts
	}
	return r, nil
}

// pauseLinks adds each link's pauses per priority to r and returns the time
// each link's priorities were paused, less the frames in flight, for the
// flows' paused rates.
func (a *PFCAnalysis) pauseLinks(r *PFCReport) map[pauseLinkKey]*[decode.PFCPriorities]int64 {
	pausedNs := map[pauseLinkKey]*[decode.PFCPriorities]int64{}
	for _, l := range a.order {
		pl := PauseLink{Link: l.key.String(), PFCFrames: l.pfcFrames, PauseFrames: l.pauses, Priorities: []PausePriority{},
			File: l.file, Iface: l.iface}
		ns := new([decode.PFCPriorities]int64)
		pausedNs[l.key] = ns
		for prio, s := range l.prio {
			if s == nil {
				continue
			}
			t := a.totals(s)
			run, running := s.timer.Running()
			ns[prio] = t.pausedNs - t.inFlightNs
			pp := PausePriority{Priority: prio, Frames: s.frames, Pauses: s.pauses, XONs: s.xons, Quanta: s.quanta,
				PausedNs: t.pausedNs, InFlightNs: t.inFlightNs, LongestNs: t.longestNs, Storms: t.storms, StormNs: t.stormNs,
				Paused: running && run.EndNs > a.lastNs, Intervals: t.intervals, IntervalsLeftOut: t.leftOut, StormList: t.stormList,
				PausedTime: t.pausedTime}
			if pp.Intervals == nil {
				pp.Intervals = []PauseInterval{}
			}
			if r.SpanNs > 0 {
				pp.PausedShare = float64(t.pausedNs) / float64(r.SpanNs)
			}
			pl.Priorities = append(pl.Priorities, pp)
		}
		r.Links = append(r.Links, pl)
	}
	return pausedNs
}

// priorityFlows lists, per priority that carried any, the flows with their
// rates while paused and not (spanNs the capture's span, pausedNs each
// link's paused time per priority), the flows sorted by bytes, then first
// packet, then name.
func (a *PFCAnalysis) priorityFlows(spanNs int64, pausedNs map[pauseLinkKey]*[decode.PFCPriorities]int64) []PriorityFlows {
	var out []PriorityFlows
	var byPrio [decode.PFCPriorities]PriorityFlows
	for k, f := range a.flows {
		pf := PFCFlow{Key: keyJSON(k.flow, ByFlow), Link: k.link.String(), Packets: f.packets, Bytes: f.pausedBytes + f.unpausedB,
			PausedPackets: f.pausedPackets, PausedBytes: f.pausedBytes, UnpausedBytes: f.unpausedB, FirstNs: f.firstNs, LastNs: f.lastNs}
		var paused int64
		if ns := pausedNs[k.link]; ns != nil {
			paused = ns[k.prio]
		}
		if paused > 0 {
			g := float64(f.pausedBytes) * 8 / float64(paused)
			pf.PausedGbps = &g
		}
		if rest := spanNs - paused; rest > 0 {
			g := float64(f.unpausedB) * 8 / float64(rest)
			pf.UnpausedGbps = &g
		}
		pr := &byPrio[k.prio]
		pr.Packets += f.packets
		pr.Flows = append(pr.Flows, pf)
	}
	for prio := range byPrio {
		pr := byPrio[prio]
		if len(pr.Flows) == 0 {
			continue
		}
		pr.Priority = prio
		slices.SortFunc(pr.Flows, func(x, y PFCFlow) int {
			if c := cmp.Compare(y.Bytes, x.Bytes); c != 0 {
				return c
			}
			if c := cmp.Compare(x.FirstNs, y.FirstNs); c != 0 {
				return c
			}
			return cmp.Compare(x.Key.String()+x.Link, y.Key.String()+y.Link)
		})
		out = append(out, pr)
	}
	return out
}

package analyze

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
)

// runBuffer estimates the buffer between senders and a receiver without
// flow-control packets, from data packets alone, as the 2015 study did by
// counting packets during a congestion episode. Each data packet a sender
// capture shows is matched by flow and PSN to the receiver capture; after
// removing the clock offset (the smallest receive-minus-send time of the
// sender's packets, which also absorbs the uncongested latency; with
// timestamps rounded to a step, half the coarser step more), the time a
// packet spends beyond that is time it waited in a buffer. Occupancy(t) =
// blocks injected − blocks delivered is then what waits at t, and under
// congestion it rises to a plateau: the buffer is full and the sender may
// only send as credits come back.
//
// The plateau undercounts the buffer by what the uncongested latency already
// held and the offset removed: a switch holds each packet from its first
// byte in to its last byte out, two packet times when it stores and
// forwards (one when it cuts through), and at the plateau's drain spacing D
// that is 2w/D packets more. The buffer holds a whole number K of the
// sender's packets (it refuses a packet whose blocks do not fit), so the
// estimate is the middle of [K, K+1) packets and its range is that interval:
// packet counting cannot resolve a buffer finer than one packet.

// BufferOptions tune Buffer.
type BufferOptions struct {
	// MaxPoints bounds the occupancy series per sender (DefaultSeriesPoints
	// when 0, MaxSeriesPoints at most).
	MaxPoints int
	// NsPerByte is the serialisation time of one byte toward the receiver,
	// ns; 0 infers it from back-to-back packets in the receiver capture.
	NsPerByte float64
	// CutThrough says the switch forwards a packet while still receiving
	// it, so it holds one packet time less than a store-and-forward switch.
	CutThrough bool
	// MaxPackets bounds the sender captures' data packets, which are all
	// kept (DefaultMaxPackets when 0, MaxPacketsLimit at most).
	MaxPackets int
}

// BufferReport is the estimate and what it rests on.
type BufferReport struct {
	Receiver  string         `json:"receiver"`
	Senders   []BufferSender `json:"senders"`
	Matched   int            `json:"matched"`   // data packets seen at both ends
	Unmatched int            `json:"unmatched"` // sender packets the receiver capture lacks
	// TimestampStepNs is the coarsest step the receiver's timestamps are
	// multiples of (1000 for ibdump's microseconds).
	TimestampStepNs int64    `json:"timestamp_step_ns"`
	Warnings        []string `json:"warnings,omitempty"`
	// SenderInput and ReceiverInput are what the two streams read (the
	// senders' captures are one stream), filled by the caller, which holds
	// the streams.
	SenderInput   *Input `json:"sender_input,omitempty"`
	ReceiverInput *Input `json:"receiver_input,omitempty"`
}

// BufferSender is one sender capture's packets against the receiver.
type BufferSender struct {
	File  string `json:"file"`
	Flows int    `json:"flows"`
	// TimestampStepNs is the coarsest step this capture's timestamps are
	// multiples of.
	TimestampStepNs int64 `json:"timestamp_step_ns"`
	Packets         int   `json:"packets"` // data packets sent
	Matched         int   `json:"matched"`
	OffsetNs        int64 `json:"offset_ns"` // receiver clock minus sender clock, plus the uncongested latency
	FirstNs         int64 `json:"first_ns"`  // first matched packet sent, sender clock
	// The plateau: the longest stretch the occupancy stayed within one
	// packet of its peak, and its level there.
	PlateauStartNs int64   `json:"plateau_start_ns"` // sender clock
	PlateauEndNs   int64   `json:"plateau_end_ns"`
	PlateauBlocks  int     `json:"plateau_blocks"` // occupancy level over the plateau (time-weighted upper quartile)
	PeakBlocks     int     `json:"peak_blocks"`
	PacketBlocks   int     `json:"packet_blocks"`   // blocks of the typical (most common) packet
	PacketBytes    int     `json:"packet_bytes"`    // its size, LRH through VCRC
	DrainNs        int64   `json:"drain_ns"`        // median spacing of this sender's packets at the receiver during the plateau
	HeldPackets    float64 `json:"held_packets"`    // packets the switch holds unseen by the occupancy (2w/D)
	BufferPackets  int     `json:"buffer_packets"`  // K: whole packets the buffer holds
	EstimateBlocks int     `json:"estimate_blocks"` // (K + 1/2) packets, in 64-byte blocks
	EstimateBytes  int     `json:"estimate_bytes"`  // the same in bytes
	LowBytes       int     `json:"low_bytes"`       // the buffer lies in [LowBytes, HighBytes): K and K+1 packets
	HighBytes      int     `json:"high_bytes"`
	Congested      bool    `json:"congested"` // a plateau with queueing was found
	// Why there is no estimate when Congested is false.
	NoEstimate string           `json:"no_estimate,omitempty"`
	Series     []OccupancyPoint `json:"series,omitempty"`
}

// OccupancyPoint is the occupancy at one moment, sender clock.
type OccupancyPoint struct {
	TsNs   int64 `json:"ts_ns"`
	Blocks int   `json:"blocks"`
}

// sentPkt is a sender's data packet, 16 bytes.
type sentPkt struct {
	tsNs  int64
	psn   uint32
	bytes int32
}

type matchedPkt struct {
	sendNs, recvNs int64
	blocks         int32
	bytes          int32
}

// BufferAnalysis matches the senders' data packets with the receiver's and
// estimates, per sender, the buffer its packets filled. It takes the sender
// captures' packets first (Sent; Packet.File tells them apart: one file per
// sender), then the receiver's (Add), and reports on the two. Memory grows
// with the packets of the sender captures: 16 bytes each as read, about 80
// once matched (the match, and while a report is made a copy of it and two
// occupancy steps); past opts.MaxPackets it stops with ErrTooManyPackets.
type BufferAnalysis struct {
	opts       BufferOptions
	maxPackets int
	kept       int
	flows      map[decode.FlowKey]*flowSent
	senders    []BufferSender
	sendSteps  []tsStep
	// What stopped the reading of the sender captures: too many packets
	// (in file tooMany), or flow dup sent from files dupFirst and dupSecond.
	tooMany             int
	dup                 *decode.FlowKey
	dupFirst, dupSecond int
	stopped             bool
	matched             [][]matchedPkt
	step                tsStep
	bytes               *byteTime
}

type flowSent struct {
	sender int
	pkts   []sentPkt
	next   int
}

// NewBufferAnalysis checks opts and starts the analysis.
func NewBufferAnalysis(opts BufferOptions) (*BufferAnalysis, error) {
	var err error
	if opts.MaxPoints, err = seriesPoints(opts.MaxPoints); err != nil {
		return nil, err
	}
	maxPackets, err := checkMaxPackets(opts.MaxPackets)
	if err != nil {
		return nil, err
	}
	return &BufferAnalysis{opts: opts, maxPackets: maxPackets, flows: map[decode.FlowKey]*flowSent{}, bytes: newByteTime()}, nil
}

// Sent is the analysis of the sender captures, the first side.
func (a *BufferAnalysis) Sent() Analysis[[]BufferSender] { return (*bufferSent)(a) }

type bufferSent BufferAnalysis

func (b *bufferSent) Add(p *Packet) {
	a := (*BufferAnalysis)(b)
	if a.stopped || !p.OpCode.IsData() {
		return
	}
	for len(a.senders) <= p.File {
		a.senders = append(a.senders, BufferSender{})
		a.sendSteps = append(a.sendSteps, tsStep{})
	}
	i := p.File
	bs := &a.senders[i]
	a.sendSteps[i].add(p.TsNs)
	fs := a.flows[p.Key]
	if fs == nil {
		fs = &flowSent{sender: i}
		a.flows[p.Key] = fs
		bs.Flows++
	} else if fs.sender != i {
		k := p.Key
		a.stopped, a.dup, a.dupFirst, a.dupSecond = true, &k, fs.sender, i
		return
	}
	if a.kept++; a.kept > a.maxPackets {
		a.stopped, a.tooMany = true, i
		return
	}
	fs.pkts = append(fs.pkts, sentPkt{p.TsNs, p.PSN, int32(p.IBBytes)})
	bs.Packets++
}

func (b *bufferSent) Err() error {
	if b.stopped {
		return ErrTooManyPackets // or a flow sent twice: Report says which
	}
	return nil
}

func (b *bufferSent) Report(s *Stream) ([]BufferSender, error) {
	a := (*BufferAnalysis)(b)
	names := s.Names()
	switch {
	case a.dup != nil:
		return nil, fmt.Errorf("%s: flow %s also appears in %s; give each sender's capture once", names[a.dupSecond], keyJSON(*a.dup, ByFlow), names[a.dupFirst])
	case a.stopped:
		return nil, fmt.Errorf("%s: %w (%d): buffer keeps every data packet of the sender captures to match it; cut the captures to the congestion episode", names[a.tooMany], ErrTooManyPackets, a.maxPackets)
	}
	for len(a.senders) < len(names) {
		a.senders = append(a.senders, BufferSender{})
		a.sendSteps = append(a.sendSteps, tsStep{})
	}
	for i := range a.senders {
		a.senders[i].File = names[i]
		a.senders[i].TimestampStepNs = a.sendSteps[i].value()
	}
	return a.senders, nil
}

// Add matches one receiver packet with what a sender sent.
func (a *BufferAnalysis) Add(p *Packet) {
	a.bytes.add(p)
	if !p.OpCode.IsData() {
		return
	}
	a.step.add(p.TsNs)
	fs := a.flows[p.Key]
	if fs == nil {
		return
	}
	for j := fs.next; j < len(fs.pkts) && j < fs.next+4096; j++ {
		if fs.pkts[j].psn == p.PSN {
			s := fs.pkts[j]
			for len(a.matched) <= fs.sender {
				a.matched = append(a.matched, nil)
			}
			a.matched[fs.sender] = append(a.matched[fs.sender], matchedPkt{s.tsNs, p.TsNs, int32(blocksOf(int(s.bytes))), s.bytes})
			fs.next = j + 1
			return
		}
	}
}

// Err is always nil: the receiver's packets are matched or not.
func (a *BufferAnalysis) Err() error { return nil }

// Report estimates the buffers from the packets matched so far; receiver
// is the receiver's stream. The estimate works on a copy of the matches,
// so matching goes on unchanged.
func (a *BufferAnalysis) Report(receiver *Stream) (*BufferReport, error) {
	opts, flows := a.opts, a.flows
	receiverPath := strings.Join(receiver.Names(), ", ")
	rep := &BufferReport{Receiver: receiverPath, Senders: slices.Clone(a.senders)}
	var err error
	for _, fs := range flows {
		rep.Unmatched += len(fs.pkts)
	}
	nsPerByte := opts.NsPerByte
	if nsPerByte <= 0 {
		if nsPerByte, err = a.bytes.nsPerByte(receiver.Names()); err != nil {
			return nil, err
		}
	}
	rep.TimestampStepNs = a.step.value()
	holdPackets := 2.0
	if opts.CutThrough {
		holdPackets = 1
	}
	for i := range rep.Senders {
		bs := &rep.Senders[i]
		var m []matchedPkt
		if i < len(a.matched) {
			m = slices.Clone(a.matched[i])
		}
		bs.Matched = len(m)
		rep.Matched += len(m)
		rep.Unmatched -= len(m)
		if len(m) == 0 {
			continue
		}
		// A timestamp rounded down to a step of S (ibdump's microseconds)
		// stands for a moment S/2 later on average: centre both ends.
		for j := range m {
			m[j].sendNs += bs.TimestampStepNs / 2
			m[j].recvNs += rep.TimestampStepNs / 2
		}
		bs.estimate(m, opts.MaxPoints, nsPerByte, holdPackets, max(bs.TimestampStepNs, rep.TimestampStepNs))
		if pktNs := float64(bs.PacketBytes) * nsPerByte; opts.NsPerByte <= 0 && float64(4*rep.TimestampStepNs) > pktNs {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: timestamps in steps of %s against packets of about %s: the link's byte time inferred from them is rough; give the rate",
				bs.File, units.FormatNs(rep.TimestampStepNs), units.FormatNs(int64(pktNs))))
		}
	}
	if rep.Matched == 0 {
		return rep, fmt.Errorf("no data packet of the sender captures appears in %s (matched by SLID, DLID, QP and PSN)", receiverPath)
	}
	return rep, nil
}

// minPlateauDrains is how many drain periods the occupancy must stay at its
// plateau for the plateau to count as a full buffer.
const minPlateauDrains = 8

// estimate finds the offset, the plateau and the buffer.
func (bs *BufferSender) estimate(m []matchedPkt, maxPoints int, nsPerByte, holdPackets float64, stepNs int64) {
	bs.measure(m, stepNs)
	steps := occupancySteps(m, bs.OffsetNs)
	for level, i := 0, 0; i < len(steps); i++ {
		level += int(steps[i].delta)
		bs.PeakBlocks = max(bs.PeakBlocks, level)
	}
	// The plateau: the longest stretch where the occupancy stays within one
	// packet of the peak, and within what rounded timestamps can add: one
	// packet more per packet time in a step.
	noise := 0
	if pktNs := float64(bs.PacketBytes) * nsPerByte; stepNs > 1 && pktNs > 0 {
		noise = int(math.Ceil(float64(stepNs) / pktNs))
	}
	bestStart, bestEnd := longestAbove(steps, bs.PeakBlocks-bs.PacketBlocks*(1+noise))
	bs.PlateauStartNs, bs.PlateauEndNs = bestStart, bestEnd
	bs.plateauLevel(steps, maxPoints)
	bs.DrainNs = medianGapNs(m, bestStart, bestEnd)
	if bs.DrainNs <= 0 || 2*bs.PlateauBlocks < bs.PacketBlocks {
		bs.NoEstimate = "no queue built up: the receiver took this sender's packets as fast as they came, so there is no plateau to read a buffer from"
		return
	}
	// A full buffer stays full while packets drain through it; a "plateau"
	// shorter than a few drain periods is a blip (or captures that are not of
	// the same traffic), not a buffer.
	if bestEnd-bestStart < minPlateauDrains*bs.DrainNs {
		bs.NoEstimate = fmt.Sprintf("the occupancy stayed at its peak for only %s, under %d drain periods of %s: no sustained queue to read a buffer from (are the captures of the same traffic?)",
			units.FormatNs(bestEnd-bestStart), minPlateauDrains, units.FormatNs(bs.DrainNs))
		return
	}
	bs.Congested = true
	wireNs := float64(bs.PacketBytes) * nsPerByte
	bs.HeldPackets = holdPackets * wireNs / float64(bs.DrainNs)
	bs.BufferPackets = int(math.Round(float64(bs.PlateauBlocks)/float64(bs.PacketBlocks) + bs.HeldPackets))
	bs.EstimateBlocks = int(math.Round((float64(bs.BufferPackets) + 0.5) * float64(bs.PacketBlocks)))
	bs.EstimateBytes = bs.EstimateBlocks * decode.BlockBytes
	bs.LowBytes = bs.BufferPackets * bs.PacketBlocks * decode.BlockBytes
	bs.HighBytes = (bs.BufferPackets + 1) * bs.PacketBlocks * decode.BlockBytes
}

// measure sets the sender's clock offset and its most common packet size.
// The timestamps are centred in their steps; stepNs is the coarser
// capture's step. Of many uncongested packets, rounding makes the shortest
// latency seen half a step shorter than the true one (the receiver's stamp
// rounded most, or the sender's least), so the offset adds that half step
// back.
func (bs *BufferSender) measure(m []matchedPkt, stepNs int64) {
	bs.OffsetNs = math.MaxInt64
	bs.FirstNs = m[0].sendNs
	sizes := map[int32]int{}
	for _, p := range m {
		bs.OffsetNs = min(bs.OffsetNs, p.recvNs-p.sendNs)
		sizes[p.bytes]++
	}
	bs.OffsetNs += stepNs / 2
	for b, n := range sizes {
		if n > sizes[int32(bs.PacketBytes)] || n == sizes[int32(bs.PacketBytes)] && int(b) > bs.PacketBytes {
			bs.PacketBytes = int(b)
		}
	}
	bs.PacketBlocks = blocksOf(bs.PacketBytes)
}

// occupancyStep is a change of the blocks a sender has in flight at tsNs.
type occupancyStep struct {
	tsNs  int64
	delta int32
}

// occupancySteps are the occupancy's changes in time order: +blocks when a
// packet is sent, −blocks when it is delivered (receiver time moved to the
// sender's clock by offsetNs, the uncongested latency).
func occupancySteps(m []matchedPkt, offsetNs int64) []occupancyStep {
	steps := make([]occupancyStep, 0, 2*len(m))
	for _, p := range m {
		steps = append(steps, occupancyStep{p.sendNs, p.blocks}, occupancyStep{p.recvNs - offsetNs, -p.blocks})
	}
	sort.Slice(steps, func(i, j int) bool {
		return steps[i].tsNs < steps[j].tsNs || steps[i].tsNs == steps[j].tsNs && steps[i].delta < steps[j].delta
	})
	return steps
}

// longestAbove is the longest stretch [start, end) in which the occupancy
// stays at floor or above (steps at one time taken together).
func longestAbove(steps []occupancyStep, floor int) (start, end int64) {
	var runStart int64
	in := false
	level := 0
	for i, s := range steps {
		level += int(s.delta)
		if i+1 < len(steps) && steps[i+1].tsNs == s.tsNs {
			continue
		}
		switch {
		case level >= floor && !in:
			in, runStart = true, s.tsNs
		case level < floor && in:
			in = false
			if s.tsNs-runStart > end-start {
				start, end = runStart, s.tsNs
			}
		}
	}
	return start, end
}

// plateauLevel sets the plateau's level: the time-weighted upper quartile
// of the occupancy within it, since a full buffer sits at its top level and
// dips only while a freed credit travels back to the sender. And the
// occupancy series, at most about maxPoints of it.
func (bs *BufferSender) plateauLevel(steps []occupancyStep, maxPoints int) {
	bestStart, bestEnd := bs.PlateauStartNs, bs.PlateauEndNs
	timeAt := map[int]int64{}
	level := 0
	prev := steps[0].tsNs
	stride := max(1, len(steps)/maxPoints)
	due := false
	for i, s := range steps {
		if s.tsNs > bestStart && prev < bestEnd {
			timeAt[level] += min(s.tsNs, bestEnd) - max(prev, bestStart)
		}
		level += int(s.delta)
		prev = s.tsNs
		// A point is taken once every step at its time is counted: a
		// packet delivered the moment the next is sent (steps sort the
		// delivery first) would otherwise dip it a packet below zero.
		due = due || i%stride == 0
		if due && (i+1 == len(steps) || steps[i+1].tsNs != s.tsNs) {
			bs.Series = append(bs.Series, OccupancyPoint{s.tsNs, level})
			due = false
		}
	}
	levels := make([]int, 0, len(timeAt))
	for l := range timeAt {
		levels = append(levels, l)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(levels)))
	var above int64
	for _, l := range levels {
		above += timeAt[l]
		if 4*above >= bestEnd-bestStart {
			bs.PlateauBlocks = l
			break
		}
	}
}

// medianGapNs is the median time between the receiver's arrivals of the
// packets sent within [startNs, endNs]: how fast the queue drained; 0 with
// fewer than two such packets.
func medianGapNs(m []matchedPkt, startNs, endNs int64) int64 {
	var gaps []int64
	var last int64 = -1
	for _, p := range m {
		if p.sendNs >= startNs && p.sendNs <= endNs {
			if last >= 0 {
				gaps = append(gaps, p.recvNs-last)
			}
			last = p.recvNs
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	sort.Slice(gaps, func(i, j int) bool { return gaps[i] < gaps[j] })
	return gaps[len(gaps)/2]
}

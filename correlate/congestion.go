package correlate

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// The congestion signals around RoCE, per interval: how long each priority
// was paused (PFC and 802.3x PAUSE frames, timed by protostate.PauseTimer at
// Options.PauseBitsPerSec) and what the IFA 2.0 probes' hops reported (the
// longest residence time and the hop that reported it). Their columns are
// null where the capture columns are (coverage 0) and throughout when the
// captures hold no such frame: a capture point that does not see link-level
// frames says nothing of pauses.

// DefaultPauseBitsPerSec is the link rate pause quanta are counted at when
// Options.PauseBitsPerSec is 0: 100 Gb/s, a quantum of 5.12 ns.
const DefaultPauseBitsPerSec = 100_000_000_000

// maxPauseLinks bounds the link directions (pause senders) followed; the
// frames of later ones are left out.
const maxPauseLinks = 4096

// congestionFields are the columns, after the capture statistics.
func congestionFields() []arrow.Field {
	md := func(what string) arrow.Metadata { return arrow.NewMetadata([]string{descriptionKey}, []string{what}) }
	var fields []arrow.Field
	for p := range decode.PFCPriorities {
		fields = append(fields, arrow.Field{Name: "cap_paused_ns_p" + strconv.Itoa(p), Type: arrow.PrimitiveTypes.Int64, Nullable: true,
			Metadata: md(fmt.Sprintf("time priority %d was paused in the interval, ns, summed over the link directions that paused it (PFC and PAUSE frames by source MAC); null when the captures hold no PFC or PAUSE frame", p))})
	}
	return append(fields,
		arrow.Field{Name: "cap_ifa_probes", Type: arrow.PrimitiveTypes.Uint64, Nullable: true,
			Metadata: md("IFA 2.0 probes with hop metadata captured in the interval; null when the captures hold none")},
		arrow.Field{Name: "cap_ifa_max_residence_ns", Type: arrow.PrimitiveTypes.Int64, Nullable: true,
			Metadata: md("the longest residence time a hop of the interval's IFA probes reported, ns; null without probes")},
		arrow.Field{Name: "cap_ifa_max_residence_hop", Type: arrow.BinaryTypes.String, Nullable: true,
			Metadata: md("the hop that reported it: dev 0xDEVICE_ID/LNS port EGRESS_PORT")})
}

// ifaInterval is what the IFA probes of one interval reported.
type ifaInterval struct {
	probes   uint64
	maxResNs int64
	worst    string
}

// congestion is one interval set's signals, per interval; each part is
// allocated at the first frame of its kind (nil: the captures hold none).
type congestion struct {
	pausedNs [][decode.PFCPriorities]int64
	ifa      []ifaInterval
}

// addPause adds the time of pause span of priority prio to every interval
// it overlaps.
func (b *binner) addPause(prio int, span protostate.PauseSpan) {
	if b.cong.pausedNs == nil {
		b.cong.pausedNs = make([][decode.PFCPriorities]int64, len(b.startNs))
	}
	n := len(b.startNs)
	for i := sort.Search(n, func(i int) bool { return b.endNs[i] > span.StartNs }); i < n && b.startNs[i] < span.EndNs; i++ {
		if d := min(span.EndNs, b.endNs[i]) - max(span.StartNs, b.startNs[i]); d > 0 {
			b.cong.pausedNs[i][prio] += d
		}
	}
}

// addIFA counts a probe at tsNs whose longest hop residence is resNs.
func (b *binner) addIFA(tsNs, resNs int64, hop func() string) {
	if b.cong.ifa == nil {
		b.cong.ifa = make([]ifaInterval, len(b.startNs))
	}
	i := b.find(tsNs)
	if i < 0 {
		return
	}
	iv := &b.cong.ifa[i]
	iv.probes++
	if iv.probes == 1 || resNs > iv.maxResNs {
		iv.maxResNs, iv.worst = resNs, hop()
	}
}

// pauseLink is a pause sender: its MAC, or the capture's interface when
// the frame has no Ethernet header.
type pauseLink struct {
	mac    [6]byte
	iface  int8
	hasMAC bool
}

// congestionTracker follows the pauses of every link direction and the
// IFA probes through the binning pass.
type congestionTracker struct {
	bitsPerSec int64
	links      map[pauseLink]*[decode.PFCPriorities]protostate.PauseTimer
	sawPause   bool
}

func newCongestionTracker(bitsPerSec int64) *congestionTracker {
	if bitsPerSec <= 0 {
		bitsPerSec = DefaultPauseBitsPerSec
	}
	return &congestionTracker{bitsPerSec: bitsPerSec, links: map[pauseLink]*[decode.PFCPriorities]protostate.PauseTimer{}}
}

// add takes one frame: a pause request or an IFA probe.
func (c *congestionTracker) add(f *decode.Frame, sets []*binner) {
	switch {
	case f.Has&(decode.HasPFC|decode.HasPause) != 0:
		c.pause(f, sets)
	case f.Has&decode.HasIFAMetadata != 0 && f.IFAMetadata.Hops() > 0:
		md := &f.IFAMetadata
		worst, worstNs := 0, int64(-1)
		for i := range md.Hops() {
			if h := md.Hop(i); int64(h.ResidenceNs) > worstNs {
				worst, worstNs = i, int64(h.ResidenceNs)
			}
		}
		hop := func() string {
			h := md.Hop(worst)
			return decode.IFAPortName(h.DeviceID, h.LNS, h.EgressPort)
		}
		for _, b := range sets {
			b.addIFA(f.TsNs, worstNs, hop)
		}
	}
}

func (c *congestionTracker) pause(f *decode.Frame, sets []*binner) {
	if !c.sawPause {
		c.sawPause = true
		for _, b := range sets { // the columns are 0, no longer null, where nothing was paused
			b.cong.pausedNs = make([][decode.PFCPriorities]int64, len(b.startNs))
		}
	}
	k := pauseLink{iface: f.Iface}
	if f.Ethernet {
		k = pauseLink{mac: f.SrcMAC, iface: -1, hasMAC: true}
	}
	timers := c.links[k]
	if timers == nil {
		if len(c.links) >= maxPauseLinks {
			return
		}
		timers = new([decode.PFCPriorities]protostate.PauseTimer)
		c.links[k] = timers
	}
	enable, quanta, _ := f.PauseRequest()
	for p := range timers {
		if enable>>p&1 == 0 {
			continue
		}
		if span, ended, _ := timers[p].Request(f.TsNs, quanta[p], c.bitsPerSec); ended {
			for _, b := range sets {
				b.addPause(p, span)
			}
		}
	}
}

// finish adds the pauses still running, to their timers' ends.
func (c *congestionTracker) finish(sets []*binner) {
	for _, timers := range c.links {
		for p := range timers {
			if span, ok := timers[p].Running(); ok {
				for _, b := range sets {
					b.addPause(p, span)
				}
			}
		}
	}
}

// congestionBuilders append the congestion columns.
type congestionBuilders struct {
	paused   [decode.PFCPriorities]*array.Int64Builder
	probes   *array.Uint64Builder
	maxResNs *array.Int64Builder
	worst    *array.StringBuilder
}

func newCongestionBuilders(next func() array.Builder) congestionBuilders {
	var c congestionBuilders
	for p := range c.paused {
		c.paused[p] = next().(*array.Int64Builder)
	}
	c.probes = next().(*array.Uint64Builder)
	c.maxResNs = next().(*array.Int64Builder)
	c.worst = next().(*array.StringBuilder)
	return c
}

// append appends interval i of b's signals; covered says the interval
// overlaps the capture.
func (c *congestionBuilders) append(b *binner, i int, covered bool) {
	for p, pb := range c.paused {
		if covered && b.cong.pausedNs != nil {
			pb.Append(b.cong.pausedNs[i][p])
		} else {
			pb.AppendNull()
		}
	}
	if !covered || b.cong.ifa == nil {
		c.probes.AppendNull()
		c.maxResNs.AppendNull()
		c.worst.AppendNull()
		return
	}
	iv := b.cong.ifa[i]
	c.probes.Append(iv.probes)
	if iv.probes == 0 {
		c.maxResNs.AppendNull()
		c.worst.AppendNull()
		return
	}
	c.maxResNs.Append(iv.maxResNs)
	c.worst.Append(iv.worst)
}

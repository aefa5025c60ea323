package sim

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// Limit is the range Validate accepts for one numeric scenario key.
type Limit struct {
	Key      string  // the YAML key; "flows[].bytes" stands for every flow's
	Min, Max float64 // inclusive
	Unit     string
}

// Bounds on times keep the simulator's int64 picosecond clock, and the
// nanoseconds since the Unix epoch it writes, far from overflowing: one
// simulated hour is 3.6e15 ps, and 2100 is 4.1e18 ns, against int64's 9.2e18.
const (
	MaxSimNs    = 3600e9       // flow starts, idle tail and periods: one simulated hour
	MaxDelayNs  = 1e9          // propagation and jitter: one second
	MaxEpochNs  = 4102444800e9 // 2100-01-01T00:00:00Z, within pcap's 32-bit seconds
	MinEpochNs  = 1            // 0 is the default (2015-06-01)
	MinPeriodNs = 1000         // FCP and telemetry periods: 1 us
)

// Ethernet bounds: the fastest link (1.6 Tb/s), and the most a PFC
// threshold or headroom may be (64 MiB, more than any switch's buffer).
const (
	MaxEthernetGbps = 1600
	MaxPFCBytes     = 64 << 20
)

// maxVLBufferBytes is the most one VL's receive buffer can be: 2048 blocks,
// the most the 12-bit credit counters can advertise (IBA 7.9.4).
const maxVLBufferBytes = 2048 * blockBytes

// MaxScenarioBytes bounds a scenario file: LoadScenario reads it whole.
const MaxScenarioBytes = 16 << 20

// Bounds on the amount of work and output, checked before anything is
// written (an estimate from the flows' sizes) and while running.
const (
	MaxDataPackets   = 1 << 28 // all flows together
	MaxTruthPackets  = 1 << 24 // with truth_packets, each listed in truth.json
	MaxTruthProbes   = 1 << 22 // IFA probes, each listed with its hops in truth.json
	MaxTruthPauses   = 1 << 22 // pauses listed in truth.json (the rest are counted)
	MaxEvents        = 1 << 32 // simulator events in one run
	MaxCaptureBytes  = 1 << 38 // 256 GiB: the captures' estimated size
	MaxPeriodicLines = 1 << 28 // FCP timer events and telemetry samples the run's length implies at least
)

// Bounds on the scenario's size: a fabric of thousands of nodes, well
// beyond what a simulation to read packet by packet needs, and far below
// the 150,000 switches in a chain that ran for ten minutes at 800 MB
// before these bounds.
const (
	MaxHosts    = 8192
	MaxSwitches = 8192
	MaxLinks    = 32768
	MaxFlows    = 65536
	MaxTaps     = 1024
)

// SizeLimits bound how many of each list a scenario may hold; Validate
// refuses more before it looks at any of them.
var SizeLimits = []Limit{
	{"hosts", 0, MaxHosts, "hosts"},
	{"switches", 0, MaxSwitches, "switches"},
	{"links", 0, MaxLinks, "links"},
	{"flows", 0, MaxFlows, "flows"},
	{"taps", 0, MaxTaps, "taps"},
}

// Limits is every numeric key's range, in one place; Validate names the key
// of a value outside it. Integer keys must be whole numbers, tick_ns a
// finite one.
var Limits = []Limit{
	{"vls", 1, 15, "data VLs (0: 1)"},
	{"epoch_ns", MinEpochNs, MaxEpochNs, "ns since the Unix epoch (0: 2015-06-01)"},
	{"propagation_ns", 0, MaxDelayNs, "ns (0: 5)"},
	{"tick_ns", 0.001, 1e6, "ns (0: 16)"},
	{"fcp_period_ns", MinPeriodNs, MaxSimNs, "ns (0: 65536 symbol times)"},
	{"tail_ns", 0, MaxSimNs, "ns"},
	{"credit_jitter_ns", 0, MaxDelayNs, "ns"},
	{"hosts[].vl_buffer_bytes", blockBytes, maxVLBufferBytes, "bytes (0: 65536; at least one MTU-sized packet)"},
	{"switches[].port_buffer_bytes", blockBytes, 15 * maxVLBufferBytes, "bytes (0: 131072)"},
	{"switches[].buffer_vls", 1, 15, "VLs (0: 4; at least vls)"},
	{"switches[].vl_buffer_bytes[]", blockBytes, maxVLBufferBytes, "bytes (at least one MTU-sized packet)"},
	{"links[].propagation_ns", 0, MaxDelayNs, "ns (0: propagation_ns)"},
	{"gbps", 1, MaxEthernetGbps, "Gb/s, Ethernet (0: 100)"},
	{"links[].gbps", 1, MaxEthernetGbps, "Gb/s, Ethernet (0: gbps)"},
	{"switches[].pfc.xoff_bytes", 2, MaxPFCBytes, "bytes, Ethernet (0: 32768)"},
	{"switches[].pfc.xon_bytes", 1, MaxPFCBytes, "bytes, Ethernet (0: xoff_bytes/2; below xoff_bytes)"},
	{"switches[].pfc.headroom_bytes", 1, MaxPFCBytes, "bytes, Ethernet (0: 16384)"},
	{"switches[].pfc.pause_quanta", 1, 0xFFFF, "quanta of 512 bit times, Ethernet (0: 65535)"},
	{"switches[].pfc.refresh_ns", 1, MaxDelayNs, "ns, Ethernet (0: half the pause time)"},
	{"switches[].pfc.priorities[].priority", 0, decode.PFCPriorities - 1, "(below vls)"},
	{"switches[].pfc.priorities[].xoff_bytes", 2, MaxPFCBytes, "bytes (0: the switch's)"},
	{"switches[].pfc.priorities[].xon_bytes", 1, MaxPFCBytes, "bytes (0: the switch's if set, else xoff_bytes/2; below xoff_bytes)"},
	{"switches[].pfc.priorities[].headroom_bytes", 1, MaxPFCBytes, "bytes (0: the switch's)"},
	{"switches[].pfc.priorities[].pause_quanta", 1, 0xFFFF, "quanta (0: the switch's)"},
	{"switches[].pfc.priorities[].refresh_ns", 1, MaxDelayNs, "ns (0: the switch's)"},
	{"flows[].ifa_every", 0, 1 << 20, "packets, Ethernet (0: no IFA probes)"},
	{"flows[].bytes", 1, 1 << 40, "bytes"},
	{"flows[].message_bytes", 1, 1 << 31, "bytes (0: bytes, at most 1 MiB)"},
	{"flows[].start_ns", 0, MaxSimNs, "ns"},
	{"flows[].sl", 0, 14, "(below vls)"},
	{"flows[].ack_every", 0, 1 << 20, "packets"},
	{"flows[].jitter_ns", 0, MaxDelayNs, "ns"},
	{"taps[].quantize_ns", 0, MaxDelayNs, "ns"},
	{"taps[].snap_bytes", 0, 65535, "bytes (0: whole packets, else at least 20)"},
	{"telemetry.period_ns", MinPeriodNs, MaxSimNs, "ns"},
}

// limitFor returns the row of key, whose indexes ("flows[2].bytes") stand
// for any.
func limitFor(key string) Limit {
	var b strings.Builder
	for rest := key; rest != ""; {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i+1])
		rest = rest[i+j:]
	}
	row := b.String()
	for _, l := range Limits {
		if l.Key == row {
			return l
		}
	}
	panic("sim: no limit for " + key) // a programming error: every key checked has a row
}

// checkInt refuses v outside key's range.
func checkInt(key string, v int64) error {
	l := limitFor(key)
	// In int64: the limits are whole, and exact in float64 too.
	if v < int64(l.Min) || v > int64(l.Max) {
		return keyErr(key, "%d is out of range: want %s to %s %s", v, fmtLimit(l.Min), fmtLimit(l.Max), l.Unit)
	}
	return nil
}

// checkFloat refuses v outside key's range, or not a finite number.
func checkFloat(key string, v float64) error {
	l := limitFor(key)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return keyErr(key, "%v: want a finite number", v)
	}
	if v < l.Min || v > l.Max {
		return keyErr(key, "%g is out of range: want %s to %s %s", v, fmtLimit(l.Min), fmtLimit(l.Max), l.Unit)
	}
	return nil
}

func fmtLimit(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// checkWholeNumbers refuses what yaml.v3 would otherwise truncate quietly
// into an integer field of t: a fraction (bytes: 1.5), or a number past
// int64. n is the YAML node decoded into t; key names it.
func checkWholeNumbers(n *yaml.Node, t reflect.Type, key string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkWholeNumbers(c, t, key); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if t.Kind() != reflect.Struct {
			return nil // the decoder says what is wrong
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			name := n.Content[i].Value
			f, ok := yamlField(t, name)
			if !ok {
				continue // an unknown key, which the decoder refuses
			}
			if key != "" {
				name = key + "." + name
			}
			if err := checkWholeNumbers(n.Content[i+1], f.Type, name); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, c := range n.Content {
			if err := checkWholeNumbers(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case yaml.AliasNode:
		// Aliases of scalars only: following those of collections could
		// take exponential time (the decoder bounds their expansion).
		if a := n.Alias; a != nil && a.Kind == yaml.ScalarNode {
			return checkWholeNumbers(a, t, key)
		}
	case yaml.ScalarNode:
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		if n.ShortTag() != "!!float" {
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return keyErr(key, "%q: %v", n.Value, err)
		}
		if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return keyErr(key, "%s: want a whole number", n.Value)
		}
	}
	return nil
}

// yamlField finds the field of struct t whose yaml tag is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// checkWorkload bounds the work and the output the scenario implies, before
// anything is written: data packets (from the flows' sizes), the captures'
// size (each tap may see every data packet and its ACK), and the FCP timer
// events and telemetry samples over the shortest the run can be (the last
// flow's start plus the idle tail).
func (s *Scenario) checkWorkload() error {
	if err := s.checkOutputSizes(); err != nil {
		return err
	}
	return s.checkRunLength()
}

// checkOutputSizes bounds what the run writes: data packets, IFA probes and
// packets listed in the truth, bytes of capture.
func (s *Scenario) checkOutputSizes() error {
	var packets int64
	for i, f := range s.Flows {
		packets += flowPackets(f.Bytes, f.MessageBytes, int64(s.MTUBytes))
		if packets > MaxDataPackets {
			return keyErr(fmt.Sprintf("flows[%d].bytes", i), "the flows up to this one send %d data packets of at most %d bytes: at most %d in one run (send fewer bytes, or use a larger mtu_bytes)",
				packets, s.MTUBytes, MaxDataPackets)
		}
	}
	var probes int64
	for i, f := range s.Flows {
		if f.IFAEvery > 0 {
			probes += flowPackets(f.Bytes, f.MessageBytes, int64(s.MTUBytes)) / int64(f.IFAEvery)
		}
		if probes > MaxTruthProbes {
			return keyErr(fmt.Sprintf("flows[%d].ifa_every", i), "the flows up to this one send %d IFA probes, each listed in %s: at most %d (a larger ifa_every sends fewer)",
				probes, TruthFile, MaxTruthProbes)
		}
	}
	if s.TruthPackets && packets > MaxTruthPackets {
		return keyErr("truth_packets", "%d data packets to list in %s: at most %d", packets, TruthFile, MaxTruthPackets)
	}
	var captureBytes int64
	for i, t := range s.Taps {
		rec := int64(maxPacketBlocks(s.MTUBytes) * blockBytes)
		if t.SnapBytes > 0 {
			rec = min(rec, int64(t.SnapBytes))
		}
		captureBytes += 2 * packets * (rec + 32) // pcap and ERF record headers
		if captureBytes > MaxCaptureBytes {
			return keyErr(fmt.Sprintf("taps[%d]", i), "the taps up to this one would write about %d GiB of captures: at most %d GiB (send fewer bytes, tap fewer ports, or set snap_bytes)",
				captureBytes>>30, MaxCaptureBytes>>30)
		}
	}
	return nil
}

// checkRunLength bounds the work of the shortest run the flows allow:
// simulator events, FCP timer events and telemetry samples.
func (s *Scenario) checkRunLength() error {
	var lastStartNs int64
	for _, f := range s.Flows {
		lastStartNs = max(lastStartNs, f.StartNs)
	}
	// The shortest the run can be: the last start, the idle tail, and the
	// time the flow with the longest path takes to cross it, at least one
	// MTU packet's serialisation at the fastest link and the shortest
	// propagation a hop. A long path keeps every link's FCP timer going
	// for as long.
	flowHops := s.pathHops()
	hops, events, longestNs := 0, 0.0, 0.0
	hopNs := s.minHopNs()
	for i, f := range s.Flows {
		n := float64(flowPackets(f.Bytes, f.MessageBytes, int64(s.MTUBytes)))
		hops = max(hops, flowHops[i])
		events += 2 * float64(flowHops[i]) * n // a send and an arrival a hop
		// Its packets one after the other on its first link, the last
		// then across the rest of the path.
		longestNs = max(longestNs, (n-1+float64(flowHops[i]))*hopNs)
	}
	if events > MaxEvents {
		return keyErr("flows", "the flows' packets cross up to %d hops on their way: about %.3g simulator events, at most %d (send fewer bytes, or shorten the paths)",
			hops, events, uint64(MaxEvents))
	}
	minRunNs := float64(lastStartNs+s.TailNs) + longestNs
	var timers float64
	for _, l := range s.Links {
		if s.ethernet() {
			break // no FCPs on Ethernet
		}
		period := float64(s.FCPPeriodNs)
		if period == 0 {
			rate, _ := protostate.ParseLinkRate(l.Rate)
			period = 65536 * rate.SymbolTimeNs
		}
		timers += 2 * minRunNs / period
	}
	if timers > MaxPeriodicLines {
		return keyErr("fcp_period_ns", "the flows run at least %.0f ns (the last start, tail_ns and the longest path, %d hops): %.3g FCP timer events on %d links at this period, at most %d",
			minRunNs, hops, timers, len(s.Links), MaxPeriodicLines)
	}
	if t := s.Telemetry; t != nil {
		lines := float64(len(s.samplePortRefs())) * minRunNs / float64(t.PeriodNs)
		if lines > MaxPeriodicLines {
			return keyErr("telemetry.period_ns", "the flows run at least %.0f ns (the last start, tail_ns and the longest path): %.3g port samples at this period, at most %d",
				minRunNs, lines, MaxPeriodicLines)
		}
	}
	return nil
}

// flowPackets is how many data packets a flow of bytes sends as messages of
// messageBytes, each cut into MTU-sized packets.
func flowPackets(bytes, messageBytes, mtuBytes int64) int64 {
	perMessage := (messageBytes + mtuBytes - 1) / mtuBytes
	n := bytes / messageBytes * perMessage
	if rest := bytes % messageBytes; rest > 0 {
		n += (rest + mtuBytes - 1) / mtuBytes
	}
	return n
}

// pathHops returns the links each flow's path crosses (breadth-first from
// its source: the shortest path, which the switches route), 0 for flows
// between unlinked hosts, which the build refuses.
func (s *Scenario) pathHops() []int {
	hosts := make(map[string]bool, len(s.Hosts))
	for _, h := range s.Hosts {
		hosts[h.Name] = true
	}
	adj := make(map[string][]string, len(s.Hosts)+len(s.Switches))
	for _, l := range s.Links {
		adj[l.A] = append(adj[l.A], l.B)
		adj[l.B] = append(adj[l.B], l.A)
	}
	dist := map[string]map[string]int{}
	hops := make([]int, len(s.Flows))
	for i, f := range s.Flows {
		d, ok := dist[f.Src]
		if !ok {
			d = map[string]int{f.Src: 0}
			frontier := []string{f.Src}
			for len(frontier) > 0 {
				var next []string
				for _, n := range frontier {
					for _, m := range adj[n] {
						if _, seen := d[m]; !seen {
							d[m] = d[n] + 1
							if !hosts[m] {
								next = append(next, m) // hosts forward nothing
							}
						}
					}
				}
				frontier = next
			}
			dist[f.Src] = d
		}
		hops[i] = d[f.Dst]
	}
	return hops
}

// minHopNs is the least time a data packet takes across one hop: an MTU
// packet's serialisation at the fastest link of the scenario, and the
// shortest propagation.
func (s *Scenario) minHopNs() float64 {
	hop := math.Inf(1)
	for _, l := range s.Links {
		var psPerByte float64
		if s.ethernet() {
			psPerByte = 8000 / ethernetRate(l.Gbps).DataGbps(1)
		} else {
			rate, _ := protostate.ParseLinkRate(l.Rate)
			psPerByte = 8000 / rate.DataGbps(l.Lanes)
		}
		hop = min(hop, float64(l.PropagationNs)+psPerByte*float64(s.MTUBytes)/1000)
	}
	if math.IsInf(hop, 1) {
		return 0
	}
	return hop
}

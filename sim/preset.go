package sim

import (
	"fmt"
	"sort"
	"strings"
)

// IncastConfig shapes an incast: Senders hosts write to one receiver
// through one switch, each starting StaggerNs after the previous one.
type IncastConfig struct {
	Rate           string  // link rate, "SDR".."XDR" (protostate.LinkRates)
	Lanes          int     // link width, lanes
	MTUBytes       int     // path MTU, bytes
	VLBufferBytes  int     // switch input buffer per VL, bytes (the port holds 4 VLs of it)
	TickNs         float64 // PortXmitWait tick, ns
	Senders        int     // at least 2
	BytesPerSender int64   // message data each sender writes, bytes
	StaggerNs      int64   // delay between sender starts, ns
	SamplePeriodNs int64   // telemetry period, ns
	QuantizeNs     int64   // capture timestamp step, ns (1000 mimics ibdump), 0 for ns
	CreditJitterNs int64   // random delay of credit updates, ns (see Scenario)
}

// Incast builds the scenario: hosts s1..sN and r around switch sw (sender i
// on switch port i, the receiver on port N+1), taps on every host port, and
// telemetry of every port.
func Incast(c IncastConfig) *Scenario {
	s := &Scenario{
		Name:           fmt.Sprintf("incast-%s-%dx-mtu%d-buf%d-tick%g", c.Rate, c.Lanes, c.MTUBytes, c.VLBufferBytes, c.TickNs),
		Seed:           1,
		Rate:           c.Rate,
		Lanes:          c.Lanes,
		MTUBytes:       c.MTUBytes,
		TickNs:         c.TickNs,
		CreditJitterNs: c.CreditJitterNs,
		Switches:       []Switch{{Name: "sw", PortBufferBytes: 4 * c.VLBufferBytes, BufferVLs: 4}},
		Telemetry:      &Telemetry{PeriodNs: c.SamplePeriodNs, File: "perfquery.txt"},
	}
	for i := 1; i <= c.Senders; i++ {
		name := fmt.Sprintf("s%d", i)
		s.Hosts = append(s.Hosts, Host{Name: name})
		s.Links = append(s.Links, Link{A: name, B: "sw"})
		s.Flows = append(s.Flows, Flow{Src: name, Dst: "r", Bytes: c.BytesPerSender, StartNs: 10000 + int64(i-1)*c.StaggerNs})
		s.Taps = append(s.Taps, Tap{Port: name + "/1", File: name + ".pcap", QuantizeNs: c.QuantizeNs})
	}
	s.Hosts = append(s.Hosts, Host{Name: "r"})
	s.Links = append(s.Links, Link{A: "sw", B: "r"})
	s.Taps = append(s.Taps, Tap{Port: "r/1", File: "r.pcap", QuantizeNs: c.QuantizeNs})
	return s
}

// OnEthernet turns an incast into its RoCE twin: the same hosts, flows and
// taps on Ethernet links of gbps, the switch's inputs running pfc, and
// every ifaEvery-th data packet of each flow an IFA probe (0: none).
func OnEthernet(s *Scenario, gbps int, pfc PFC, ifaEvery int) *Scenario {
	s.LinkLayer, s.Rate, s.Lanes, s.Gbps = LinkEthernet, "", 0, gbps
	for i := range s.Links {
		s.Links[i].Rate, s.Links[i].Lanes = "", 0
	}
	for i := range s.Switches {
		c := pfc
		s.Switches[i].PFC = &c
	}
	for i := range s.Flows {
		s.Flows[i].IFAEvery = ifaEvery
	}
	return s
}

// pcapngTaps names each tap file *.pcapng rather than *.pcap, so that its
// interface carries the tapped port's name and mergecap keeps the taps of a
// run apart.
func pcapngTaps(s *Scenario) *Scenario {
	for i := range s.Taps {
		s.Taps[i].File = strings.TrimSuffix(s.Taps[i].File, ".pcap") + ".pcapng"
	}
	return s
}

// incast2015 is the 2015 study: two SDR 4x senders, one receiver, MTU 2
// KiB, 128 MiB each, the second starting 50 ms after the first, 32 KiB per
// VL of switch input buffer (128 KiB per port over 4 VLs, as on the SX6036).
func incast2015() *Scenario {
	return Incast(IncastConfig{Rate: "SDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 128 << 20, StaggerNs: 50_000_000, SamplePeriodNs: 1_000_000})
}

// incastSmall is a small incast for quick looks: 4 MiB per sender, QDR.
func incastSmall() *Scenario {
	return Incast(IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 4 << 20, StaggerNs: 300_000, SamplePeriodNs: 50_000})
}

// roce2015PFC keeps the 2015 switch's 32 KiB per VL as each priority's
// share of the input buffer: XOFF at 20 KiB, 12 KiB of headroom above it
// (a 2 KiB-MTU frame in flight each way and a few metres of cable at 10 or
// 40 GbE), XON at 10 KiB, the longest pause (refreshed at half of it).
var roce2015PFC = PFC{XOFFBytes: 20 << 10, XONBytes: 10 << 10, HeadroomBytes: 12 << 10, PauseQuanta: 0xFFFF}

// presets are scenarios by name; their taps are pcapng.
var presets = map[string]func() *Scenario{
	"incast2015": func() *Scenario {
		s := pcapngTaps(incast2015())
		s.Name = "incast2015"
		return s
	},
	"incast-small": func() *Scenario {
		s := pcapngTaps(incastSmall())
		s.Name = "incast-small"
		return s
	},
	// The 2015 incast on RoCE: the same two senders of 128 MiB, 50 ms
	// apart, into one port, on 10 GbE (the nearest Ethernet rate to SDR
	// 4x's 8 Gb/s) through a PFC switch; every 61st packet an IFA probe (a
	// stride prime to the 512 packets of a message, so that the probes do
	// not sample one place in each message: every 64th gives a mean
	// residence 9 % below all packets').
	"incast2015-roce": func() *Scenario {
		s := pcapngTaps(OnEthernet(incast2015(), 10, roce2015PFC, 61))
		s.Name = "incast2015-roce"
		return s
	},
	// incast-small on RoCE (40 GbE, every 13th packet a probe).
	"incast-small-roce": func() *Scenario {
		s := pcapngTaps(OnEthernet(incastSmall(), 40, roce2015PFC, 13))
		s.Name = "incast-small-roce"
		return s
	},
}

// Preset returns a fresh copy of the named scenario.
func Preset(name string) (*Scenario, error) {
	f, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("no preset %q (have %v)", name, PresetNames())
	}
	return f(), nil
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var n []string
	for k := range presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

package sim

import (
	"fmt"
	"sort"
)

// IncastConfig shapes an incast: Senders hosts write to one receiver
// through one switch, each starting StaggerNs after the previous one.
type IncastConfig struct {
	Rate           string  // link rate, "SDR".."XDR" (decode.LinkRates)
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

// presets are scenarios by name.
var presets = map[string]func() *Scenario{
	// The 2015 study: two SDR 4x senders, one receiver, MTU 2 KiB, 128 MiB
	// each, the second starting 50 ms after the first, 32 KiB per VL of
	// switch input buffer (128 KiB per port over 4 VLs, as on the SX6036).
	"incast2015": func() *Scenario {
		s := Incast(IncastConfig{Rate: "SDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
			Senders: 2, BytesPerSender: 128 << 20, StaggerNs: 50_000_000, SamplePeriodNs: 1_000_000})
		s.Name = "incast2015"
		return s
	},
	// A small incast for quick looks: 4 MiB per sender, QDR.
	"incast-small": func() *Scenario {
		s := Incast(IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
			Senders: 2, BytesPerSender: 4 << 20, StaggerNs: 300_000, SamplePeriodNs: 50_000})
		s.Name = "incast-small"
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

package sim

import (
	"strings"
	"testing"
)

// TestEthernetScenarioRefusals: each link layer refuses the other's keys,
// and PFC settings that cannot work are refused naming the key.
func TestEthernetScenarioRefusals(t *testing.T) {
	sw := func(pfc string) string {
		return strings.Replace(ethernetYAML, "{name: sw}", "{name: sw, pfc: "+pfc+"}", 1)
	}
	for _, c := range []struct{ name, text, key, want string }{
		{"IB rate on Ethernet", ethernetYAML + "rate: QDR\n", "rate", "InfiniBand rate"},
		{"lanes on an Ethernet link", strings.Replace(ethernetYAML, "{a: sw, b: b}", "{a: sw, b: b, lanes: 4}", 1), "links[1].lanes", "gbps only"},
		{"gbps on InfiniBand", goodYAML + "gbps: 100\n", "gbps", "Ethernet rate"},
		{"PFC on InfiniBand", strings.Replace(goodYAML, "{name: sw}", "{name: sw, pfc: {xoff_bytes: 1000}}", 1), "switches[0].pfc", "Ethernet's"},
		{"IFA on InfiniBand", strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, ifa_every: 4", 1), "flows[0].ifa_every", "RoCE's"},
		{"unknown link layer", goodYAML + "link_layer: fddi\n", "link_layer", "want infiniband or ethernet"},
		{"nine priorities", ethernetYAML + "vls: 9\n", "vls", "Ethernet has 8"},
		{"snap shorter than the RoCE headers", strings.Replace(ethernetYAML, "file: a.pcap", "file: a.pcap, snap_bytes: 40", 1), "taps[0].snap_bytes", "through the BTH"},
		{"XON not below XOFF", sw("{xoff_bytes: 1000, xon_bytes: 1000}"), "switches[0].pfc.xon_bytes", "below xoff_bytes"},
		{"priority not in use", sw("{priorities: [{priority: 1}]}"), "switches[0].pfc.priorities[0].priority", "not in use"},
		{"priority twice", sw("{priorities: [{priority: 0}, {priority: 0}]}"), "switches[0].pfc.priorities[1].priority", "set twice"},
		{"priority's XOFF under the switch's XON", sw("{xon_bytes: 2000, priorities: [{priority: 0, xoff_bytes: 1000}]}"), "switches[0].pfc.priorities[0].xon_bytes", "0 takes the switch's xon_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadScenario(writeFile(t, "s.yaml", c.text))
			wantKeyErr(t, err, c.key, c.want)
		})
	}
	s, err := LoadScenario(writeFile(t, "s.yaml", sw("{xoff_bytes: 9000, priorities: [{priority: 0, pause_quanta: 7}]}")))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Switches[0].PFC.pfcFor(0); p.XOFFBytes != 9000 || p.XONBytes != 4500 || p.HeadroomBytes != 16384 || p.PauseQuanta != 7 {
		t.Errorf("priority 0 settings %+v: want the switch's, its pause_quanta overridden", p)
	}
	// A priority's XOFF alone: its XON is half of it where the switch sets
	// none (as the switch's is half of the switch's XOFF), the switch's
	// where it sets one.
	for _, c := range []struct {
		pfc     string
		wantXON int
	}{{"{priorities: [{priority: 0, xoff_bytes: 1000}]}", 500}, {"{xon_bytes: 300, priorities: [{priority: 0, xoff_bytes: 1000}]}", 300}} {
		s, err := LoadScenario(writeFile(t, "s.yaml", sw(c.pfc)))
		if err != nil {
			t.Fatalf("%s: %v", c.pfc, err)
		}
		if p := s.Switches[0].PFC.pfcFor(0); p.XOFFBytes != 1000 || p.XONBytes != c.wantXON {
			t.Errorf("%s: priority 0 settings %+v, want XOFF 1000, XON %d", c.pfc, p, c.wantXON)
		}
	}
}

package sim

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// limitYAML puts a value into goodYAML (which has a telemetry-less pair
// through one switch) at each Limits key; %s is the value.
var limitYAML = map[string]string{
	"vls":                          "vls: %s\n",
	"hosts[].vl_buffer_bytes":      "HOST vl_buffer_bytes: %s",
	"switches[].port_buffer_bytes": "SW port_buffer_bytes: %s",
	"switches[].buffer_vls":        "SW buffer_vls: %s",
	"switches[].vl_buffer_bytes[]": "SW vl_buffer_bytes: [%s]",
	"flows[].sl":                   "FLOW sl: %s",
	"epoch_ns":                     "epoch_ns: %s\n",
	"propagation_ns":               "propagation_ns: %s\n",
	"tick_ns":                      "tick_ns: %s\n",
	"fcp_period_ns":                "fcp_period_ns: %s\n",
	"tail_ns":                      "tail_ns: %s\n",
	"credit_jitter_ns":             "credit_jitter_ns: %s\n",
	"links[].propagation_ns":       "LINK propagation_ns: %s",
	"flows[].bytes":                "FLOW bytes: %s",
	"flows[].message_bytes":        "FLOW message_bytes: %s",
	"flows[].start_ns":             "FLOW start_ns: %s",
	"flows[].ack_every":            "FLOW ack_every: %s",
	"flows[].jitter_ns":            "FLOW jitter_ns: %s",
	"taps[].quantize_ns":           "TAP quantize_ns: %s",
	"taps[].snap_bytes":            "TAP snap_bytes: %s",
	"telemetry.period_ns":          "telemetry: {period_ns: %s}\n",
	// Ethernet keys, in goodYAML on Ethernet links.
	"gbps":                                       "ETH gbps: %s\n",
	"links[].gbps":                               "ETH LINK gbps: %s",
	"switches[].pfc.xoff_bytes":                  "ETH SW pfc: {xoff_bytes: %s}",
	"switches[].pfc.xon_bytes":                   "ETH SW pfc: {xon_bytes: %s}",
	"switches[].pfc.headroom_bytes":              "ETH SW pfc: {headroom_bytes: %s}",
	"switches[].pfc.pause_quanta":                "ETH SW pfc: {pause_quanta: %s}",
	"switches[].pfc.refresh_ns":                  "ETH SW pfc: {refresh_ns: %s}",
	"flows[].ifa_every":                          "ETH FLOW ifa_every: %s",
	"switches[].pfc.priorities[].priority":       "ETH SW pfc: {priorities: [{priority: %s}]}",
	"switches[].pfc.priorities[].xoff_bytes":     "ETH SW pfc: {priorities: [{priority: 0, xon_bytes: 1, xoff_bytes: %s}]}",
	"switches[].pfc.priorities[].xon_bytes":      "ETH SW pfc: {priorities: [{priority: 0, xon_bytes: %s}]}",
	"switches[].pfc.priorities[].headroom_bytes": "ETH SW pfc: {priorities: [{priority: 0, headroom_bytes: %s}]}",
	"switches[].pfc.priorities[].pause_quanta":   "ETH SW pfc: {priorities: [{priority: 0, pause_quanta: %s}]}",
	"switches[].pfc.priorities[].refresh_ns":     "ETH SW pfc: {priorities: [{priority: 0, refresh_ns: %s}]}",
}

// ethernetYAML is goodYAML on Ethernet links.
var ethernetYAML = strings.Replace(goodYAML, "rate: QDR\n", "link_layer: ethernet\n", 1)

// scenarioWith is goodYAML with key set to value.
func scenarioWith(t *testing.T, key, value string) string {
	t.Helper()
	form, ok := limitYAML[key]
	if !ok {
		t.Fatalf("no YAML form for limit %s", key)
	}
	text := fmt.Sprintf(form, value)
	base := goodYAML
	if rest, ok := strings.CutPrefix(text, "ETH "); ok {
		text, base = rest, ethernetYAML
	}
	for _, c := range []struct{ tag, old string }{
		{"HOST ", "{name: a}"}, {"SW ", "{name: sw}"}, {"LINK ", "{a: sw, b: b}"}, {"FLOW ", "{src: a, dst: b, bytes: 65536}"}, {"TAP ", "{port: a/1, file: a.pcap}"},
	} {
		if field, ok := strings.CutPrefix(text, c.tag); ok {
			if strings.HasPrefix(field, "bytes:") {
				return strings.Replace(base, "bytes: 65536", field, 1)
			}
			return strings.Replace(base, c.old, strings.TrimSuffix(c.old, "}")+", "+field+"}", 1)
		}
	}
	return base + text
}

// wantKeyErr fails unless err is a *KeyError on key whose message holds want.
func wantKeyErr(t *testing.T, err error, key, want string) {
	t.Helper()
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != key || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one on key %s saying %q", err, key, want)
	}
}

func fmtInt(v float64) string { return fmt.Sprintf("%.0f", v) }

// limitsAccepted are values inside each key's range that goodYAML takes
// (where the table's own ends meet another check: an MTU-sized buffer, a
// flow count, the scenario's VLs); by default the range's ends.
var limitsAccepted = map[string][]string{
	"vls":                                   {"1"},
	"epoch_ns":                              {"1", "4102444800000000000"},
	"tick_ns":                               {"0.001", "1e6", "16.5"},
	"hosts[].vl_buffer_bytes":               {"4096", "131072"},
	"switches[].port_buffer_bytes":          {"16384", "524288"},
	"switches[].buffer_vls":                 {"1", "15"},
	"switches[].vl_buffer_bytes[]":          {"4096", "131072"},
	"flows[].bytes":                         {"1", "2048"}, // the maximum is refused as too many packets
	"flows[].sl":                            {"0"},
	"flows[].start_ns":                      {"0", "3600000"},
	"tail_ns":                               {"0", "3600000"},
	"taps[].snap_bytes":                     {"0", "20", "65535"},
	"telemetry.period_ns":                   {"1000", "1000000"},
	"switches[].pfc.xon_bytes":              {"1", "32767"}, // below the default xoff_bytes
	"switches[].pfc.priorities[].priority":  {"0"},          // below vls
	"switches[].pfc.priorities[].xon_bytes": {"1", "32767"}, // below the switch's xoff_bytes
}

// limitsDefault are the keys where 0 means the default, so the value below
// a minimum of 1 is accepted.
var limitsDefault = map[string]bool{
	"vls": true, "epoch_ns": true, "fcp_period_ns": true, "tick_ns": true, "flows[].message_bytes": true,
	"hosts[].vl_buffer_bytes": true, "switches[].port_buffer_bytes": true, "switches[].buffer_vls": true,
	"gbps": true, "links[].gbps": true, "switches[].pfc.xon_bytes": true, "switches[].pfc.headroom_bytes": true,
	"switches[].pfc.pause_quanta": true, "switches[].pfc.refresh_ns": true,
	"switches[].pfc.priorities[].xon_bytes": true, "switches[].pfc.priorities[].headroom_bytes": true,
	"switches[].pfc.priorities[].pause_quanta": true, "switches[].pfc.priorities[].refresh_ns": true,
}

// TestLimits: every key of the Limits table takes values in its range and
// refuses one past either end (and, for integers, int64's extremes),
// naming the key; before anything is run.
func TestLimits(t *testing.T) {
	for _, l := range Limits {
		key := strings.ReplaceAll(l.Key, "[]", "[0]")
		if strings.HasPrefix(l.Key, "links[]") {
			key = strings.Replace(l.Key, "[]", "[1]", 1)
		}
		in, ok := limitsAccepted[l.Key]
		if !ok {
			in = []string{fmtInt(l.Min), fmtInt(l.Max)}
		}
		out := []string{"9223372036854775807", "-9223372036854775808", fmt.Sprint(int64(l.Max) + 1), fmt.Sprint(int64(l.Min) - 1)}
		if limitsDefault[l.Key] && l.Min == 1 {
			out = out[:3]
		}
		if l.Key == "tick_ns" {
			out = []string{"0.0009", "1000001", ".nan", ".inf", "-.inf", "-1"}
		}
		for _, v := range in {
			if _, err := LoadScenario(writeFile(t, "s.yaml", scenarioWith(t, l.Key, v))); err != nil {
				t.Errorf("%s: %s refused: %v", l.Key, v, err)
			}
		}
		for _, v := range out {
			_, err := LoadScenario(writeFile(t, "s.yaml", scenarioWith(t, l.Key, v)))
			if err == nil {
				t.Errorf("%s: %s accepted", l.Key, v)
				continue
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != key {
				// yaml.v3 itself refuses numbers past int for int fields.
				if !strings.Contains(err.Error(), "cannot unmarshal") {
					t.Errorf("%s: %s: %v, want an error on key %s", l.Key, v, err, key)
				}
			}
		}
	}
}

// TestLimitsIssueCases: the values outside testers found, each refused at
// load time naming its key.
func TestLimitsIssueCases(t *testing.T) {
	for _, c := range []struct{ name, text, key, want string }{
		{"credit jitter at int64's max (Int64N panicked)", goodYAML + "credit_jitter_ns: 9223372036854775807\n", "credit_jitter_ns", "out of range: want 0 to 1000000000 ns"},
		{"fcp period of 1 ns (ran out of memory)", goodYAML + "fcp_period_ns: 1\n", "fcp_period_ns", "want 1000 to"},
		{"start near 2^63 (ps clock overflowed)", strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, start_ns: 9223372036854775000", 1), "flows[0].start_ns", "out of range"},
		{"propagation near 2^63", goodYAML + "propagation_ns: 9223372036854775000\n", "propagation_ns", "out of range"},
		{"epoch near 2^63", goodYAML + "epoch_ns: 9223372036854775000\n", "epoch_ns", "out of range"},
		{"tick NaN", goodYAML + "tick_ns: .nan\n", "tick_ns", "want a finite number"},
		{"fractional bytes", strings.Replace(goodYAML, "bytes: 65536", "bytes: 1.5", 1), "flows[0].bytes", "1.5: want a whole number"},
		{"fractional buffer", strings.Replace(goodYAML, "{name: sw}", "{name: sw, vl_buffer_bytes: [32768.5]}", 1), "switches[0].vl_buffer_bytes[0]", "want a whole number"},
		{"huge bytes", strings.Replace(goodYAML, "bytes: 65536", "bytes: 1099511627776", 1), "flows[0].bytes", "data packets"},
		{"captures too large", strings.Replace(goodYAML, "bytes: 65536", "bytes: 274877906944", 1), "taps[0]", "GiB of captures"},
		{"fcp timers over a long run", strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, start_ns: 3600000000000", 1) + "fcp_period_ns: 1000\n", "fcp_period_ns", "FCP timer events"},
		{"telemetry samples over a long run", strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, start_ns: 3600000000000", 1) + "telemetry: {period_ns: 1000}\n", "telemetry.period_ns", "port samples"},
		{"truth packets", strings.Replace(goodYAML, "bytes: 65536", "bytes: 68719476736", 1) + "truth_packets: true\n", "truth_packets", "data packets to list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadScenario(writeFile(t, "s.yaml", c.text))
			wantKeyErr(t, err, c.key, c.want)
		})
	}
	// Whole numbers written as floats are still whole numbers.
	if s, err := LoadScenario(writeFile(t, "s.yaml", strings.Replace(goodYAML, "bytes: 65536", "bytes: 6.5536e4", 1))); err != nil || s.Flows[0].Bytes != 65536 {
		t.Errorf("bytes: 6.5536e4: %v", err)
	}
	if math.IsNaN(limitFor("tick_ns").Max) {
		t.Error("no tick_ns limit")
	}
}

// TestLoadScenarioTooLarge: a file past MaxScenarioBytes is refused without
// being read whole.
func TestLoadScenarioTooLarge(t *testing.T) {
	big := goodYAML + "#" + strings.Repeat("x", MaxScenarioBytes) + "\n"
	if _, err := LoadScenario(writeFile(t, "s.yaml", big)); err == nil || !strings.Contains(err.Error(), "not a scenario") {
		t.Errorf("error %v, want a refusal of a file over %d bytes", err, MaxScenarioBytes)
	}
}

package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodYAML = `name: pair
rate: QDR
mtu_bytes: 2048
hosts: [{name: a}, {name: b}]
switches: [{name: sw}]
links: [{a: a, b: sw}, {a: sw, b: b}]
flows: [{src: a, dst: b, bytes: 65536}]
taps: [{port: a/1, file: a.pcap}]
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadScenarioGood(t *testing.T) {
	s, err := LoadScenario(writeFile(t, "s.yaml", goodYAML))
	if err != nil {
		t.Fatal(err)
	}
	if s.Lanes != 4 || s.VLs != 1 || s.Switches[0].VLBufferBytes[0] != 32768 || s.Links[1].Rate != "QDR" {
		t.Errorf("defaults not filled in: %+v", s)
	}
	j := `{"rate": "EDR", "hosts": [{"name": "a"}, {"name": "b"}], "links": [{"a": "a", "b": "b"}],
	       "flows": [{"src": "a", "dst": "b", "bytes": 4096}]}`
	if _, err := LoadScenario(writeFile(t, "s.json", j)); err != nil {
		t.Fatal(err)
	}
}

// TestLoadScenarioBad: unknown keys and impossible values are refused with
// the key named.
func TestLoadScenarioBad(t *testing.T) {
	for _, c := range []struct {
		name, file, text, key string
	}{
		{"unknown key yaml", "s.yaml", goodYAML + "bandwidth: 10\n", "bandwidth"},
		{"unknown nested key", "s.yaml", strings.Replace(goodYAML, "{name: sw}", "{name: sw, buffer: 4}", 1), "buffer"},
		{"unknown key json", "s.json", `{"hosts": [], "colour": "red"}`, "colour"},
		{"zero rate", "s.yaml", strings.Replace(goodYAML, "rate: QDR", "rate: 0", 1), "key rate"},
		{"bad link rate", "s.yaml", strings.Replace(goodYAML, "{a: sw, b: b}", "{a: sw, b: b, rate: GDR}", 1), "links[1].rate"},
		{"buffer below one MTU", "s.yaml", strings.Replace(goodYAML, "{name: sw}", "{name: sw, vl_buffer_bytes: [1024]}", 1), "switches[0].vl_buffer_bytes[0]"},
		{"host buffer below one MTU", "s.yaml", strings.Replace(goodYAML, "{name: a}", "{name: a, vl_buffer_bytes: 2048}", 1), "hosts[0].vl_buffer_bytes"},
		{"port buffer below one MTU per VL", "s.yaml", strings.Replace(goodYAML, "{name: sw}", "{name: sw, port_buffer_bytes: 4096}", 1), "switches[0].port_buffer_bytes"},
		{"buffer past credit space", "s.yaml", strings.Replace(goodYAML, "{name: sw}", "{name: sw, vl_buffer_bytes: [262144]}", 1), "switches[0].vl_buffer_bytes[0]"},
		{"zero bytes", "s.yaml", strings.Replace(goodYAML, "bytes: 65536", "bytes: 0", 1), "flows[0].bytes"},
		{"bad mtu", "s.yaml", strings.Replace(goodYAML, "mtu_bytes: 2048", "mtu_bytes: 1500", 1), "mtu_bytes"},
		{"unknown node", "s.yaml", strings.Replace(goodYAML, "{a: sw, b: b}", "{a: sw, b: c}", 1), "links[1].b"},
		{"tap on missing port", "s.yaml", strings.Replace(goodYAML, "port: a/1", "port: a/2", 1), "taps[0].port"},
		{"sl without vl", "s.yaml", strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, sl: 1", 1), "flows[0].sl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadScenario(writeFile(t, c.file, c.text))
			if err == nil || !strings.Contains(err.Error(), c.key) {
				t.Errorf("error %v, want one naming %q", err, c.key)
			}
		})
	}
}

func TestRunRefusesHostWithTwoLinks(t *testing.T) {
	s, err := LoadScenario(writeFile(t, "s.yaml", strings.Replace(goodYAML, "{a: sw, b: b}]", "{a: sw, b: b}, {a: a, b: b}]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(s, t.TempDir())
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "links" {
		t.Errorf("error %v, want a KeyError on links", err)
	}
}

// TestExampleScenario runs the documented example file.
func TestExampleScenario(t *testing.T) {
	s, err := LoadScenario(filepath.Join("testdata", "incast.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if tr.DataPackets != 4096 || len(tr.Taps) != 4 || tr.Taps[3].Frames != 2048 { // the data packets s1 sends, no FCPs, no ACKs received
		t.Errorf("example: %d data packets, taps %+v", tr.DataPackets, tr.Taps)
	}
}

// FuzzLoadScenario: any file is loaded or refused, never a panic; a
// scenario loaded also runs (for a few thousand events) without a panic and
// without writing outside its output directory. The seeds sit at the ends
// of every range in Limits.
func FuzzLoadScenario(f *testing.F) {
	f.Add([]byte(goodYAML), false)
	f.Add([]byte(`{"hosts": [{"name": "a"}, {"name": "b"}], "links": [{"a": "a", "b": "b"}], "flows": [{"src": "a", "dst": "b", "bytes": 1}]}`), true)
	f.Add([]byte("switches: [{name: sw, vl_buffer_bytes: [-1]}]\n"), false)
	f.Add([]byte(goodYAML+"credit_jitter_ns: 1000000000\npropagation_ns: 1000000000\nepoch_ns: 4102444800000000000\ntick_ns: 1e6\nfcp_period_ns: 1000\ntail_ns: 100000000\n"), false)
	f.Add([]byte(goodYAML+"credit_jitter_ns: 9223372036854775807\ntick_ns: .nan\n"), false)
	f.Add([]byte(strings.Replace(goodYAML, "bytes: 65536", "bytes: 65536, start_ns: 3600000000000, jitter_ns: 1000000000, message_bytes: 1, ack_every: 1048576", 1)+
		"telemetry: {period_ns: 1000, sidecar_dir: sc, sysfs_dir: sys}\ntick_ns: 0.001\n"), false)
	f.Add([]byte(strings.Replace(goodYAML, "file: a.pcap", "file: ../../x, quantize_ns: 1000000000, snap_bytes: 65535", 1)), false)
	f.Add([]byte(strings.Replace(goodYAML, "bytes: 65536", "bytes: 1.5", 1)), false)
	// Ethernet: PFC at the ends of its ranges, probes on every packet.
	f.Add([]byte(strings.Replace(strings.Replace(ethernetYAML, "{name: sw}", "{name: sw, pfc: {xoff_bytes: 2, xon_bytes: 1, headroom_bytes: 1, pause_quanta: 65535, refresh_ns: 1}}", 1),
		"bytes: 65536", "bytes: 65536, ifa_every: 1", 1)+"gbps: 1600\nvls: 8\n"), false)
	// The second hostile round: names that act on a terminal or that the
	// file system refuses late, and a chain far past the size bounds.
	f.Add([]byte(strings.Replace(goodYAML, "file: a.pcap", `file: "a\u202Epacp.exe"`, 1)), false)
	f.Add([]byte(strings.Replace(goodYAML, "file: a.pcap", `file: "a\0.pcap"`, 1)), false)
	f.Add([]byte("name: \"\\e]0;owned\\a\"\n"+goodYAML), false)
	f.Add([]byte(chainYAML(MaxSwitches+1, 4096, "")), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		name := filepath.Join(dir, "s.yaml")
		if isJSON {
			name = filepath.Join(dir, "s.json")
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadScenario(name)
		if err != nil {
			return
		}
		if len(s.Hosts) < 2 || len(s.Flows) == 0 {
			t.Errorf("accepted a scenario without two hosts and a flow: %+v", s)
		}
		base := t.TempDir()
		runLimited(s, filepath.Join(base, "out"), 5000) // errors are fine, panics are not
		if es, _ := os.ReadDir(base); len(es) > 1 || len(es) == 1 && es[0].Name() != "out" {
			t.Errorf("wrote outside the output directory: %v", es)
		}
	})
}

// TestScenarioOutputNames: every output stays inside the output directory
// and has a name of its own.
func TestScenarioOutputNames(t *testing.T) {
	tel := "telemetry: {period_ns: 20000, sidecar_dir: sc, sysfs_dir: sysfs}\n"
	for _, c := range []struct{ name, text, key, want string }{
		{"tap two levels up", strings.Replace(goodYAML, "file: a.pcap", "file: ../../x", 1), "taps[0].file", "inside the output directory"},
		{"absolute tap", strings.Replace(goodYAML, "file: a.pcap", "file: /tmp/x.pcap", 1), "taps[0].file", "no absolute path"},
		{"telemetry file up", goodYAML + "telemetry: {period_ns: 20000, file: ../p.txt}\n", "telemetry.file", "inside the output directory"},
		{"sidecar dir up", goodYAML + "telemetry: {period_ns: 20000, sidecar_dir: ../sc}\n", "telemetry.sidecar_dir", "inside the output directory"},
		{"sysfs dir absolute", goodYAML + "telemetry: {period_ns: 20000, sysfs_dir: /sys}\n", "telemetry.sysfs_dir", "no absolute path"},
		{"two taps, one file", strings.Replace(goodYAML, "{port: a/1, file: a.pcap}", "{port: a/1, file: a.pcap}, {port: b/1, file: ./a.pcap}", 1), "taps[1].file", "also the file of taps[0].file"},
		{"tap named truth.json", strings.Replace(goodYAML, "file: a.pcap", "file: truth.json", 1), "taps[0].file", "also the file of ibsim's own truth.json"},
		{"tap on the telemetry file", strings.Replace(goodYAML, "file: a.pcap", "file: perfquery.txt", 1) + tel, "telemetry.file", "also the file of taps[0].file"},
		{"tap where a sidecar goes", strings.Replace(goodYAML, "file: a.pcap", "file: sc/a-1.telemetry.csv", 1) + tel, "telemetry.sidecar_dir", "also the file of taps[0].file"},
		{"tap where the sysfs tree goes", strings.Replace(goodYAML, "file: a.pcap", "file: sysfs", 1) + tel, "telemetry.sysfs_dir", `inside "sysfs", the file of taps[0].file`},
		{"temporary-looking name", strings.Replace(goodYAML, "file: a.pcap", "file: .a.pcap.1.tmp", 1), "taps[0].file", "temporary files"},
		{"host named ..", strings.Replace(goodYAML, "{name: a}", "{name: ..}", 1), "hosts[0].name", "not . or .."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadScenario(writeFile(t, "s.yaml", c.text))
			wantKeyErr(t, err, c.key, c.want)
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedInputPolicy: every analysis command reads a damaged capture
// the same way: what it holds before the damage is analysed and the report
// written, the damage is named on stderr with the file, and the command
// exits with status 1.
func TestDamagedInputPolicy(t *testing.T) {
	dir := t.TempDir()
	cut := func(src string) string {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "cut-"+filepath.Base(src))
		if err := os.WriteFile(path, b[:len(b)-10], 0o644); err != nil { // the last record cut short
			t.Fatal(err)
		}
		return path
	}
	const ib = "../../testdata/pcaps/ib_native_erf.pcap"
	roce, rping, ibCut := cut(rocev2Pcap), cut(rpingPcap), cut(ib)
	for _, tc := range []struct {
		name    string
		damaged string
		args    []string
	}{
		{"flows", roce, []string{"flows", rocev2Pcap, roce}},
		{"flows --json", roce, []string{"flows", "--json", roce}},
		{"ipd", roce, []string{"ipd", rocev2Pcap, roce}},
		{"ipd --compare", rping, []string{"ipd", "--compare", rpingPcap, rping}},
		{"pfc", roce, []string{"pfc", roce}},
		{"hops", roce, []string{"hops", roce}},
		{"credits", ibCut, []string{"credits", ibCut}},
		{"credits --rate", ibCut, []string{"credits", "--rate", "EDR", ibCut}},
		{"buffer sender", ibCut, []string{"buffer", "--rate", "EDR", ibCut, ib}},
		{"buffer receiver", ibCut, []string{"buffer", "--rate", "EDR", ib, ibCut}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, stderr)
			}
			if strings.TrimSpace(stdout) == "" {
				t.Errorf("no report for what could be read\n%s", stderr)
			}
			if !strings.Contains(stderr, tc.damaged) || !strings.Contains(stderr, "cut short") || !strings.Contains(stderr, "the rest of this file is not read") {
				t.Errorf("the damage is not named:\n%s", stderr)
			}
		})
	}
}

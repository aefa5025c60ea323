package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingFileNamedOnce: a file that cannot be opened is named once in
// the message, with the one verb that failed ("open PATH: no such file or
// directory"), whichever command and whichever of its inputs it is.
func TestMissingFileNamedOnce(t *testing.T) {
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	missing := filepath.Join(dir, "missing.pcap")
	missingTel := filepath.Join(dir, "missing.csv")
	out := filepath.Join(dir, "out.parquet")
	for _, tc := range []struct {
		name    string
		missing string
		args    []string
	}{
		{"flows", missing, []string{"flows", missing}},
		{"flows second file", missing, []string{"flows", rocev2Pcap, missing}},
		{"ipd", missing, []string{"ipd", missing}},
		{"ipd --compare", missing, []string{"ipd", "--compare", rocev2Pcap, missing}},
		{"credits", missing, []string{"credits", missing}},
		{"tick capture", missing, []string{"tick", missing, "--telemetry", tel}},
		{"tick telemetry", missingTel, []string{"tick", rocev2Pcap, "--telemetry", missingTel}},
		{"buffer sender", missing, []string{"buffer", missing, rocev2Pcap}},
		{"buffer receiver", missing, []string{"buffer", rocev2Pcap, missing}},
		{"decode", missing, []string{"decode", missing}},
		{"decode --summary", missing, []string{"decode", "--summary", missing}},
		{"export", missing, []string{"export", missing, "-o", out}},
		{"correlate capture", missing, []string{"correlate", missing, "--telemetry", tel, "-o", out}},
		{"correlate telemetry", missingTel, []string{"correlate", rocev2Pcap, "--telemetry", missingTel, "-o", out}},
		{"correlate data IDs", missingTel, []string{"correlate", rocev2Pcap, "--telemetry", tel, "--data-ids", missingTel, "-o", out}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0 with %s missing", tc.missing)
			}
			if n := strings.Count(stderr, tc.missing); n != 1 {
				t.Errorf("%s named %d times, want once:\n%s", tc.missing, n, stderr)
			}
			if n := strings.Count(stderr, "open "); n != 1 {
				t.Errorf(`"open " %d times, want once:`+"\n%s", n, stderr)
			}
			if !strings.Contains(stderr, "no such file or directory") {
				t.Errorf("the cause is not said:\n%s", stderr)
			}
		})
	}
}

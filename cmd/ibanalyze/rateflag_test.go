package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/sim"
)

// TestRateOneSyntax: every spelling of a link rate means the same in ipd
// and pfc (issue 24: ipd --rate 40G was refused as an unknown link rate).
func TestRateOneSyntax(t *testing.T) {
	path := testcap.Write(t, "study.pcap", false, studyPackets())
	for _, rate := range []string{"40G", "40", "40GbE", "40 Gb/s", "4x FDR10", "FDR10", "FDR10 4x"} {
		out := runOK(t, "ipd", "--json", "--rate", rate, path)
		var r struct {
			DataGbps float64 `json:"data_gbps"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.DataGbps != 40 {
			t.Errorf("ipd --rate %q: data_gbps %v (%v)", rate, r.DataGbps, err)
		}
	}
	pfc := pfcCapture(t)
	for _, rate := range []string{"200G", "HDR", "4x HDR", "200"} {
		out, stderr, code := run(t, "pfc", "--json", "--rate", rate, pfc)
		if code != 0 || !strings.Contains(out, `"rate_gbps": 200,`) {
			t.Errorf("pfc --rate %q: exit %d %s\n%s", rate, code, stderr, out)
		}
	}
	for _, c := range []struct{ args, want string }{
		{"--rate 40G --width 4x", "--width 4x goes with an IB --rate name"},
		{"--rate 4x_HDR", "unknown link rate"},
		{"--width 2x", "--width 2x goes with an IB --rate"},
		{"--rate 2x HDR --width 4x", "give one"},
	} {
		args := append([]string{"ipd"}, strings.Fields(c.args)...)
		if strings.Contains(c.args, "2x HDR") {
			args = []string{"ipd", "--rate", "2x HDR", "--width", "4x"}
		}
		_, stderr, code := run(t, append(args, path)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestRateFromCapture: ibsim's pcapng taps record the link speed
// (if_speed), which pfc and ipd take when --rate is not given; pfc says
// so before its table instead of assuming 100G.
func TestRateFromCapture(t *testing.T) {
	r := filepath.Join(simPreset(t, "incast-small-roce"), "r.pcapng")
	// Wireshark reads the speed ibsim records as it is (capinfos: "Speed = 40000000000").
	info, err := exec.Command(testenv.MustHaveTool(t, "capinfos"), r).CombinedOutput()
	if err != nil || !strings.Contains(string(info), "Speed = 40000000000") {
		t.Errorf("capinfos %s: %v\n%s", r, err, info)
	}
	out, stderr, code := run(t, "pfc", "--json", r)
	if code != 0 || !strings.Contains(out, `"rate_gbps": 40,`) || strings.Contains(out, "rate_assumed") ||
		!strings.Contains(stderr, "40 Gb/s, the link speed the capture records") {
		t.Errorf("pfc without --rate: exit %d\n%s\n%.300s", code, stderr, out)
	}
	out = runOK(t, "ipd", "--json", r)
	if !strings.Contains(out, `"rate": "40 Gb/s, as the capture records it"`) || !strings.Contains(out, `"data_gbps": 40,`) {
		t.Errorf("ipd without --rate: %.400s", out)
	}
	// A capture that records no speed: pfc's warning comes before it reads.
	_, stderr, _ = run(t, "pfc", pfcCapture(t))
	if !strings.Contains(stderr, "no --rate, and the capture records no link speed") {
		t.Errorf("pfc on a pcap: %s", stderr)
	}
}

// simPreset runs an ibsim preset into a temporary directory.
func simPreset(t *testing.T, name string) (dir string) {
	s, err := sim.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRateEveryCommand: every command that needs a link rate takes it as
// --rate in the one syntax, and refuses a rate it cannot read with the
// same words (issue 24: correlate's was --pause-rate, report had none).
func TestRateEveryCommand(t *testing.T) {
	path := testcap.Write(t, "study.pcap", false, studyPackets())
	for _, cmd := range []string{"ipd", "flows", "pfc", "credits", "buffer", "tick", "correlate", "report"} {
		var args []string
		switch cmd {
		case "buffer":
			args = []string{path, path}
		case "tick":
			args = []string{path, "--telemetry", path}
		case "correlate":
			args = []string{path, "--telemetry", path, "-o", filepath.Join(t.TempDir(), "j.csv")}
		case "report":
			args = []string{path, "-o", filepath.Join(t.TempDir(), "r.html")}
		default:
			args = []string{path}
		}
		_, stderr, code := run(t, append([]string{cmd, "--rate", "4x_HDR"}, args...)...)
		if code == 0 || !strings.Contains(stderr, `--rate: unknown link rate "4x_HDR"`) {
			t.Errorf("%s --rate 4x_HDR: exit %d, %q", cmd, code, stderr)
		}
	}
	// report hands --rate (and --width) to each analysis that takes one.
	runs, _ := applicableAnalyses(census{path: "c.pcapng", roce: 1, ib: 1, link: 1, pause: 1, ifa: 1}, t.TempDir(),
		[]string{"t.csv"}, []string{"--rate", "HDR", "--width", "2x"})
	for _, r := range runs {
		rated := strings.HasSuffix(strings.Join(r.args, " "), " --rate HDR --width 2x")
		if rated != (r.args[0] != "hops") {
			t.Errorf("report runs %v", r.args)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/sim"
)

// simIncast runs a small QDR incast with a 32 KiB switch input buffer per
// VL and a 16 ns tick; the first sender's tap also has an ibdump-like
// data-only twin, s1-data.pcap, and a pcapng twin that names its port,
// s1.pcapng.
func simIncast(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 2 << 20, StaggerNs: 200_000, SamplePeriodNs: 20_000, CreditJitterNs: 4})
	s.Taps = append(s.Taps, sim.Tap{Port: "s1/1", File: "s1-data.pcap", DataOnly: true}, sim.Tap{Port: "s1/1", File: "s1.pcapng"})
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCreditsBufferTickOnSimulatedIncast(t *testing.T) {
	dir := simIncast(t)
	out, errOut, code := run(t, "credits", filepath.Join(dir, "s1.pcap"))
	if code != 0 || !strings.Contains(out, "32768 bytes") || !strings.Contains(out, "FCTBS check") {
		t.Errorf("credits: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "buffer", filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap"))
	if code != 0 || !strings.Contains(out, "estimate 32768 bytes") {
		t.Errorf("buffer: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "tick", filepath.Join(dir, "s1.pcap"), "--telemetry", filepath.Join(dir, "perfquery.txt"), "--rate", "QDR")
	if m := regexp.MustCompile(`tick +(1[5-6]\.[0-9]+) ns`).FindStringSubmatch(out); code != 0 || m == nil {
		t.Errorf("tick: exit %d, want about 16 ns\n%s%s", code, out, errOut)
	}
	// Phases are snake_case like every other key of the JSON contract.
	out, _, code = run(t, "tick", "--json", filepath.Join(dir, "s1.pcap"), "--telemetry", filepath.Join(dir, "perfquery.txt"), "--rate", "QDR")
	if code != 0 || !strings.Contains(out, `"median_ipd_ns"`) || strings.Contains(out, `"MedianIPDNs"`) {
		t.Errorf("tick --json: exit %d, want snake_case phase keys\n%s", code, out)
	}
	out, _, code = run(t, "credits", "--json", filepath.Join(dir, "s1.pcap"))
	if code != 0 || !strings.Contains(out, `"buffer_bytes": 32768`) {
		t.Errorf("credits --json: exit %d\n%s", code, out)
	}
	svg := filepath.Join(t.TempDir(), "credits.svg")
	out, errOut, code = run(t, "credits", "--plot", svg, filepath.Join(dir, "s1.pcapng"))
	b, err := os.ReadFile(svg)
	if code != 0 || err != nil {
		t.Fatalf("credits --plot: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	// The time axis has round steps labelled with their unit; the legend
	// names each line by the tapped port the file names.
	ticks := regexp.MustCompile(`>[0-9.]+(us|ms)<`).FindAllString(string(b), -1)
	if len(ticks) < 4 || !strings.Contains(string(b), ">from s1/1, VL0: credits<") || !strings.Contains(string(b), ">from s1/1, VL0: in flight<") {
		t.Errorf("credits plot: time labels %q, or a legend entry missing", ticks)
	}
	// The text names the directions as the plot does when the file names
	// its port (pcapng if_name), beside the JSON's interface numbers; a
	// pcap names none.
	if !strings.Contains(out, "\nfrom s1/1 (interface 0 -> 1), VL 0: ") || !strings.Contains(out, "\nto s1/1 (interface 1 -> 0), VL 0: ") {
		t.Errorf("credits on s1.pcapng: the directions are not named by the port s1/1:\n%s", out)
	}
	if out, _, _ := run(t, "credits", filepath.Join(dir, "s1.pcap")); !strings.Contains(out, "\ninterface 0 -> 1, VL 0: ") {
		t.Errorf("credits on s1.pcap:\n%s", out)
	}
	if _, errOut, code := run(t, "credits", "--plot", "x.gif", filepath.Join(dir, "s1.pcap")); code == 0 || !strings.Contains(errOut, ".png, .svg or .pdf") {
		t.Errorf("--plot x.gif: exit %d, %s", code, errOut)
	}
}

// TestCreditsWithoutFCPs: an ibdump-style capture has no link packets;
// credits says so and points to buffer.
func TestCreditsWithoutFCPs(t *testing.T) {
	dir := simIncast(t)
	_, errOut, code := run(t, "credits", filepath.Join(dir, "s1-data.pcap"))
	if code == 0 || !strings.Contains(errOut, "no flow-control packets") || !strings.Contains(errOut, "ibanalyze buffer") {
		t.Errorf("exit %d, stderr %q: want a failure naming the missing FCPs and pointing to buffer", code, errOut)
	}
}

// TestTickWithoutXmitWait: telemetry lacking PortXmitWait is refused with
// the counter named.
func TestTickWithoutXmitWait(t *testing.T) {
	dir := simIncast(t)
	b, err := os.ReadFile(filepath.Join(dir, "perfquery.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "PortXmitWait") {
			keep = append(keep, l)
		}
	}
	noWait := filepath.Join(dir, "nowait.txt")
	if err := os.WriteFile(noWait, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "tick", filepath.Join(dir, "s1.pcap"), "--telemetry", noWait)
	if code == 0 || !strings.Contains(errOut, "PortXmitWait") {
		t.Errorf("exit %d, stderr %q: want a failure naming PortXmitWait", code, errOut)
	}
}

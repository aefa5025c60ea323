package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireTool skips without the command name, or fails under CI=true,
// where every tool is installed.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("needs %s, and CI installs it: %v", name, err)
		}
		t.Skipf("needs %s (wireshark-common, tshark)", name)
	}
}

// Taps written as pcapng name their interface after the tapped port, so
// that mergecap keeps three taps as three interfaces (pcap taps merge into
// anonymous ones) and tshark tells each frame's tap and direction.
func TestIbsimPcapngTapsMergeApart(t *testing.T) {
	requireTool(t, "mergecap")
	requireTool(t, "tshark")
	yaml, _, code := runIbsim(t, "--preset", "incast-small", "--print")
	if code != 0 {
		t.Fatalf("--print: exit %d", code)
	}
	yaml = strings.ReplaceAll(yaml, ".pcap", ".pcapng")
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if stdout, stderr, code := runIbsim(t, file, "-o", out); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	taps := map[string]string{"s1.pcapng": "s1/1", "s2.pcapng": "s2/1", "r.pcapng": "r/1"}
	var inputs []string
	for f := range taps {
		inputs = append(inputs, filepath.Join(out, f))
	}
	merged := filepath.Join(dir, "merged.pcapng")
	if msg, err := exec.Command("mergecap", append([]string{"-w", merged}, inputs...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, msg)
	}
	fields, err := exec.Command("tshark", "-r", merged, "-T", "fields", "-e", "frame.interface_name",
		"-e", "frame.interface_description", "-e", "frame.packet_flags_direction").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", merged, err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(fields)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[1], "ibsim tap on port "+f[0]) || (f[2] != "0x00000001" && f[2] != "0x00000002") {
			t.Fatalf("tshark: frame %q, want the tap's port name, its description and a direction", line)
		}
		seen[f[0]]++
	}
	for _, port := range taps {
		if seen[port] == 0 {
			t.Errorf("no frame of tap %s in the merged file (%v)", port, seen)
		}
	}
	if len(seen) != len(taps) {
		t.Errorf("merged file has interfaces %v, want the %d taps apart", seen, len(taps))
	}
}

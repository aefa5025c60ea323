package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// The presets' taps are pcapng, each interface named after the tapped
// port, so that mergecap keeps three taps as three named interfaces (pcap
// taps merge into anonymous ones) and tshark tells each frame's tap and
// direction: on InfiniBand and on RoCE links alike.
func TestIbsimPcapngTapsMergeApart(t *testing.T) {
	testenv.MustHaveTool(t, "mergecap")
	testenv.MustHaveTool(t, "capinfos")
	testenv.MustHaveTool(t, "tshark")
	for _, preset := range []string{"incast-small", "incast-small-roce"} {
		t.Run(preset, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if stdout, stderr, code := runIbsim(t, "--preset", preset, "-o", out); code != 0 {
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
			info, err := exec.Command("capinfos", "-I", merged).CombinedOutput()
			if err != nil {
				t.Fatalf("capinfos -I %s: %v\n%s", merged, err, info)
			}
			if !strings.Contains(string(info), "Number of interfaces in file: 3") {
				t.Errorf("capinfos: want 3 interfaces in the merged file\n%s", info)
			}
			for _, port := range taps {
				if !strings.Contains(string(info), "Name = "+port+"\n") {
					t.Errorf("capinfos: no interface named %s\n%s", port, info)
				}
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
		})
	}
}

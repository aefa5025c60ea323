package main

import "testing"

// TestFlagHints: tcpdump's -w, -i and -x say what ibanalyze does instead.
func TestFlagHints(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "x.pcap", "-w", "p.parquet"}, "ibanalyze: unknown shorthand flag: 'w' in -w (export, correlate and report write to -o FILE; packets are written by ibcap -r IN -w OUT)\n"},
		{[]string{"flows", "-i", "eth0"}, "ibanalyze: unknown shorthand flag: 'i' in -i (ibanalyze reads captures, not interfaces: ibcap -i DEV -w - | ibanalyze flows -)\n"},
		{[]string{"decode", "-X", "x.pcap"}, "ibanalyze: unknown shorthand flag: 'X' in -X (tcpdump's -x, -X and -A print the bytes; decode prints one decoded line per frame, every field with --json; for the bytes, tshark -x -r FILE)\n"},
		{[]string{"flows", "-z", "x.pcap"}, "ibanalyze: unknown shorthand flag: 'z' in -z\n"},
	} {
		if _, stderr, code := run(t, c.args...); code != 1 || stderr != c.want {
			t.Errorf("ibanalyze %q: exit %d, stderr %q, want exit 1, %q", c.args, code, stderr, c.want)
		}
	}
}

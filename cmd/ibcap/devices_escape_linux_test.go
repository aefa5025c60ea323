package main

import (
	"strings"
	"testing"
)

// ibcap -D escapes an interface name holding a terminal escape (the kernel
// takes any byte but '/', ':', whitespace and NUL): it prints \x1b, never
// the ESC that would clear the screen.
func TestIbcapListEscapesNames(t *testing.T) {
	ns := newNetns(t)
	ns.IP(t, "link", "add", "v\x1b[2J", "type", "veth", "peer", "name", "vpeer")
	out, err := ns.Command(ibcapBin, "-D").CombinedOutput()
	if err != nil {
		t.Fatalf("ibcap -D: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "\x1b") || !strings.Contains(string(out), `v\x1b[2J`) {
		t.Errorf("ibcap -D:\n%q", out)
	}
}

package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// chainYAML is a scenario of two hosts joined by switches in a chain, one
// flow of bytes from one to the other, and extra keys.
func chainYAML(switches int, bytes int64, extra string) string {
	var b strings.Builder
	b.WriteString("name: chain\nhosts: [{name: a}, {name: b}]\nswitches:\n")
	for i := range switches {
		fmt.Fprintf(&b, "  - {name: s%d}\n", i)
	}
	b.WriteString("links:\n  - {a: a, b: s0}\n")
	for i := range switches - 1 {
		fmt.Fprintf(&b, "  - {a: s%d, b: s%d}\n", i, i+1)
	}
	fmt.Fprintf(&b, "  - {a: s%d, b: b}\nflows: [{src: a, dst: b, bytes: %d}]\ntaps: [{port: a/1, file: a.pcap}]\n%s", switches-1, bytes, extra)
	return b.String()
}

// A scenario too big to simulate is refused before it runs, naming the key
// and the bound: more switches than SizeLimits allow (150,000 in a chain
// ran for ten minutes at 800 MB), packets that cross so many hops that the
// events exceed MaxEvents, and FCP timers that tick on every link for as
// long as the longest flow takes across its path (the estimate counted
// only the last start and the tail, 0 here).
func TestScenarioSizeBounds(t *testing.T) {
	for _, c := range []struct {
		name, text, key, says string
	}{
		{"too many switches", chainYAML(MaxSwitches+1, 4096, ""), "switches", "8193 switches: at most 8192 in one scenario"},
		{"events across a long path", chainYAML(8000, 1<<30, ""), "flows", "the flows' packets cross up to 8001 hops on their way"},
		{"FCP timers while the flow crosses", chainYAML(4000, 64<<20, "fcp_period_ns: 1000\n"), "fcp_period_ns", "and the longest path, 4001 hops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadScenario(writeFile(t, "s.yaml", c.text))
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != c.key || !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %v, want one on key %s saying %q", err, c.key, c.says)
			}
		})
	}
	// The same chain with a small flow is a scenario like any other.
	if _, err := LoadScenario(writeFile(t, "s.yaml", chainYAML(8000, 4096, ""))); err != nil {
		t.Errorf("a chain of 8000 switches and a 4 KiB flow: %v", err)
	}
}

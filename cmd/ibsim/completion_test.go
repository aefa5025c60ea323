package main

import (
	"strings"
	"testing"
)

// --preset completes the presets, --out directories, the argument a
// scenario file.
func TestCompleteFlagValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "incast2015"}, "incast2015\nincast2015-roce\n:4\n"},
		{[]string{"-o", ""}, ":16\n"},
		{[]string{""}, "yaml\nyml\njson\n:8\n"},
	} {
		out, stderr, code := runIbsim(t, append([]string{"__complete"}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("__complete %q: exit %d, %q, want %q; %s", c.args, code, out, c.want, strings.TrimSpace(stderr))
		}
	}
}

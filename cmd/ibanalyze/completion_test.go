package main

import (
	"slices"
	"strings"
	"testing"
)

// completions runs ibanalyze __complete ARGS (what the shell scripts
// make install writes call) and returns the values offered, without their
// descriptions, and the directive line.
func completions(t *testing.T, args ...string) (values []string, directive string) {
	t.Helper()
	out := runOK(t, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		values = append(values, v)
	}
	return values, lines[len(lines)-1]
}

// Flag values complete from the commands themselves: --by's groupings,
// --rate's speeds in every analysis that takes one, the export formats,
// opcode lists item by item, picture and output files by extension.
func TestCompleteFlagValues(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want      []string // exactly these, in this order
		wantSome  []string // at least these
		directive string
	}{
		{args: []string{"ipd", "--by", ""}, want: []string{"flow", "link", "qp"}, directive: ":4"},
		{args: []string{"ipd", "--by", "l"}, want: []string{"link"}, directive: ":4"},
		{args: []string{"ipd", "--rate", ""}, wantSome: []string{"SDR", "EDR", "HDR", "NDR", "XDR", "40G", "100G", "400G"}, directive: ":4"},
		{args: []string{"flows", "--rate", "H"}, want: []string{"HDR"}, directive: ":4"},
		{args: []string{"pfc", "--rate", "10"}, want: []string{"10G", "100G"}, directive: ":4"},
		{args: []string{"credits", "--width", ""}, want: []string{"1x", "2x", "4x", "8x", "12x"}, directive: ":4"},
		{args: []string{"correlate", "--rate", "E"}, want: []string{"EDR"}, directive: ":4"},
		{args: []string{"export", "--format", ""}, want: []string{"parquet", "arrow", "csv", "jsonl"}, directive: ":4"},
		{args: []string{"correlate", "--format", "j"}, want: []string{"jsonl"}, directive: ":4"},
		{args: []string{"ipd", "--opcodes", ""}, wantSome: []string{"data", "ack", "all", "RC_SEND_ONLY", "UD_SEND_ONLY", "CNP"}, directive: ":6"},
		{args: []string{"ipd", "--opcodes", "RC_SEND_ONLY,RC_SEND_O"}, want: []string{"RC_SEND_ONLY,RC_SEND_ONLY_WITH_IMMEDIATE", "RC_SEND_ONLY,RC_SEND_ONLY_WITH_INVALIDATE"}, directive: ":6"},
		{args: []string{"export", "--partition-by", "date,"}, want: []string{"date,hour", "date,transport", "date,host="}, directive: ":6"},
		{args: []string{"correlate", "--offset", ""}, want: []string{"auto"}, directive: ":4"},
		{args: []string{"ipd", "--plot", ""}, want: []string{"png", "svg", "pdf"}, directive: ":8"},
		{args: []string{"export", "-o", ""}, want: []string{"parquet", "arrow", "csv", "jsonl"}, directive: ":8"},
		{args: []string{"report", "-o", ""}, want: []string{"html"}, directive: ":8"},
	} {
		got, directive := completions(t, c.args...)
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
		for _, w := range c.wantSome {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q lacks %s", c.args, got, w)
			}
		}
		if directive != c.directive {
			t.Errorf("%q: directive %s, want %s", c.args, directive, c.directive)
		}
	}
	if got, _ := completions(t, "ipd", "--opcodes", ""); slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, "RESERVED_") }) {
		t.Errorf("reserved opcodes offered: %q", got)
	}
}

package termtext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The attacks of the hostile-input rounds come out inert; plain names of
// any script come out as they went in.
func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"node-7.example", "node-7.example"},
		{"mlx5_0", "mlx5_0"},
		{"Zürich µs 東京", "Zürich µs 東京"},
		{"", ""},
		{"\x1b[2J", `\x1b[2J`},                       // clear the screen
		{"\x1b]0;owned\x07", `\x1b]0;owned\x07`},     // OSC: set the window title
		{"\x9b2J", `\x9b2J`},                         // not UTF-8: an 8-bit CSI
		{"\u009b2J", `\u009b2J`},                     // C1 CSI as UTF-8
		{"abc\u202edcba.pcap", `abc\u202edcba.pcap`}, // right-to-left override
		{"a\u2066b\u2069\u200e\u200f\u061c", `a\u2066b\u2069\u200e\u200f\u061c`}, // isolates and marks
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"nul\x00x", `nul\x00x`},
		{"two\nlines\r\tx", `two\nlines\r\tx`},
		{"line\u2028sep", `line\u2028sep`},
		{"back\\slash", `back\\slash`},
		{"del\x7f", `del\x7f`},
		{"nbsp\u00a0", `nbsp\u00a0`},
		{"private\U000F0000", `private\U000f0000`},
		{"cut\xe2\x80", `cut\xe2\x80`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if IsPlain(c.in) != (c.in == c.want) {
			t.Errorf("IsPlain(%q) = %v", c.in, IsPlain(c.in))
		}
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines("two files:\n  a\x1b[2J.pcap\n  \"b\\x00\""), "two files:\n  a\\x1b[2J.pcap\n  \"b\\x00\""; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

// Whatever goes in, what comes out holds no byte a terminal acts on and
// reads back to the input (strconv.Unquote understands the escapes).
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"\x1b[2J", "a\u202eb", "\xff\xfe", "\\x41", "東京\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q: not UTF-8", s, e)
		}
		for _, r := range e {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e {
				t.Fatalf("Escape(%q) = %q holds %U", s, e, r)
			}
		}
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(e, `"`, `\"`) + `"`)
		if err != nil || back != s {
			t.Fatalf("Escape(%q) = %q reads back as %q (%v)", s, e, back, err)
		}
	})
}

// Package termtext makes text from outside safe to print on a terminal.
// Label values from a Prometheus server, names read from files, scenario
// names, file names: any of them may hold an escape sequence (ESC[2J
// clears the screen, an OSC sequence sets the window title), a
// bidirectional override that shows a name backwards (U+202E), a NUL or
// a newline that forges a line of output. Escape writes such characters
// as Go escapes (\x1b, \u202e, \n), the way strconv.Quote does but
// without quotes, so that a plain name stays as it is and readable.
//
// It is for text meant for a terminal; JSON output has its own escaping
// and keeps the values as they are.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that is not printable escaped:
// control characters (C0, DEL, C1), format characters (bidirectional
// controls, zero-width ones, the BOM), line and paragraph separators,
// spaces other than U+0020, private-use and unassigned code points, and
// bytes that are not UTF-8. A backslash is doubled, so an escape in the
// result always stands for what it says. Printable characters of any
// script stay as they are.
func Escape(s string) string { return escape(s, true) }

// escape is Escape; a backslash is doubled only with backslashes.
func escape(s string, backslashes bool) string {
	i := firstUnsafe(s, backslashes)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !unsafeRune(r) || r == '\\' && !backslashes:
			b.WriteString(s[i : i+n])
		default:
			writeEscape(&b, r)
		}
		i += n
	}
	return b.String()
}

// Lines is Escape for a message of ours that holds text from outside (an
// error or a warning): it keeps the newlines between its lines, and its
// backslashes, which are its own %q quoting (`"a\x1b"`) far more often
// than a name's.
func Lines(s string) string {
	if firstUnsafe(strings.ReplaceAll(s, "\n", ""), false) < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escape(l, false)
	}
	return strings.Join(lines, "\n")
}

// IsPlain reports whether s prints as it is: Escape(s) == s.
func IsPlain(s string) bool { return firstUnsafe(s, true) < 0 }

// firstUnsafe is the byte offset of the first character escape changes,
// -1 if none.
func firstUnsafe(s string, backslashes bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' && backslashes {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether r must be escaped.
func unsafeRune(r rune) bool { return r == '\\' || !unicode.IsPrint(r) }

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\\':
		b.WriteString(`\\`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		switch {
		case r < utf8.RuneSelf:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r <= 0xFFFF:
			b.WriteString(`\u`)
			b.WriteString(pad(strconv.FormatInt(int64(r), 16), 4))
		default:
			b.WriteString(`\U`)
			b.WriteString(pad(strconv.FormatInt(int64(r), 16), 8))
		}
	}
}

func hex2(c byte) string { return pad(strconv.FormatInt(int64(c), 16), 2) }

func pad(h string, width int) string { return strings.Repeat("0", width-len(h)) + h }

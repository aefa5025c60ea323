package cmddoc

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// roff builds man(7) source. Text goes through escape, so that no input
// can start a request, and paragraphs are re-wrapped at 78 bytes, so that
// the source has no blank lines, no leading or trailing blanks and no long
// lines for mandoc -T lint or groff -ww to warn about.
type roff struct{ strings.Builder }

// request writes one request line: ".SH NAME", ".TP".
func (r *roff) request(name string, args ...string) {
	r.WriteString("." + name)
	for _, a := range args {
		r.WriteString(" " + a)
	}
	r.WriteString("\n")
}

// line writes one input line of already escaped text.
func (r *roff) line(s string) {
	s = strings.TrimRight(s, " ")
	if s == "" {
		return
	}
	if s[0] == '.' || s[0] == '\'' || s[0] == ' ' {
		s = `\&` + s // not a request, and no leading blank (which breaks the line)
	}
	r.WriteString(s + "\n")
}

// text writes plain text as man(7) paragraphs: blank lines separate
// paragraphs (.PP between them), lines that start with a blank are kept
// as they are (a table, a list, an example: no filling), and the other
// lines of a paragraph are filled.
func (r *roff) text(s string) {
	var para []string // words of the paragraph being filled
	fill := func() {
		r.wrap(para)
		para = para[:0]
	}
	first := true
	start := func() { // a paragraph begins
		if !first {
			r.request("PP")
		}
		first = false
	}
	inPara, inVerbatim := false, false
	for _, ln := range strings.Split(strings.TrimSpace(s), "\n") {
		ln = strings.ReplaceAll(strings.TrimRight(ln, " \t"), "\t", "        ")
		switch {
		case ln == "":
			if inPara {
				fill()
			}
			if inVerbatim {
				r.request("fi")
			}
			inPara, inVerbatim = false, false
		case ln[0] == ' ':
			if inPara {
				fill()
				inPara = false
			}
			if !inVerbatim {
				start()
				r.request("nf")
				inVerbatim = true
			}
			r.line(escape(ln))
		default:
			if inVerbatim {
				r.request("fi")
				inVerbatim = false
			}
			if !inPara {
				start()
				inPara = true
			}
			para = append(para, strings.Fields(ln)...)
		}
	}
	if inPara {
		fill()
	}
	if inVerbatim {
		r.request("fi")
	}
}

// verbatim writes s line by line without filling (examples).
func (r *roff) verbatim(s string) {
	r.request("nf")
	for _, ln := range strings.Split(strings.Trim(s, "\n"), "\n") {
		ln = strings.ReplaceAll(strings.TrimRight(ln, " \t"), "\t", "        ")
		if ln == "" {
			r.request("sp")
			continue
		}
		r.line(escape(ln))
	}
	r.request("fi")
}

// wrap writes words, escaped, as lines of at most 78 bytes (one word may
// be longer). A word longer than a third of a line (a path, a URL) may be
// broken after each slash, so that filling never leaves a line it cannot
// adjust (groff -ww warns of one).
func (r *roff) wrap(words []string) {
	escaped := make([]string, len(words))
	for i, w := range words {
		escaped[i] = escape(w)
		if len(w) > 26 {
			escaped[i] = strings.ReplaceAll(escaped[i], "/", `/\:`)
		}
	}
	r.wrapEscaped(escaped)
}

// wrapEscaped writes words of roff as lines of at most 78 bytes.
func (r *roff) wrapEscaped(words []string) {
	var ln strings.Builder
	for _, w := range words {
		if ln.Len() > 0 && ln.Len()+1+len(w) > 78 {
			r.line(ln.String())
			ln.Reset()
		}
		if ln.Len() > 0 {
			ln.WriteByte(' ')
		}
		ln.WriteString(w)
	}
	r.line(ln.String())
}

// item writes a tagged paragraph: tag (already escaped roff) and its text.
func (r *roff) item(tag, text string) {
	r.request("TP")
	r.line(tag)
	r.wrap(strings.Fields(text))
}

// escape makes s plain text for roff: a backslash is \e, a hyphen \- (an
// ASCII minus in the output, so that options copied from the page work),
// and every other non-ASCII character a \[uXXXX] escape, which groff
// reads without preconv and mandoc too.
func escape(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		c, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case c == '\\':
			b.WriteString(`\e`)
		case c == '-':
			b.WriteString(`\-`)
		case c == utf8.RuneError && size == 1:
			b.WriteString(`\[uFFFD]`)
		case c >= utf8.RuneSelf:
			fmt.Fprintf(&b, `\[u%04X]`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// bold and italic are font changes around escaped text.
func bold(s string) string   { return `\fB` + escape(s) + `\fR` }
func italic(s string) string { return `\fI` + escape(s) + `\fR` }

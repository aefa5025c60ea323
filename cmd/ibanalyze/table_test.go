package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// tableLines returns the lines of a table: from the one starting with
// header to the first empty line.
func tableLines(t *testing.T, out, header string) []string {
	t.Helper()
	i := strings.Index(out, "\n"+header)
	if i < 0 {
		t.Fatalf("no table headed %q in:\n%s", header, out)
	}
	lines := strings.Split(out[i+1:], "\n")
	for j, l := range lines {
		if l == "" {
			return lines[:j]
		}
	}
	return lines
}

// requireAligned checks that every line of a table is as wide as its
// header and that each right-aligned column ends where its header ends.
func requireAligned(t *testing.T, lines []string, rightHeaders ...string) {
	t.Helper()
	w := utf8.RuneCountInString(lines[0])
	for _, l := range lines[1:] {
		if utf8.RuneCountInString(l) != w {
			t.Errorf("row of %d columns under a header of %d:\n%s\n%s", utf8.RuneCountInString(l), w, lines[0], l)
		}
	}
	for _, h := range rightHeaders {
		end := strings.Index(lines[0], h) + len(h)
		for _, l := range lines[1:] {
			if r := []rune(l); end > len(r) || r[end-1] == ' ' || (end < len(r) && r[end] != ' ') {
				t.Errorf("column %q does not end at %d:\n%s\n%s", h, end, lines[0], l)
			}
		}
	}
}

func TestTableWidths(t *testing.T) {
	tb := table{leftCols: 1, header: []string{"flow", "packets", "bytes"}}
	tb.add("rocev2 fd00:1b00:0:7::1>fd00:1b00:0:7:ffff:ffff:ffff:ffff qp 0x000011", "1234567", "12345678901")
	tb.add("ib lid 1>2 qp 0x000001", "1", "9")
	var b strings.Builder
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	requireAligned(t, tableLines(t, "\n"+b.String(), "flow"), "packets", "bytes")
}

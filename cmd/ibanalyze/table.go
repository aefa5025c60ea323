package main

import (
	"io"
	"strings"
	"unicode/utf8"
)

// table is text output in columns as wide as their widest cell (header
// included), so a long flow name or a 7-digit count never pushes the rest
// of its row out of line. The first leftCols columns are left-aligned
// (names), the others right-aligned (numbers).
type table struct {
	header   []string
	rows     [][]string
	leftCols int
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the header and the rows, columns two spaces apart.
func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{t.header}, t.rows...) {
		b.Reset()
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < t.leftCols {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ibscope/ibscope/internal/termtext"
)

// table is text output in columns as wide as their widest cell (header
// included), so a long flow name or a 7-digit count never pushes the rest
// of its row out of line. The first leftCols columns are left-aligned
// (names), the others right-aligned (numbers), but for the last with
// leftLast (a bar of #). Every line starts with indent.
type table struct {
	header   []string
	rows     [][]string
	leftCols int
	leftLast bool
	indent   string
}

// add appends a row. Its cells are escaped (termtext): a name from a
// capture, a telemetry file or a Prometheus label prints as what it is,
// never as a terminal control sequence.
func (t *table) add(cells ...string) {
	for i, c := range cells {
		cells[i] = termtext.Escape(c)
	}
	t.rows = append(t.rows, cells)
}

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
		b.WriteString(t.indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < t.leftCols || t.leftLast && i == len(r)-1 {
				b.WriteString(c)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		// An empty last cell (a bar of nothing) leaves no trailing spaces.
		if _, err := io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

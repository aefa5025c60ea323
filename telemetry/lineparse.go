package telemetry

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
)

// lineReader hands out lines without their "\n" or "\r\n", allocation-free
// for lines that fit its buffer. The returned slice is valid until the next
// call.
type lineReader struct {
	br      *bufio.Reader
	long    []byte
	line    int  // 1-based number of the line last returned
	newline bool // the line last returned ended with '\n'
}

const maxLineBytes = 16 << 20

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte("\xEF\xBB\xBF")

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line, or io.EOF after the last one.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(lr.long) > maxLineBytes {
				lr.line++
				return nil, errors.New("line longer than 16 MiB")
			}
			b, err = lr.br.ReadSlice('\n')
			// Double, not the ~1.25x append grows large slices by: a 6 MB
			// header then costs 12 MB of copies, not 40.
			if cap(lr.long)-len(lr.long) < len(b) {
				lr.long = slices.Grow(lr.long, max(len(b), len(lr.long)))
			}
			lr.long = append(lr.long, b...)
		}
		if len(lr.long) > maxLineBytes {
			lr.line++
			return nil, errors.New("line longer than 16 MiB")
		}
		b = lr.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(b) == 0 && err != nil {
		return nil, io.EOF
	}
	lr.line++
	if lr.line == 1 {
		// Windows tools start UTF-8 text with a byte order mark.
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	lr.newline = len(b) > 0 && b[len(b)-1] == '\n'
	if lr.newline {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// splitCSV splits one line of a telemetry_diag CSV into fields, trimmed of
// blanks. DOCA never quotes, so a line without '"' takes splitComma's fast
// path; a line with quotes (a file saved again by a spreadsheet) is read as
// RFC 4180 by encoding/csv, which is 3 to 6 times slower per line
// (BenchmarkSplitLines100k*), so it is not used for every line. A quoted
// field cannot span lines here: a quote left open is an error.
func splitCSV(line []byte, dst [][]byte) ([][]byte, error) {
	if bytes.IndexByte(line, '"') < 0 {
		return splitComma(line, dst), nil
	}
	r := csv.NewReader(bytes.NewReader(line))
	r.TrimLeadingSpace, r.FieldsPerRecord = true, -1
	rec, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err // the line and column csv counts are of this line alone
		}
		return dst[:0], fmt.Errorf("quoted fields: %v", err)
	}
	if _, err := r.Read(); err != io.EOF {
		return dst[:0], errors.New("quoted fields: a quoted field spans lines")
	}
	dst = dst[:0]
	for _, f := range rec {
		dst = append(dst, trimSpace([]byte(f)))
	}
	return dst, nil
}

// splitComma splits a CSV line on ',' with no quoting (none of the formats
// quote; see splitCSV) and trims blanks around each field, so ", " and ","
// separators read alike. dst is reused.
func splitComma(line []byte, dst [][]byte) [][]byte {
	if n := bytes.Count(line, []byte{','}) + 1; cap(dst) < n {
		dst = make([][]byte, 0, n) // sized once: a wide header is 24 bytes a field
	}
	dst = dst[:0]
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(dst, trimSpace(line))
		}
		dst = append(dst, trimSpace(line[:i]))
		line = line[i+1:]
	}
}

// parseUint reads a decimal (or 0x-prefixed hex) unsigned integer.
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		return parseHex(b[2:])
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// parseInt64 reads a decimal signed integer.
func parseInt64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	u, ok := parseUint(b)
	if !ok || len(b) > 1 && b[1] == 'x' {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// parseDiagTime reads a telemetry_diag timestamp. "S.N" is the RTC form:
// S seconds and N nanoseconds, N an integer (older DOCA samples did not
// zero-pad it, so "12.5" is 12 s + 5 ns); the result is ns since the epoch.
// A plain integer is the FRC form: ns on the free-running counter.
func parseDiagTime(b []byte) (ns int64, rtc bool, ok bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		sec, ok1 := parseUint(b[:i])
		frac, ok2 := parseUint(b[i+1:])
		if !ok1 || !ok2 || frac >= 1e9 || sec > (1<<63-1)/1_000_000_000-1 || hasHexPrefix(b[:i]) || hasHexPrefix(b[i+1:]) {
			return 0, true, false
		}
		return int64(sec)*1e9 + int64(frac), true, true
	}
	v, ok := parseUint(b)
	if !ok || v > 1<<63-1 || hasHexPrefix(b) {
		return 0, false, false
	}
	return int64(v), false, true
}

func hasHexPrefix(b []byte) bool { return len(b) > 1 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') }

// parseSecondsDecimal reads "S" or "S.F" where F is a true decimal fraction
// of a second (as `date +%s.%N` prints it), returning ns since the epoch.
func parseSecondsDecimal(b []byte) (int64, bool) {
	i := bytes.IndexByte(b, '.')
	secPart, frac := b, []byte(nil)
	if i >= 0 {
		secPart, frac = b[:i], b[i+1:]
		if len(frac) == 0 || len(frac) > 9 {
			return 0, false
		}
	}
	sec, ok := parseUint(secPart)
	if !ok || hasHexPrefix(secPart) || sec > (1<<63-1)/1_000_000_000-1 {
		return 0, false
	}
	var ns uint64
	for k := 0; k < 9; k++ {
		ns *= 10
		if k < len(frac) {
			c := frac[k]
			if c < '0' || c > '9' {
				return 0, false
			}
			ns += uint64(c - '0')
		}
	}
	return int64(sec)*1e9 + int64(ns), true
}

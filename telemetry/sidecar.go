package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The sidecar is the telemetry file `ibcap --telemetry` writes next to a
// capture. It is CSV with '#' header lines, one sample per line, so it can
// be appended to line by line and a killed writer leaves every completed
// line readable:
//
//	# ibscope-telemetry v1 source=mlx5_0/1 clock=host interval_ns=1000000000
//	# counter port_xmit_data unit=words4 width=64 kind=counter
//	# counter port_xmit_wait unit=ticks width=32 kind=counter saturating
//	sample_id,start_ns,end_ns,port_xmit_data,port_xmit_wait
//	0,1700000000000000000,1700000000000041000,123456,7
//	1,1700000001000000000,1700000001000039000,,9
//
// The lines are:
//   - Line 1: magic "# ibscope-telemetry v1", then space-separated key=value
//     pairs: source (DEVICE/PORT), clock (host, nic_rtc, nic_frc, none) and
//     optional others (interval_ns, ...) that land in Series.Meta.
//   - "# counter NAME k=v ... [flags]" per column, optional: unit (count,
//     bytes, words4, ns, ticks, ms), width (bits), kind (counter, gauge),
//     data_id, and the flags saturating and clear_on_sample. A column
//     without one gets the catalogue's metadata for its name.
//   - "# reset" before a data line: every counter was reset since the
//     previous sample (the device was removed and came back, or its driver
//     reloaded), so deltas into that sample are unknown (Series.SetReset).
//   - Other lines starting with '#' are comments.
//   - The column line starts "sample_id,start_ns,end_ns"; then one column
//     per counter.
//   - Data lines: sample_id (decimal), start_ns and end_ns (decimal int64 ns
//     on the clock), then one decimal value per counter in the counter's unit;
//     an empty field means the counter could not be read for that sample.
//
// A second "# ibscope-telemetry" line (a restarted sampler appending to the
// same file) begins a new segment; the reader joins it to the previous
// series when source, clock and columns agree and otherwise starts a new
// series. A last line without its '\n' that does not parse is dropped with a
// warning (the writer was killed mid-line).
const sidecarMagic = "# ibscope-telemetry v1"

// sidecarReset is the line that says the counters were reset before the
// next sample.
const sidecarReset = "# reset"

// SidecarWriter appends samples to a sidecar, one Write call per line.
type SidecarWriter struct {
	w     io.Writer
	n     int
	buf   []byte
	flush func() error
	reset bool // the next sample is preceded by a "# reset" line
}

// Reset records that every counter was reset since the last sample
// written: the next Write puts a "# reset" line before its sample, in the
// same write.
func (sw *SidecarWriter) Reset() { sw.reset = true }

// NewSidecarWriter writes the sidecar header for the given columns and
// returns a writer for the samples. meta adds key=value pairs to the first
// line (keys and values must not contain blanks or '=').
func NewSidecarWriter(w io.Writer, src Source, clock Clock, counters []Counter, meta map[string]string) (*SidecarWriter, error) {
	sw := &SidecarWriter{w: w, n: len(counters)}
	if f, ok := w.(interface{ Flush() error }); ok {
		sw.flush = f.Flush
	}
	var b []byte
	b = append(b, sidecarMagic...)
	b = append(b, " source="...)
	b = append(b, src.String()...)
	b = append(b, " clock="...)
	b = append(b, clock.String()...)
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if k != "source" && k != "clock" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := meta[k]
		if hasBlank(k) || strings.Contains(k, "=") || hasBlank(v) || k == "" {
			return nil, fmt.Errorf("telemetry: sidecar meta %s=%s: keys and values must not contain blanks", quoted(k), quoted(v))
		}
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	b = append(b, '\n')
	for _, c := range counters {
		if hasBlank(c.Name) || strings.ContainsAny(c.Name, ",#") || c.Name == "" {
			return nil, fmt.Errorf("telemetry: sidecar column %s: names must be non-empty without commas or blanks", quoted(c.Name))
		}
		b = append(b, "# counter "...)
		b = append(b, c.Name...)
		b = append(b, " unit="...)
		b = append(b, c.Unit.String()...)
		b = append(b, " width="...)
		b = strconv.AppendUint(b, uint64(c.Width), 10)
		b = append(b, " kind="...)
		b = append(b, c.Kind.String()...)
		if c.DataID != 0 {
			b = append(b, " data_id="...)
			b = append(b, c.DataID.String()...)
		}
		if c.Saturating {
			b = append(b, " saturating"...)
		}
		if c.ClearOnSample {
			b = append(b, " clear_on_sample"...)
		}
		b = append(b, '\n')
	}
	b = append(b, "sample_id,start_ns,end_ns"...)
	for _, c := range counters {
		b = append(b, ',')
		b = append(b, c.Name...)
	}
	b = append(b, '\n')
	if err := sw.put(b); err != nil {
		return nil, err
	}
	return sw, nil
}

func (sw *SidecarWriter) put(b []byte) error {
	if _, err := sw.w.Write(b); err != nil {
		return fmt.Errorf("telemetry: write sidecar: %w", err)
	}
	if sw.flush != nil {
		if err := sw.flush(); err != nil {
			return fmt.Errorf("telemetry: flush sidecar: %w", err)
		}
	}
	return nil
}

// Write appends one sample as a single line and flushes the underlying
// writer if it has a Flush method. missing, when not nil, marks values that
// could not be read (written as empty fields).
func (sw *SidecarWriter) Write(sampleID uint64, startNs, endNs int64, values []uint64, missing []bool) error {
	if len(values) != sw.n {
		return fmt.Errorf("telemetry: sidecar sample has %d values for %d columns", len(values), sw.n)
	}
	b := sw.buf[:0]
	if sw.reset {
		b = append(b, sidecarReset...)
		b = append(b, '\n')
	}
	b = strconv.AppendUint(b, sampleID, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, startNs, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, endNs, 10)
	for j, v := range values {
		b = append(b, ',')
		if missing == nil || !missing[j] {
			b = strconv.AppendUint(b, v, 10)
		}
	}
	b = append(b, '\n')
	sw.buf = b
	if err := sw.put(b); err != nil {
		return err
	}
	sw.reset = false
	return nil
}

// parseCounterLine reads "# counter NAME k=v ... flags".
func parseCounterLine(line string) (Counter, error) {
	f := strings.Fields(strings.TrimPrefix(line, "# counter "))
	if len(f) == 0 {
		return Counter{}, fmt.Errorf("counter line without a name")
	}
	c := SidecarDefault(f[0])
	for _, kv := range f[1:] {
		k, v, hasV := strings.Cut(kv, "=")
		switch {
		case k == "saturating" && !hasV:
			c.Saturating = true
		case k == "clear_on_sample" && !hasV:
			c.ClearOnSample = true
		case k == "unit":
			u, err := ParseUnit(v)
			if err != nil {
				return c, err
			}
			c.Unit = u
		case k == "width":
			w, err := strconv.Atoi(v)
			if err != nil || w < 1 || w > 64 {
				return c, fmt.Errorf("width %s: want 1..64", quoted(v))
			}
			c.Width = uint8(w)
		case k == "kind":
			switch v {
			case "counter":
				c.Kind = KindCounter
			case "gauge":
				c.Kind = KindGauge
			default:
				return c, fmt.Errorf("kind %s: want counter or gauge", quoted(v))
			}
		case k == "data_id":
			id, err := ParseDataID(v)
			if err != nil {
				return c, err
			}
			c.DataID = id
		}
		// Unknown keys are for later versions: ignored.
	}
	return c, nil
}

// SidecarDefault is the metadata a sidecar column gets without a "# counter"
// line: the sysfs catalogue's (port counters by name, otherwise a 32-bit
// hw_counter).
func SidecarDefault(name string) Counter {
	if _, ok := ibBySysfs[name]; ok {
		return SysfsCounter("counters", name)
	}
	return SysfsCounter("hw_counters", name)
}

// ReadSidecar reads a sidecar written by SidecarWriter (or appended to by
// several). It returns one series per segment that cannot be joined to the
// previous one.
func ReadSidecar(r io.Reader, file string) ([]*Series, error) {
	sr := &sidecarReader{file: file, lr: newLineReader(r)}
	var pending []byte // last line not ending in '\n'
	pendingLine := 0
	for {
		line, err := sr.lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sr.out, perr(file, sr.lr.line, "%v", err)
		}
		t := trimSpace(line)
		if len(t) == 0 {
			continue
		}
		if t[0] == '#' {
			if err := sr.comment(string(t)); err != nil {
				return sr.out, err
			}
			continue
		}
		if !sr.seenMagic {
			return sr.out, perr(file, sr.lr.line, "not an ibscope telemetry sidecar: first line must start with %q", sidecarMagic)
		}
		if bytes.HasPrefix(t, []byte("sample_id,")) || bytes.HasPrefix(t, []byte("sample_id ")) {
			if err := sr.columns(t); err != nil {
				return sr.out, err
			}
			continue
		}
		if sr.cur == nil || sr.n < 0 {
			return sr.out, perr(file, sr.lr.line, "sample line before the sample_id,start_ns,end_ns column line")
		}
		if !sr.lr.newline {
			pending, pendingLine = append(pending[:0], t...), sr.lr.line
			break
		}
		sr.sample(t)
	}
	if pending != nil {
		sr.fields = splitComma(pending, sr.fields)
		if msg := parseSidecarRow(sr.cur, sr.fields, sr.row, &sr.miss, file, pendingLine); msg != "" {
			sr.cur.warnf(file, pendingLine, "incomplete last line (writer stopped mid-line?): %s; dropped", msg)
		}
	}
	if !sr.seenMagic {
		return nil, perr(file, 0, "empty file: no %q header", sidecarMagic)
	}
	if len(sr.out) == 0 {
		return nil, perr(file, sr.lr.line, "no sample_id,start_ns,end_ns column line")
	}
	for _, s := range sr.out {
		s.warnResets(file)
	}
	return sr.out, nil
}

// sidecarReader is what ReadSidecar knows as it reads: the segment's
// header (source, clock, counters described, the columns) and the series
// made so far.
type sidecarReader struct {
	file  string
	lr    *lineReader
	out   []*Series
	cur   *Series // the series the sample lines go to
	meta  map[string]Counter
	src   Source
	clock Clock
	extra map[string]string
	n     int // columns of values; -1 before the segment's column line

	fields    [][]byte
	row       []uint64
	miss      []int
	seenMagic bool
	resetNext bool // a "# reset" line came before the next data line
}

// comment reads a line starting with '#': a segment's header, a counter's
// description, or the mark of a device that went away and came back.
func (sr *sidecarReader) comment(s string) error {
	switch {
	case strings.HasPrefix(s, "# ibscope-telemetry"):
		if !strings.HasPrefix(s, sidecarMagic) || len(s) > len(sidecarMagic) && s[len(sidecarMagic)] != ' ' {
			return perr(sr.file, sr.lr.line, "unsupported sidecar version: %s", quoted(s))
		}
		sr.seenMagic = true
		sr.src, sr.clock, sr.extra = Source{}, ClockNone, map[string]string{}
		for _, kv := range strings.Fields(s[len(sidecarMagic):]) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			var err error
			switch k {
			case "source":
				sr.src, err = ParseSource(v)
			case "clock":
				sr.clock, err = ParseClock(v)
			default:
				sr.extra[k] = v
			}
			if err != nil {
				return perr(sr.file, sr.lr.line, "%v", err)
			}
		}
		sr.meta = map[string]Counter{}
		sr.n = -1
	case s == sidecarReset:
		if sr.cur != nil && sr.n >= 0 {
			sr.resetNext = true
		}
	case strings.HasPrefix(s, "# counter "):
		if !sr.seenMagic {
			return perr(sr.file, sr.lr.line, "counter line before the %q line", sidecarMagic)
		}
		c, err := parseCounterLine(s)
		if err != nil {
			return perr(sr.file, sr.lr.line, "%v", err)
		}
		sr.meta[c.Name] = c
	}
	return nil
}

// columns reads a segment's column line: a new series, or the previous
// one when the segment continues it (a sampler restarted on the same
// device, clock and counters).
func (sr *sidecarReader) columns(t []byte) error {
	file, line := sr.file, sr.lr.line
	f := splitComma(t, nil)
	if len(f) < 3 || string(f[1]) != "start_ns" || string(f[2]) != "end_ns" {
		return perr(file, line, "column line must start sample_id,start_ns,end_ns")
	}
	if err := checkColumns(file, line, len(f)-3); err != nil {
		return err
	}
	counters := make([]Counter, len(f)-3)
	for j, name := range f[3:] {
		if c, ok := sr.meta[string(name)]; ok {
			counters[j] = c
		} else {
			counters[j] = SidecarDefault(string(name))
		}
	}
	tmp := Series{Counters: counters}
	tmp.uniqueColumns(file, line, 4, 1)
	if cur := sr.cur; cur != nil && cur.Source == sr.src && cur.Clock == sr.clock && sameColumns(cur.Counters, counters) {
		cur.warnf(file, line, "sampler restarted: appended segment joined to the series")
	} else {
		sr.cur = NewSeries(sr.src, sr.clock, counters)
		sr.cur.Warnings = tmp.Warnings
		sr.cur.warnTotal = tmp.warnTotal
		sr.cur.setMeta("format", "sidecar")
		for k, v := range sr.extra {
			sr.cur.setMeta(k, v)
		}
		sr.out = append(sr.out, sr.cur)
	}
	sr.n = len(counters)
	sr.row = make([]uint64, sr.n)
	return nil
}

// sample reads a sample line into the series, marking it a reset when a
// "# reset" line came before it.
func (sr *sidecarReader) sample(t []byte) {
	cur, file, line := sr.cur, sr.file, sr.lr.line
	sr.fields = splitComma(t, sr.fields)
	if msg := parseSidecarRow(cur, sr.fields, sr.row, &sr.miss, file, line); msg != "" {
		cur.warnf(file, line, "%s; line skipped", msg)
	} else if sr.resetNext {
		cur.SetReset(cur.Len() - 1)
		if cur.Len() > 1 {
			cur.warnf(file, line, "counters reset: the device went away and came back before this sample; deltas into it are unknown")
		}
		sr.resetNext = false
	}
}

func sameColumns(a, b []Counter) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseSidecarRow appends one data line to s, or says why it cannot.
func parseSidecarRow(s *Series, f [][]byte, row []uint64, miss *[]int, file string, line int) string {
	n := len(s.Counters)
	if len(f) != 3+n {
		return fmt.Sprintf("%d fields where the column line has %d", len(f), 3+n)
	}
	id, ok := parseUint(f[0])
	if !ok || hasHexPrefix(f[0]) {
		return fmt.Sprintf("sample_id %s is not a number", quoted(f[0]))
	}
	start, ok1 := parseInt64(f[1])
	end, ok2 := parseInt64(f[2])
	if !ok1 || !ok2 {
		return fmt.Sprintf("start_ns %s or end_ns %s is not an integer", quoted(f[1]), quoted(f[2]))
	}
	*miss = (*miss)[:0]
	for j := 0; j < n; j++ {
		if len(f[3+j]) == 0 {
			row[j] = 0
			*miss = append(*miss, j)
			continue
		}
		v, ok := parseUint(f[3+j])
		if !ok || hasHexPrefix(f[3+j]) {
			return fmt.Sprintf("%s value %s is not an unsigned integer", clipped(s.Counters[j].Name), quoted(f[3+j]))
		}
		row[j] = v
	}
	if k := s.Len(); k > 0 {
		prev := s.SampleID[k-1]
		switch {
		case id > prev+1:
			s.warnf(file, line, "%d sample(s) lost: sample_id jumps from %d to %d", id-prev-1, prev, id)
		case id <= prev:
			s.warnf(file, line, "sample_id goes back from %d to %d: sequence restarted", prev, id)
		}
		if mid, pmid := start+(end-start)/2, s.TimeNs(k-1); mid < pmid {
			s.warnf(file, line, "timestamp goes backwards by %d ns", pmid-mid)
		}
	}
	s.Append(id, start, end, row)
	s.setLine(s.Len()-1, line)
	for _, j := range *miss {
		s.SetMissing(s.Len()-1, j)
	}
	return ""
}

// hasBlank reports whether s holds a character the reader splits fields on
// (strings.Fields: every Unicode space, \f and \v and U+0085 too), so the
// writer refuses what would not read back as written.
func hasBlank(s string) bool {
	return strings.IndexFunc(s, unicode.IsSpace) >= 0
}

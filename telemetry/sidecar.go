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
	lr := newLineReader(r)
	var out []*Series
	var cur *Series
	var meta map[string]Counter
	var src Source
	var clock Clock
	var extra map[string]string
	var n int
	var fields [][]byte
	var row []uint64
	var miss []int
	var pending []byte // last line not ending in '\n'
	pendingLine := 0
	seenMagic := false
	resetNext := false // a "# reset" line came before the next data line
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, perr(file, lr.line, "%v", err)
		}
		t := trimSpace(line)
		if len(t) == 0 {
			continue
		}
		if t[0] == '#' {
			s := string(t)
			switch {
			case strings.HasPrefix(s, "# ibscope-telemetry"):
				if !strings.HasPrefix(s, sidecarMagic) || len(s) > len(sidecarMagic) && s[len(sidecarMagic)] != ' ' {
					return out, perr(file, lr.line, "unsupported sidecar version: %s", quoted(s))
				}
				seenMagic = true
				src, clock, extra = Source{}, ClockNone, map[string]string{}
				for _, kv := range strings.Fields(s[len(sidecarMagic):]) {
					k, v, ok := strings.Cut(kv, "=")
					if !ok {
						continue
					}
					switch k {
					case "source":
						if src, err = ParseSource(v); err != nil {
							return out, perr(file, lr.line, "%v", err)
						}
					case "clock":
						if clock, err = ParseClock(v); err != nil {
							return out, perr(file, lr.line, "%v", err)
						}
					default:
						extra[k] = v
					}
				}
				meta = map[string]Counter{}
				n = -1
			case s == sidecarReset:
				if cur != nil && n >= 0 {
					resetNext = true
				}
			case strings.HasPrefix(s, "# counter "):
				if !seenMagic {
					return out, perr(file, lr.line, "counter line before the %q line", sidecarMagic)
				}
				c, err := parseCounterLine(s)
				if err != nil {
					return out, perr(file, lr.line, "%v", err)
				}
				meta[c.Name] = c
			}
			continue
		}
		if !seenMagic {
			return out, perr(file, lr.line, "not an ibscope telemetry sidecar: first line must start with %q", sidecarMagic)
		}
		if bytes.HasPrefix(t, []byte("sample_id,")) || bytes.HasPrefix(t, []byte("sample_id ")) {
			f := splitComma(t, nil)
			if len(f) < 3 || string(f[1]) != "start_ns" || string(f[2]) != "end_ns" {
				return out, perr(file, lr.line, "column line must start sample_id,start_ns,end_ns")
			}
			if err := checkColumns(file, lr.line, len(f)-3); err != nil {
				return out, err
			}
			counters := make([]Counter, len(f)-3)
			for j, name := range f[3:] {
				if c, ok := meta[string(name)]; ok {
					counters[j] = c
				} else {
					counters[j] = SidecarDefault(string(name))
				}
			}
			tmp := Series{Counters: counters}
			tmp.uniqueColumns(file, lr.line, 4, 1)
			if cur != nil && cur.Source == src && cur.Clock == clock && sameColumns(cur.Counters, counters) {
				cur.warnf(file, lr.line, "sampler restarted: appended segment joined to the series")
			} else {
				cur = NewSeries(src, clock, counters)
				cur.Warnings = tmp.Warnings
				cur.warnTotal = tmp.warnTotal
				cur.setMeta("format", "sidecar")
				for k, v := range extra {
					cur.setMeta(k, v)
				}
				out = append(out, cur)
			}
			n = len(counters)
			row = make([]uint64, n)
			continue
		}
		if cur == nil || n < 0 {
			return out, perr(file, lr.line, "sample line before the sample_id,start_ns,end_ns column line")
		}
		if !lr.newline {
			pending, pendingLine = append(pending[:0], t...), lr.line
			break
		}
		fields = splitComma(t, fields)
		if msg := parseSidecarRow(cur, fields, row, &miss, file, lr.line); msg != "" {
			cur.warnf(file, lr.line, "%s; line skipped", msg)
		} else if resetNext {
			cur.SetReset(cur.Len() - 1)
			if cur.Len() > 1 {
				cur.warnf(file, lr.line, "counters reset: the device went away and came back before this sample; deltas into it are unknown")
			}
			resetNext = false
		}
	}
	if pending != nil {
		fields = splitComma(pending, fields)
		if msg := parseSidecarRow(cur, fields, row, &miss, file, pendingLine); msg != "" {
			cur.warnf(file, pendingLine, "incomplete last line (writer stopped mid-line?): %s; dropped", msg)
		}
	}
	if !seenMagic {
		return nil, perr(file, 0, "empty file: no %q header", sidecarMagic)
	}
	if len(out) == 0 {
		return nil, perr(file, lr.line, "no sample_id,start_ns,end_ns column line")
	}
	for _, s := range out {
		s.warnResets(file)
	}
	return out, nil
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

package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// ReadPerfquery reads the text output of `perfquery` or `perfquery -x`
// (infiniband-diags), one or many snapshots, e.g. from
//
//	while sleep 1; do date +%s.%N; perfquery -x; done > perf.txt
//
// A snapshot begins at a "# Port counters: Lid L port P ..." or
// "# Port extended counters: ..." line and holds "Name:.....value" lines
// (values decimal or 0x hex; PortSelect and CounterSelect are settings and
// are skipped). Names become the canonical sysfs spellings (PortXmitWait ->
// port_xmit_wait, PortXmitPkts -> port_xmit_packets). Without -x the IBA
// PortCounters widths apply and counters saturate; with -x they are 64-bit.
//
// Timestamps are optional lines the user adds; each stamps the NEXT
// snapshot. Every common form of `date` output is read (PerfqueryTimeForms
// lists them): plain `date` ("Thu Nov 26 09:10:11 UTC 2026"), `date -R`,
// `date -Iseconds`/`-Ins`/`--rfc-3339`, `date +%s.%N` (a bare number of
// seconds since the epoch, with an optional fraction), and the comments
// "# ts=SECONDS[.FRACTION]", "# ts=RFC3339", "# ts_ns=NANOSECONDS". A
// date whose zone is a name this machine cannot place (not UTC or GMT, not
// the local zone's) refuses the file, as a silently wrong hour would be
// worse.
//
// When two or more timestamp lines sit between two snapshots, the first is
// taken as the end of the earlier snapshot and the last as the start of the
// next (so `date; perfquery; date` loops work), and a timestamp after the
// last snapshot is its end. With no timestamp anywhere the series have
// ClockNone. Each (LID, port, -x or not) is its own series, numbered from
// sample_id 0; the source is Source{Device: "lid:L", Port: P}.
func ReadPerfquery(r io.Reader, file string) ([]*Series, error) {
	lr := newLineReader(r)
	p := &pqParser{file: file}
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, perr(file, lr.line, "%v", err)
		}
		p.line(trimSpace(line), lr.line)
	}
	if p.err != nil {
		return nil, p.err
	}
	p.dropCut(!lr.newline && p.fieldLine == lr.line)
	p.flush()
	if len(p.pendingTs) > 0 && p.last != nil {
		ts := p.pendingTs[len(p.pendingTs)-1]
		if p.last.EndNs[p.lastIdx] <= ts || !p.lastTimed {
			p.last.EndNs[p.lastIdx] = ts
			if !p.lastTimed {
				p.last.StartNs[p.lastIdx] = ts
			}
		} else {
			p.warnAll(p.pendingLine[0], "timestamp after the last snapshot is earlier than its start; ignored")
		}
	}
	if len(p.out) == 0 {
		if p.sawAny {
			return nil, perr(file, 0, "no perfquery counters found (want lines like \"PortXmitData:.....123\")")
		}
		return nil, perr(file, 0, "empty file: no perfquery output")
	}
	for _, s := range p.out {
		if p.anyTs {
			s.Clock = ClockHost
		} else {
			for i := range s.StartNs {
				s.StartNs[i], s.EndNs[i] = 0, 0
			}
		}
	}
	for _, s := range p.out {
		s.recheckOrder() // ends were filled in after Append
		s.warnResets(file)
	}
	p.out[0].Warnings = append(p.common, p.out[0].Warnings...)
	return p.out, nil
}

type pqSnap struct {
	line     int
	lid      int
	port     int
	extended bool
	names    []string
	index    map[string]int // canonical counter name -> position in names
	tooMany  bool           // counters past maxColumns were ignored
	values   []uint64
	startNs  int64
	endNs    int64
	timed    bool
}

type pqKey struct {
	lid, port int
	ext       bool
}

type pqParser struct {
	file        string
	out         []*Series
	byKey       map[pqKey]*Series
	snap        *pqSnap
	pendingTs   []int64
	pendingLine []int
	anyTs       bool
	sawAny      bool
	last        *Series
	lastIdx     int
	lastTimed   bool
	fieldLine   int       // the line of the last counter added to snap
	common      []Warning // warnings not tied to one series
	err         error     // the first timestamp that cannot be read right: the file is refused
	// warnedZoneless: a date without a zone was read as local time, and
	// said so (once a file).
	warnedZoneless bool
}

func (p *pqParser) warnAll(line int, format string, args ...any) {
	tmp := Series{}
	tmp.warnf(p.file, line, format, args...)
	if len(p.common) < maxWarnings {
		p.common = append(p.common, tmp.Warnings...)
	}
}

// line takes line n, t, of a perfquery file: a time line, a "# Port
// counters" line that opens a snapshot, or one of its counters (field).
func (p *pqParser) line(t []byte, n int) {
	if len(t) == 0 {
		return
	}
	p.sawAny = true
	ts, ok, zoneless, err := parseTimestampLine(t)
	if err != nil && p.err == nil {
		p.err = perr(p.file, n, "%v", err)
	}
	if ok && zoneless && !p.warnedZoneless {
		p.warnedZoneless = true
		name, _ := time.Unix(0, ts).In(time.Local).Zone()
		p.warnAll(n, "date %s names no zone: taken as this machine's local time (%s), as are the others; "+
			"if perfquery ran in another zone, save date -u, -R or -Iseconds, which say it", quoted(trimSpace(t)), name)
	}
	if ok {
		p.flush()
		p.pendingTs = append(p.pendingTs, ts)
		p.pendingLine = append(p.pendingLine, n)
		p.anyTs = true
		return
	}
	if t[0] == '#' {
		s := string(t)
		if strings.HasPrefix(s, "# Port counters:") || strings.HasPrefix(s, "# Port extended counters:") {
			p.flush()
			p.begin(s, n)
		}
		return
	}
	p.field(t, n)
}

// field takes line n, t, as one counter of the snapshot open ("Name:....value"),
// warning of what it cannot take: a line of no field, a value not a number,
// a name too long or of no letter or digit, a repeat, too many counters.
func (p *pqParser) field(t []byte, n int) {
	name, val, ok := splitPerfField(t)
	if !ok {
		p.warnAll(n, "not a perfquery line: %s; ignored", quoted(t))
		return
	}
	if name == "PortSelect" || name == "CounterSelect" || name == "CounterSelect2" {
		return
	}
	if len(name) > maxNameBytes {
		p.warnAll(n, "field name %s longer than %d bytes; ignored", quoted(name), maxNameBytes)
		return
	}
	v, ok := parseUint(val)
	if !ok {
		p.warnAll(n, "%s value %s is not an unsigned integer; field ignored", name, quoted(val))
		return
	}
	if p.snap == nil {
		p.warnAll(n, "counters without a \"# Port counters\" line; taken as one snapshot of an unknown port")
		p.begin("", n)
	}
	// Keyed by the canonical name: an unknown field may snake-case to a
	// known one's ("SymbolError" and "SymbolErrorCounter": symbol_error).
	canon := PerfqueryCounter(name, p.snap.extended).Name
	if canon == "" {
		// "_:0" or "-:0": no letter or digit to name a column by.
		p.warnAll(n, "field %s has no letter or digit to name a counter by; ignored", quoted(name))
		return
	}
	if len(canon) > maxNameBytes {
		// snake_case adds an underscore before each word: "aBaB..." grows by half.
		p.warnAll(n, "field %s makes a counter name of %d bytes, longer than %d; ignored", quoted(name), len(canon), maxNameBytes)
		return
	}
	if j, dup := p.snap.index[canon]; dup {
		if p.snap.names[j] == name {
			p.warnAll(n, "%s repeated within a snapshot; later value kept", clipped(name))
		} else {
			p.warnAll(n, "%s and %s both name counter %s; later value kept", clipped(p.snap.names[j]), clipped(name), clipped(canon))
		}
		p.snap.values[j] = v
		return
	}
	if len(p.snap.names) >= maxColumns {
		if !p.snap.tooMany {
			p.warnAll(n, "more than %d counters in one snapshot; the rest ignored", maxColumns)
			p.snap.tooMany = true
		}
		return
	}
	if p.snap.index == nil {
		p.snap.index = make(map[string]int)
	}
	p.snap.index[canon] = len(p.snap.names)
	p.snap.names = append(p.snap.names, name)
	p.snap.values = append(p.snap.values, v)
	p.fieldLine = n
}

// dropCut drops the snapshot open at the end of the file when it was cut
// short (the loop killed, the file copied while written) and its port has
// earlier, whole snapshots: it holds only the first of their counters, or
// its last line has no newline, so its last value may have lost digits.
// Kept, it would start a series of its own or put a wrong value last.
func (p *pqParser) dropCut(lastLineCut bool) {
	snap := p.snap
	if snap == nil {
		return
	}
	ser := p.byKey[pqKey{snap.lid, snap.port, snap.extended}]
	if ser == nil || ser.Len() == 0 {
		return
	}
	switch {
	case len(snap.names) < len(ser.Counters) && sameNames(ser.Counters[:len(snap.names)], snap.names, snap.extended):
		ser.warnf(p.file, snap.line, "last snapshot has only %d of the %d counters of the earlier ones: cut short, dropped", len(snap.names), len(ser.Counters))
	case lastLineCut:
		ser.warnf(p.file, snap.line, "last snapshot ends without a newline (line %d): its last value may be cut short, dropped", p.fieldLine)
	default:
		return
	}
	p.snap = nil
}

// splitPerfField splits "PortXmitData:....................123".
func splitPerfField(t []byte) (string, []byte, bool) {
	i := bytes.IndexByte(t, ':')
	if i <= 0 {
		return "", nil, false
	}
	for _, c := range t[:i] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return "", nil, false
		}
	}
	v := t[i+1:]
	for len(v) > 0 && (v[0] == '.' || v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	if len(v) == 0 {
		return "", nil, false
	}
	return string(t[:i]), trimSpace(v), true
}

// parseTimestampLine recognises the timestamp lines ReadPerfquery accepts;
// zoneless says the line named no zone and was read as local time.
func parseTimestampLine(t []byte) (ns int64, ok, zoneless bool, err error) {
	if bytes.HasPrefix(t, []byte("#")) {
		u := trimSpace(t[1:])
		switch {
		case bytes.HasPrefix(u, []byte("ts_ns=")):
			v := trimSpace(u[6:])
			ns, ok := parseInt64(v)
			if !ok || ns < 0 {
				// Said, not passed over as a comment: that left the
				// snapshot untimed without a word.
				return 0, false, false, fmt.Errorf("timestamp line # ts_ns=%s: want whole nanoseconds since the Unix epoch, 0 to %d", quoted(v), int64(math.MaxInt64))
			}
			return ns, true, false, nil
		case bytes.HasPrefix(u, []byte("ts=")):
			u = trimSpace(u[3:])
		default:
			return 0, false, false, nil
		}
		t = u
	}
	if ns, ok := parseSecondsDecimal(t); ok {
		return ns, true, false, nil
	}
	return parseDateLine(t)
}

func (p *pqParser) begin(header string, n int) {
	s := &pqSnap{line: n, extended: strings.HasPrefix(header, "# Port extended counters:")}
	s.lid, s.port = headerNumber(header, "Lid"), headerNumber(header, "port")
	switch len(p.pendingTs) {
	case 0:
	case 1:
		s.startNs, s.endNs, s.timed = p.pendingTs[0], p.pendingTs[0], true
	default:
		if p.last != nil && p.lastTimed {
			if end := p.pendingTs[0]; end >= p.last.StartNs[p.lastIdx] {
				p.last.EndNs[p.lastIdx] = end
			}
		}
		ts := p.pendingTs[len(p.pendingTs)-1]
		s.startNs, s.endNs, s.timed = ts, ts, true
		if len(p.pendingTs) > 2 {
			p.warnAll(p.pendingLine[1], "%d timestamp lines between two snapshots; only the first and the last are used", len(p.pendingTs))
		}
	}
	p.pendingTs, p.pendingLine = p.pendingTs[:0], p.pendingLine[:0]
	p.snap = s
}

// headerNumber finds "WORD N" in a perfquery header, -1 when absent.
func headerNumber(h, word string) int {
	f := strings.Fields(h)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == word {
			if v, err := strconv.Atoi(strings.TrimRight(f[i+1], ",:")); err == nil {
				return v
			}
		}
	}
	return -1
}

// flush files the open snapshot into its series.
func (p *pqParser) flush() {
	s := p.snap
	p.snap = nil
	if s == nil {
		return
	}
	if len(s.names) == 0 {
		p.warnAll(s.line, "snapshot has no counters; ignored")
		return
	}
	if p.byKey == nil {
		p.byKey = map[pqKey]*Series{}
	}
	key := pqKey{s.lid, s.port, s.extended}
	ser := p.byKey[key]
	if ser != nil && !sameNames(ser.Counters, s.names, s.extended) {
		ser.warnf(p.file, s.line, "snapshot has a different set of counters; starting a new series")
		ser = nil
	}
	if ser == nil {
		counters := make([]Counter, len(s.names))
		for j, n := range s.names {
			counters[j] = PerfqueryCounter(n, s.extended)
		}
		src := Source{Port: max(s.port, 0)}
		if s.lid >= 0 {
			src.Device = "lid:" + strconv.Itoa(s.lid)
		}
		ser = NewSeries(src, ClockNone, counters)
		ser.setMeta("format", "perfquery")
		if s.extended {
			ser.setMeta("perfquery_extended", "true")
		}
		p.byKey[key] = ser
		p.out = append(p.out, ser)
	}
	if !s.timed && p.anyTs {
		ser.warnf(p.file, s.line, "snapshot has no timestamp line before it")
	}
	if n := ser.Len(); n > 0 && s.timed && s.startNs < ser.StartNs[n-1] {
		ser.warnf(p.file, s.line, "timestamp goes backwards by %d ns", ser.StartNs[n-1]-s.startNs)
	}
	ser.Append(uint64(ser.Len()), s.startNs, s.endNs, s.values)
	ser.setLine(ser.Len()-1, s.line)
	p.last, p.lastIdx, p.lastTimed = ser, ser.Len()-1, s.timed
}

func sameNames(cs []Counter, names []string, ext bool) bool {
	if len(cs) != len(names) {
		return false
	}
	for j, n := range names {
		if cs[j].Name != PerfqueryCounter(n, ext).Name {
			return false
		}
	}
	return true
}

package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// DiagFormat is a DOCA telemetry_diag output format.
type DiagFormat uint8

const (
	// DiagAuto: tell format 0 from the header; tell 1 (64-bit values) from 2
	// (32-bit values) by the values: a file whose values all fit in 32 bits
	// is read as format 2, so that counters wrap at 2^32 (harmless for a
	// format 1 file whose counters never wrap).
	DiagAuto DiagFormat = iota
	// DiagFormat0: data ID and timestamp per value, 64-bit values. Header
	// "sample_id, data_id, sample_time, NAME, data_id, sample_time, NAME, ...".
	DiagFormat0
	// DiagFormat1: start/end timestamp per sample, 64-bit values. Header
	// "sample_id, sample_time_start, sample_time_end, NAME, ...".
	DiagFormat1
	// DiagFormat2: as format 1 with 32-bit values.
	DiagFormat2
)

func (f DiagFormat) String() string {
	switch f {
	case DiagFormat0:
		return "0"
	case DiagFormat1:
		return "1"
	case DiagFormat2:
		return "2"
	}
	return "auto"
}

// maxDataIDsBytes bounds a data-IDs JSON, which is read whole.
const maxDataIDsBytes = 16 << 20

// DataIDName names one data ID, as an entry of the DOCA data-IDs JSON.
type DataIDName struct {
	Name string
	ID   DataID
}

// ReadDataIDs reads a DOCA telemetry_diag data-IDs JSON:
//
//	{"data-ids": [{"name": "port_0_rx_bytes", "data_id": "0x1020000100000000"}, ...]}
//
// data_id may be a hex string or a JSON number. name names the CSV column.
// Errors name the line of the entry (or of the syntax error) at fault.
func ReadDataIDs(r io.Reader, file string) ([]DataIDName, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDataIDsBytes+1))
	if err != nil {
		return nil, perr(file, 0, "data-IDs JSON: %v", err)
	}
	if len(data) > maxDataIDsBytes {
		return nil, perr(file, 0, "data-IDs JSON larger than %d MB: the catalogue of every data ID a device has is a few hundred kB; this is not one", maxDataIDsBytes>>20)
	}
	var doc struct {
		DataIDs []json.RawMessage `json:"data-ids"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, perr(file, jsonErrorLine(data, err), "data-IDs JSON: %v", err)
	}
	if doc.DataIDs == nil {
		return nil, perr(file, 0, `data-IDs JSON: no "data-ids" array`)
	}
	lines := dataIDLines(data)
	out := make([]DataIDName, 0, len(doc.DataIDs))
	for i, raw := range doc.DataIDs {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		var e struct {
			Name   *string         `json:"name"`
			DataID json.RawMessage `json:"data_id"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, perr(file, line, "data-IDs JSON entry %d: %v", i, err)
		}
		if e.Name == nil {
			return nil, perr(file, line, `data-IDs JSON entry %d: missing "name"`, i)
		}
		if len(e.DataID) == 0 || string(e.DataID) == "null" {
			return nil, perr(file, line, `data-IDs JSON entry %d (%s): missing "data_id"`, i, clipped(*e.Name))
		}
		var id DataID
		var str string
		if err := json.Unmarshal(e.DataID, &str); err == nil {
			v, err := ParseDataID(str)
			if err != nil {
				return nil, perr(file, line, "data-IDs JSON entry %d (%s): %v", i, clipped(*e.Name), err)
			}
			id = v
		} else {
			v, err := strconv.ParseUint(string(e.DataID), 10, 64)
			if err != nil {
				return nil, perr(file, line, "data-IDs JSON entry %d (%s): data_id %s is neither a hex string nor an integer", i, clipped(*e.Name), quoted(e.DataID))
			}
			id = DataID(v)
		}
		out = append(out, DataIDName{Name: *e.Name, ID: id})
	}
	return out, nil
}

// jsonErrorLine is the 1-based line of data where a json.Unmarshal error
// lies, or 0 when the error does not say.
func jsonErrorLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(data))
	default:
		return 0
	}
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// dataIDLines gives the line on which each element of the document's
// "data-ids" array starts (the last such key, as json.Unmarshal takes). It
// is called on a document Unmarshal has accepted; nil if the walk fails.
func dataIDLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var lines []int
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if key, _ := t.(string); !strings.EqualFold(key, "data-ids") {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil
		}
		lines = lines[:0]
		for dec.More() {
			// InputOffset is just past the previous token: step over the
			// separator and blanks to the element itself.
			off := int(dec.InputOffset())
			for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
				off++
			}
			lines = append(lines, 1+bytes.Count(data[:off], []byte("\n")))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil
		}
	}
	return lines
}

// ReadDataIDsFile reads a data-IDs JSON file.
func ReadDataIDsFile(path string) ([]DataIDName, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	defer f.Close()
	return ReadDataIDs(f, path)
}

// dataIDFromName recognises the catalogue's own naming ("port_0_rx_bytes",
// "port_1_priority_3_tx_pause_packets", "global_icmc_hit"), so a CSV whose
// header carries the default names gets its data IDs back.
func dataIDFromName(name string) (DataID, bool) {
	port, prio := -1, -1
	rest := name
	if strings.HasPrefix(rest, "port_") {
		i := strings.IndexByte(rest[5:], '_')
		if i < 0 {
			return 0, false
		}
		p, err := strconv.Atoi(rest[5 : 5+i])
		if err != nil || p < 0 || p > 255 {
			return 0, false
		}
		port, rest = p, rest[5+i+1:]
		if strings.HasPrefix(rest, "priority_") {
			j := strings.IndexByte(rest[9:], '_')
			if j < 0 {
				return 0, false
			}
			q, err := strconv.Atoi(rest[9 : 9+j])
			if err != nil || q < 0 || q > 15 {
				return 0, false
			}
			prio, rest = q, rest[9+j+1:]
		}
	}
	for _, c := range DiagCatalog {
		if c.Name != rest {
			continue
		}
		switch {
		case c.Index == IndexPort && port >= 0 && prio < 0:
			return c.Type | DataID(port), true
		case c.Index == IndexPortPriority && port >= 0 && prio >= 0:
			return c.Type | DataID(port) | DataID(prio)<<8, true
		case (c.Index == IndexNone || c.Index == IndexPCIe) && port < 0:
			return c.Type, true
		}
	}
	return 0, false
}

// ReadDiagCSV reads a DOCA telemetry_diag sample CSV in any output format
// (0, 1, 2), with ", " or "," separators, RTC ("s.ns", the ns part an
// integer, padded or not) or FRC (integer) timestamps, with or without a
// trailing newline. file names the input in messages. Rows it cannot use
// (missing or extra fields, bad numbers) become warnings; gaps in sample_id
// become warnings and show in Series.LostBefore.
func ReadDiagCSV(r io.Reader, file string, opts *Options) (*Series, error) {
	if opts == nil {
		opts = &Options{}
	}
	lr := newLineReader(r)
	var header [][]byte
	var headerLine []byte
	for {
		line, err := lr.next()
		if err == io.EOF {
			return nil, perr(file, 0, "empty file: no telemetry_diag header or samples")
		}
		if err != nil {
			return nil, perr(file, lr.line, "%v", err)
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		headerLine = append([]byte(nil), line...)
		if header, err = splitCSV(headerLine, nil); err != nil {
			return nil, perr(file, lr.line, "%v", err)
		}
		break
	}
	p := &diagParser{file: file, opts: opts, lr: lr, headerLine: lr.line}
	hasHeader := strings.EqualFold(string(header[0]), "sample_id")
	format := opts.DiagFormat
	if format == DiagAuto {
		if hasHeader && len(header) > 1 && strings.EqualFold(string(header[1]), "data_id") ||
			!hasHeader && len(header) >= 4 && (len(header)-1)%3 == 0 && hasHexPrefix(header[1]) {
			format = DiagFormat0
		}
	}
	var err error
	if format == DiagFormat0 {
		err = p.setupFormat0(header, hasHeader)
	} else {
		err = p.setupFormat12(header, hasHeader)
	}
	if err != nil {
		return nil, err
	}
	if !hasHeader {
		p.s.warnf(file, 0, "no header line: column names from %s", p.namesFrom)
		if err := p.row(header, 1); err != nil {
			return nil, err
		}
	}
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, perr(file, lr.line, "%v", err)
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		if p.fields, err = splitCSV(line, p.fields); err != nil {
			p.s.warnf(file, lr.line, "%v; row skipped", err)
			continue
		}
		if err := p.row(p.fields, lr.line); err != nil {
			return nil, err
		}
	}
	p.finish(format)
	return p.s, nil
}

// maxEndWarnings is how many rows with sample_time_end before
// sample_time_start are warned about one by one; finish counts the rest.
const maxEndWarnings = 5

type diagParser struct {
	file       string
	opts       *Options
	lr         *lineReader
	s          *Series
	format0    bool
	fields     [][]byte
	row64      []uint64
	rowNs      []int64
	namesFrom  string
	headerLine int  // the line of the header (or of the first row, when there is no header)
	endBefore  int  // rows whose sample_time_end is before their sample_time_start
	rtc        int8 // 0 unknown, 1 RTC, -1 FRC
	ids        []DataID
	idsKnown   bool // format 0: data IDs taken from the first row
	names      []string
	maxValue   uint64
	idEpoch    uint64
	prevRawID  uint64
	nameByID   map[DataID]string // the data-IDs JSON by ID (byID)
	idByName   map[string]DataID // and by name (byName)
}

// byID is the data-IDs JSON's name for id ("" when it has none); the first
// entry wins, as in the JSON's order.
func (p *diagParser) byID(id DataID) string {
	if p.nameByID == nil {
		p.nameByID = make(map[DataID]string, len(p.opts.DataIDs))
		for _, d := range slices.Backward(p.opts.DataIDs) {
			p.nameByID[d.ID] = d.Name
		}
	}
	return p.nameByID[id]
}

// byName is the data-IDs JSON's data ID for a column name; the first entry
// wins. (Maps, not scans: a wide file against a long JSON must not take
// columns × entries steps.)
func (p *diagParser) byName(name string) (DataID, bool) {
	if p.idByName == nil {
		p.idByName = make(map[string]DataID, len(p.opts.DataIDs))
		for _, d := range slices.Backward(p.opts.DataIDs) {
			p.idByName[d.Name] = d.ID
		}
	}
	id, ok := p.idByName[name]
	return id, ok
}

func (p *diagParser) setupFormat0(header [][]byte, hasHeader bool) error {
	if (len(header)-1)%3 != 0 || len(header) < 4 {
		return perr(p.file, p.lr.line, "format 0 header has %d fields; want sample_id then (data_id, sample_time, name) triples", len(header))
	}
	n := (len(header) - 1) / 3
	if err := checkColumns(p.file, p.lr.line, n); err != nil {
		return err
	}
	p.format0 = true
	p.names = make([]string, n)
	for j := 0; j < n; j++ {
		if hasHeader {
			p.names[j] = string(header[3+3*j])
		}
	}
	p.namesFrom = "the data IDs"
	p.s = &Series{Source: p.opts.Source, ValueNs: []int64{}}
	p.row64 = make([]uint64, n)
	p.rowNs = make([]int64, n)
	return nil
}

// columnsFromIDs builds format 0 columns once the first row shows the IDs.
func (p *diagParser) columnsFromIDs(ids []DataID) {
	p.ids = ids
	counters := make([]Counter, len(ids))
	for j, id := range ids {
		name := p.names[j]
		if name == "" {
			name = p.byID(id)
		}
		counters[j] = DiagCounterFor(id, name, 64, p.opts.ClearOnSample)
	}
	p.s.Counters = counters
	p.s.uniqueColumns(p.file, p.headerLine, 4, 3)
	p.idsKnown = true
}

func (p *diagParser) setupFormat12(header [][]byte, hasHeader bool) error {
	if len(header) < 4 {
		return perr(p.file, p.lr.line, "header has %d fields; want sample_id, sample_time_start, sample_time_end and at least one counter", len(header))
	}
	n := len(header) - 3
	if err := checkColumns(p.file, p.lr.line, n); err != nil {
		return err
	}
	names := make([]string, n)
	ids := make([]DataID, n)
	positional := len(p.opts.DataIDs) == n
	switch {
	case hasHeader:
		p.namesFrom = "the header"
		for j := range names {
			names[j] = string(header[3+j])
			if names[j] == "" && positional {
				names[j] = p.opts.DataIDs[j].Name
			}
			if names[j] == "" {
				names[j] = "value_" + strconv.Itoa(j)
			}
		}
	case positional:
		p.namesFrom = "the data-IDs JSON"
		for j := range names {
			names[j] = p.opts.DataIDs[j].Name
		}
	default:
		p.namesFrom = "column positions"
		for j := range names {
			names[j] = "value_" + strconv.Itoa(j)
		}
	}
	p.s = &Series{Source: p.opts.Source}
	for j, name := range names {
		id, ok := p.byName(name)
		if !ok && positional {
			id, ok = p.opts.DataIDs[j].ID, true
			if hasHeader && p.opts.DataIDs[j].Name != name {
				p.s.warnf(p.file, p.lr.line, "column %d is %s in the header but %s in the data-IDs JSON; using the JSON's data ID %s", j+4, quoted(name), quoted(p.opts.DataIDs[j].Name), id)
			}
		}
		if !ok {
			id, _ = dataIDFromName(name)
		}
		ids[j] = id
	}
	counters := make([]Counter, n)
	for j := range counters {
		counters[j] = DiagCounterFor(ids[j], names[j], 64, p.opts.ClearOnSample)
	}
	p.s.Counters = counters
	p.s.uniqueColumns(p.file, p.headerLine, 4, 1)
	p.row64 = make([]uint64, n)
	return nil
}

// stamp parses one timestamp field and checks it agrees with the file's clock.
func (p *diagParser) stamp(b []byte, line int, what string) (int64, bool) {
	ns, rtc, ok := parseDiagTime(b)
	if !ok {
		p.s.warnf(p.file, line, "%s %s is not a timestamp (want seconds.nanoseconds or an integer); row skipped", what, quoted(b))
		return 0, false
	}
	r := int8(-1)
	if rtc {
		r = 1
	}
	if p.rtc == 0 {
		p.rtc = r
	} else if p.rtc != r {
		p.s.warnf(p.file, line, "%s %s mixes RTC (s.ns) and FRC (integer) timestamps; row skipped", what, quoted(b))
		return 0, false
	}
	return ns, true
}

func (p *diagParser) row(f [][]byte, line int) error {
	s := p.s
	want := 3 + len(p.row64)
	if p.format0 {
		want = 1 + 3*len(p.row64)
	}
	if len(f) != want {
		what := "missing"
		if len(f) > want {
			what = "extra"
		}
		s.warnf(p.file, line, "%d fields where the header has %d (%s columns); row skipped", len(f), want, what)
		return nil
	}
	rawID, ok := parseUint(f[0])
	if !ok {
		s.warnf(p.file, line, "sample_id %s is not a number; row skipped", quoted(f[0]))
		return nil
	}
	var start, end int64
	if p.format0 {
		start, end, ok = p.format0Row(f, line)
	} else {
		start, end, ok = p.intervalRow(f, line)
	}
	if ok {
		p.appendRow(rawID, start, end, line)
	}
	return nil
}

// format0Row reads a row of format 0 (data ID, sample time and value per
// counter) into p.row64 and p.rowNs: its time span, or ok false when it is
// skipped (warned).
func (p *diagParser) format0Row(f [][]byte, line int) (start, end int64, ok bool) {
	s := p.s
	if !p.idsKnown {
		ids := make([]DataID, len(p.row64))
		for j := range ids {
			id, err := ParseDataID(string(f[1+3*j]))
			if err != nil {
				s.warnf(p.file, line, "column %d: %v; row skipped", 2+3*j, err)
				return 0, 0, false
			}
			ids[j] = id
		}
		p.columnsFromIDs(ids)
	}
	for j := range p.row64 {
		id, ok := parseHexField(f[1+3*j])
		if !ok {
			s.warnf(p.file, line, "column %d: data ID %s does not parse; row skipped", 2+3*j, quoted(f[1+3*j]))
			return 0, 0, false
		}
		if DataID(id) != p.ids[j] {
			s.warnf(p.file, line, "column %d: data ID %s where earlier rows have %s; row skipped", 2+3*j, DataID(id), p.ids[j])
			return 0, 0, false
		}
		ns, ok := p.stamp(f[2+3*j], line, "sample_time")
		if !ok {
			return 0, 0, false
		}
		v, ok := parseUint(f[3+3*j])
		if !ok {
			s.warnf(p.file, line, "column %d (%s): value %s is not an unsigned integer; row skipped", 4+3*j, clipped(s.Counters[j].Name), quoted(f[3+3*j]))
			return 0, 0, false
		}
		p.row64[j], p.rowNs[j] = v, ns
		if j == 0 || ns < start {
			start = ns
		}
		if j == 0 || ns > end {
			end = ns
		}
	}
	return start, end, true
}

// intervalRow reads a row of one start and end time for all its counters
// into p.row64: its time span, or ok false when it is skipped (warned).
func (p *diagParser) intervalRow(f [][]byte, line int) (start, end int64, ok bool) {
	s := p.s
	if start, ok = p.stamp(f[1], line, "sample_time_start"); !ok {
		return 0, 0, false
	}
	if end, ok = p.stamp(f[2], line, "sample_time_end"); !ok {
		return 0, 0, false
	}
	for j := range p.row64 {
		v, ok := parseUint(f[3+j])
		if !ok {
			s.warnf(p.file, line, "column %d (%s): value %s is not an unsigned integer; row skipped", 4+j, clipped(s.Counters[j].Name), quoted(f[3+j]))
			return 0, 0, false
		}
		p.row64[j] = v
	}
	if end < start {
		// Older samples printed the end's high word without carrying the
		// low word's wrap: one second for RTC, 2^32 ns for FRC. An end
		// that one carry puts at or after the start is taken as that
		// (the row kept, end moved, warned); any other is set to start.
		carry, unit := int64(1e9), "1 s"
		if p.rtc < 0 {
			carry, unit = 1<<32, "2^32 ns"
		}
		p.endBefore++
		if end+carry >= start {
			if p.endBefore <= maxEndWarnings {
				s.warnf(p.file, line, "sample_time_end %s before sample_time_start %s: taken as the missed carry of older DOCA samples, end moved %s later", quoted(f[2]), quoted(f[1]), unit)
			}
			end += carry
		} else {
			if p.endBefore <= maxEndWarnings {
				s.warnf(p.file, line, "sample_time_end %s before sample_time_start %s by more than a carry (%s); end set to start", quoted(f[2]), quoted(f[1]), unit)
			}
			end = start
		}
	}
	return start, end, true
}

// appendRow appends the row read to the series: its sample_id unwrapped
// and checked against the previous row's, its time span, and its values.
func (p *diagParser) appendRow(rawID uint64, start, end int64, line int) {
	s := p.s
	for _, v := range p.row64 {
		if v > p.maxValue {
			p.maxValue = v
		}
	}
	// sample_id is a 32-bit sequence number: unwrap it.
	n := s.Len()
	if n > 0 && rawID < p.prevRawID && p.prevRawID-rawID > 1<<31 && p.prevRawID < 1<<32 {
		p.idEpoch += 1 << 32
	}
	p.prevRawID = rawID
	id := rawID + p.idEpoch
	if n > 0 {
		prev := s.SampleID[n-1]
		switch {
		case id > prev+1:
			s.warnf(p.file, line, "%d sample(s) lost: sample_id jumps from %d to %d", id-prev-1, prev, id)
		case id <= prev:
			s.warnf(p.file, line, "sample_id goes back from %d to %d: sequence restarted", prev, id)
		}
		if mid, pmid := start+(end-start)/2, s.TimeNs(n-1); mid < pmid {
			s.warnf(p.file, line, "timestamp goes backwards by %d ns", pmid-mid)
			s.unsorted = true
		}
	}
	s.SampleID = append(s.SampleID, id)
	s.StartNs = append(s.StartNs, start)
	s.EndNs = append(s.EndNs, end)
	s.Values = append(s.Values, p.row64...)
	if p.format0 {
		s.ValueNs = append(s.ValueNs, p.rowNs...)
	}
	s.setLine(n, line)
}

func parseHexField(b []byte) (uint64, bool) {
	if hasHexPrefix(b) {
		return parseHex(b[2:])
	}
	return parseHex(b)
}

func (p *diagParser) finish(format DiagFormat) {
	s := p.s
	s.setMeta("format", "doca_diag_csv")
	switch {
	case p.format0:
		s.setMeta("doca_format", "0")
	case format == DiagFormat1:
		s.setMeta("doca_format", "1")
	case format == DiagFormat2 || p.maxValue <= 0xFFFFFFFF:
		if format == DiagFormat2 {
			s.setMeta("doca_format", "2")
		} else {
			s.setMeta("doca_format", "1or2")
		}
		for j := range s.Counters {
			s.Counters[j].Width = 32
		}
	default:
		s.setMeta("doca_format", "1")
	}
	if p.opts.ClearOnSample {
		s.setMeta("clear_on_sample", "true")
	}
	switch p.rtc {
	case 1:
		s.Clock = ClockNICRealTime
	case -1:
		s.Clock = ClockNICFree
	}
	if p.endBefore > maxEndWarnings {
		s.warnf(p.file, 0, "%d rows in all had sample_time_end before sample_time_start (the first %d are warned about by line)", p.endBefore, maxEndWarnings)
	}
	if s.Len() == 0 {
		s.warnf(p.file, 0, "no samples")
	}
	s.warnResets(p.file)
	if s.Counters == nil {
		// Format 0 with no data row: names only.
		for _, n := range p.names {
			s.Counters = append(s.Counters, DiagCounterFor(0, n, 64, p.opts.ClearOnSample))
		}
		s.uniqueColumns(p.file, p.headerLine, 4, 3)
	}
}

// looksLikeDiag reports whether a first line is a telemetry_diag header or row.
func looksLikeDiag(line []byte) bool {
	f, err := splitCSV(line, nil)
	if err != nil || len(f) < 4 {
		return false
	}
	if bytes.EqualFold(f[0], []byte("sample_id")) {
		return true
	}
	_, ok := parseUint(f[0])
	return ok && !hasHexPrefix(f[0])
}

package telemetry

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Clock names the time base of a series' timestamps. Every timestamp in this
// package is an int64 count of nanoseconds; the clock says from when.
type Clock uint8

const (
	// ClockNone: the source carried no timestamps. StartNs and EndNs are 0,
	// deltas still work, rates do not.
	ClockNone Clock = iota
	// ClockHost: the host's CLOCK_REALTIME, ns since the Unix epoch.
	ClockHost
	// ClockNICFree: the NIC's free-running counter (DOCA "FRC"), ns since an
	// arbitrary origin (typically device reset). Not comparable with host time
	// without an offset.
	ClockNICFree
	// ClockNICRealTime: the NIC's real-time clock (DOCA "RTC"), ns since the
	// Unix epoch as kept by the NIC (PTP-disciplined when PTP runs).
	ClockNICRealTime
)

var clockNames = [...]string{ClockNone: "none", ClockHost: "host", ClockNICFree: "nic_frc", ClockNICRealTime: "nic_rtc"}

func (c Clock) String() string {
	if int(c) < len(clockNames) {
		return clockNames[c]
	}
	return "clock(" + strconv.Itoa(int(c)) + ")"
}

// ParseClock is the inverse of Clock.String.
func ParseClock(s string) (Clock, error) {
	for i, n := range clockNames {
		if n == s {
			return Clock(i), nil
		}
	}
	return ClockNone, fmt.Errorf("unknown clock %s (want none, host, nic_frc or nic_rtc)", quoted(s))
}

// Source says which device and port a series describes.
type Source struct {
	// Device is the RDMA device name ("mlx5_0"), or for perfquery data
	// "lid:N" (perfquery output names the port by LID, not by device), or ""
	// when the file does not say (DOCA telemetry_diag CSV).
	Device string
	// Port is the 1-based port number, 0 when unknown or device-wide.
	Port int
}

// String gives "mlx5_0/1", the form the sidecar header uses.
func (s Source) String() string {
	if s.Device == "" && s.Port == 0 {
		return "unknown"
	}
	return s.Device + "/" + strconv.Itoa(s.Port)
}

// ParseSource is the inverse of Source.String.
func ParseSource(s string) (Source, error) {
	if s == "unknown" || s == "" {
		return Source{}, nil
	}
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return Source{}, fmt.Errorf("source %s: want DEVICE/PORT", quoted(s))
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil || p < 0 {
		return Source{}, fmt.Errorf("source %s: port %s is not a number", quoted(s), quoted(s[i+1:]))
	}
	return Source{Device: s[:i], Port: p}, nil
}

// Kind tells counters from statistics.
type Kind uint8

const (
	// KindCounter accumulates events; the interesting quantity is its Delta.
	KindCounter Kind = iota
	// KindGauge is a statistic or level read as is (a minimum, a maximum, a
	// latency, a configured value); differencing it means nothing.
	KindGauge
)

func (k Kind) String() string {
	if k == KindGauge {
		return "gauge"
	}
	return "counter"
}

// Unit is what one step of a counter's value counts.
type Unit uint8

const (
	UnitCount Unit = iota // events or packets
	UnitBytes             // bytes
	UnitWords             // 4-byte words (IB PortXmitData/PortRcvData, sysfs port_xmit_data/port_rcv_data)
	UnitNs                // nanoseconds
	UnitTicks             // PortXmitWait ticks: a device-defined time quantum (what `ibanalyze tick` measures)
	UnitMs                // milliseconds
)

var unitNames = [...]string{UnitCount: "count", UnitBytes: "bytes", UnitWords: "words4", UnitNs: "ns", UnitTicks: "ticks", UnitMs: "ms"}

func (u Unit) String() string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return "unit(" + strconv.Itoa(int(u)) + ")"
}

// ParseUnit is the inverse of Unit.String.
func ParseUnit(s string) (Unit, error) {
	for i, n := range unitNames {
		if n == s {
			return Unit(i), nil
		}
	}
	return UnitCount, fmt.Errorf("unknown unit %s", quoted(s))
}

// Base gives the unit values convert to and the factor: words convert to
// bytes (×4), milliseconds to nanoseconds (×1e6); other units are their own
// base (×1).
func (u Unit) Base() (Unit, uint64) {
	switch u {
	case UnitWords:
		return UnitBytes, 4
	case UnitMs:
		return UnitNs, 1_000_000
	}
	return u, 1
}

// Counter is the metadata of one column of a Series.
type Counter struct {
	Name string // canonical name: sysfs spelling for IB port counters ("port_xmit_wait"), DOCA name for diag data
	Unit Unit
	Kind Kind
	// Width is the counter's size in bits (1..64). The hardware counter wraps
	// (or, if Saturating, sticks) at 2^Width-1; Delta works modulo 2^Width.
	Width uint8
	// Saturating counters stop at their maximum instead of wrapping (IBA
	// PortCounters, as perfquery without -x shows them).
	Saturating bool
	// ClearOnSample: the device clears the counter at each sample (DOCA
	// telemetry_diag "data clear"), so each value IS the per-interval delta.
	ClearOnSample bool
	// DataID is the DOCA telemetry_diag data ID, 0 when the column is not one.
	DataID DataID
}

// Max is the largest value the counter holds: 2^Width-1.
func (c Counter) Max() uint64 {
	if c.Width == 0 || c.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<c.Width - 1
}

// ToBase converts a value (or delta) of this counter to its base unit, e.g.
// 4-byte words to bytes. The result saturates at 2^64-1.
func (c Counter) ToBase(v uint64) (uint64, Unit) {
	u, f := c.Unit.Base()
	if f != 1 && v > ^uint64(0)/f {
		return ^uint64(0), u
	}
	return v * f, u
}

// Series is a run of samples from one Source on one Clock, with a fixed set
// of counter columns. Storage is flat: Values holds len(Counters) values per
// sample, sample after sample, so a series of 100,000 samples is a handful of
// slices rather than 100,000 maps. The fields are exported for reading; build
// a series with NewSeries and Append (or get one from a reader), which keep
// the column index and time-order bookkeeping right. Once built, a Series is
// safe for concurrent reads.
type Series struct {
	Source   Source
	Clock    Clock
	Counters []Counter

	SampleID []uint64 // per sample; unwrapped (a DOCA 32-bit sample_id that wraps keeps counting up)
	StartNs  []int64  // per sample, ns on Clock: when reading the sample began
	EndNs    []int64  // per sample, ns on Clock: when it ended (== StartNs for point readings)
	Values   []uint64 // len(SampleID)*len(Counters), row-major; raw values in each counter's Unit

	// ValueNs, when not nil, holds a timestamp per value (same layout as
	// Values): DOCA output format 0 stamps every value separately.
	ValueNs []int64
	// missing marks values that could not be read (bit i*len(Counters)+col);
	// nil when every value is present.
	missing []uint64
	// resets lists, in order, the samples before which every counter was
	// reset (the device was removed and created again, or its driver
	// reloaded): a delta into such a sample is unknown (SetReset).
	resets []int

	// Meta holds facts about the origin worth keeping: "format" (the reader:
	// "doca_diag_csv", "sysfs", "perfquery", "sidecar"), "doca_format" ("0",
	// "1", "2"), "interval_ns" and the like.
	Meta map[string]string
	// Warnings are the problems the reader stepped over (bad lines, gaps,
	// time going backwards), each naming file and line.
	Warnings []Warning

	line      []int32 // per sample, the 1-based input line it came from (readers only; see setLine)
	colIndex  map[string]int
	unsorted  bool // some TimeNs(i) < TimeNs(i-1): windows are found by scanning
	warnTotal int  // warnings issued, including those past maxWarnings
}

// Sample is a view of one sample of a Series. Values aliases the series'
// storage: copy it to keep it past a later Append.
type Sample struct {
	Source   Source
	Clock    Clock
	SampleID uint64
	StartNs  int64    // ns on Clock
	EndNs    int64    // ns on Clock
	Values   []uint64 // aligned with Series.Counters, in each counter's Unit
}

// TimeNs is the sample's nominal time: the middle of [StartNs, EndNs].
func (s Sample) TimeNs() int64 { return s.StartNs + (s.EndNs-s.StartNs)/2 }

// NewSeries starts an empty series with the given columns.
func NewSeries(src Source, clock Clock, counters []Counter) *Series {
	s := &Series{Source: src, Clock: clock, Counters: counters}
	s.reindex()
	return s
}

func (s *Series) reindex() {
	s.colIndex = make(map[string]int, len(s.Counters))
	for i, c := range s.Counters {
		if _, dup := s.colIndex[c.Name]; !dup {
			s.colIndex[c.Name] = i
		}
	}
}

// maxColumns bounds the counter columns of one series read from a file. A
// series costs about 130 bytes per column (its Counter, name and index
// entry; TestWideFileMemory measures it) plus 8 bytes per value, so 65,536
// columns are some 9 MB before the first sample; more is no real telemetry
// configuration, and a 200,000-column file is refused on its header,
// before its rows are read.
const maxColumns = 1 << 16

// checkColumns refuses a header of more than maxColumns counter columns.
func checkColumns(file string, line, n int) error {
	if n > maxColumns {
		return perr(file, line, "%d counter columns; at most %d are read (each costs about 130 bytes, plus 8 per sample)", n, maxColumns)
	}
	return nil
}

// maxNameBytes bounds a column name read from a file.
const maxNameBytes = 256

// uniqueColumns makes the column names usable as names: an empty one
// becomes value_J, one longer than maxNameBytes is cut, and a name that
// repeats an earlier column's gets _2 (_3, ...) appended, each change a
// warning at file:line (the header's line). Column j is input column
// first+step*j in messages. Readers call it once the columns are known, so
// that no column hides another (Col finds the first of equal names).
func (s *Series) uniqueColumns(file string, line, first, step int) {
	seen := make(map[string]int, len(s.Counters))
	for j := range s.Counters {
		c := &s.Counters[j]
		num := first + step*j
		if len(c.Name) > maxNameBytes {
			n := strings.ToValidUTF8(c.Name[:maxNameBytes], "")
			s.warnf(file, line, "column %d: name of %d bytes cut to its first %d", num, len(c.Name), len(n))
			c.Name = n
		}
		// After the cut too: a long name of invalid UTF-8 cuts to nothing.
		if c.Name == "" {
			c.Name = "value_" + strconv.Itoa(j)
			s.warnf(file, line, "column %d has no name; called %s", num, c.Name)
		}
		if k, dup := seen[c.Name]; dup {
			var n string
			for i := 2; ; i++ {
				suffix := "_" + strconv.Itoa(i)
				n = strings.ToValidUTF8(c.Name[:min(len(c.Name), maxNameBytes-len(suffix))], "") + suffix
				if _, taken := seen[n]; !taken {
					break
				}
			}
			s.warnf(file, line, "column %d repeats the name %s of column %d; renamed %s", num, clipped(c.Name), first+step*k, clipped(n))
			c.Name = n
		}
		seen[c.Name] = j
	}
	s.reindex()
}

// Len is the number of samples.
func (s *Series) Len() int { return len(s.SampleID) }

// Col returns the column of the named counter, or -1.
func (s *Series) Col(name string) int {
	if s.colIndex == nil {
		s.reindex()
	}
	if i, ok := s.colIndex[name]; ok {
		return i
	}
	return -1
}

// Sample returns sample i.
func (s *Series) Sample(i int) Sample {
	return Sample{Source: s.Source, Clock: s.Clock, SampleID: s.SampleID[i],
		StartNs: s.StartNs[i], EndNs: s.EndNs[i], Values: s.Row(i)}
}

// Row returns the values of sample i (aliasing storage).
func (s *Series) Row(i int) []uint64 {
	n := len(s.Counters)
	return s.Values[i*n : (i+1)*n : (i+1)*n]
}

// Value returns the raw value of column col in sample i.
func (s *Series) Value(i, col int) uint64 { return s.Values[i*len(s.Counters)+col] }

// Column copies column col into dst (reusing its storage): one raw value
// per sample, in the counter's Unit. Check Valid for unreadable values
// (stored as 0).
func (s *Series) Column(col int, dst []uint64) []uint64 {
	dst = dst[:0]
	n := len(s.Counters)
	for i := col; i < len(s.Values); i += n {
		dst = append(dst, s.Values[i])
	}
	return dst
}

// Times copies every sample's nominal time (TimeNs, ns on Clock) into dst.
func (s *Series) Times(dst []int64) []int64 {
	dst = dst[:0]
	for i := range s.StartNs {
		dst = append(dst, s.TimeNs(i))
	}
	return dst
}

// Valid reports whether sample i has a value for column col (false when the
// counter could not be read for that sample).
func (s *Series) Valid(i, col int) bool {
	if s.missing == nil {
		return true
	}
	b := i*len(s.Counters) + col
	return b>>6 >= len(s.missing) || s.missing[b>>6]&(1<<(b&63)) == 0
}

// TimeNs is sample i's nominal time, the middle of [StartNs, EndNs].
func (s *Series) TimeNs(i int) int64 { return s.StartNs[i] + (s.EndNs[i]-s.StartNs[i])/2 }

// Append adds a sample. values must have one entry per counter; they are
// copied.
func (s *Series) Append(sampleID uint64, startNs, endNs int64, values []uint64) {
	if len(values) != len(s.Counters) {
		panic(fmt.Sprintf("telemetry: Append with %d values for %d counters", len(values), len(s.Counters)))
	}
	s.SampleID = append(s.SampleID, sampleID)
	s.StartNs = append(s.StartNs, startNs)
	s.EndNs = append(s.EndNs, endNs)
	s.Values = append(s.Values, values...)
	if s.ValueNs != nil {
		for range values {
			s.ValueNs = append(s.ValueNs, startNs)
		}
	}
	if n := len(s.SampleID); n > 1 && s.TimeNs(n-1) < s.TimeNs(n-2) {
		s.unsorted = true
	}
}

// setLine records that sample i came from the given input line, for
// warnings found after reading (warnResets).
func (s *Series) setLine(i, line int) {
	for len(s.line) <= i {
		s.line = append(s.line, 0)
	}
	s.line[i] = int32(min(line, 1<<31-1))
}

// lineOf is the input line of sample i, 0 when not known.
func (s *Series) lineOf(i int) int {
	if i < len(s.line) {
		return int(s.line[i])
	}
	return 0
}

// SetMissing marks the value of column col in sample i as absent.
func (s *Series) SetMissing(i, col int) {
	b := i*len(s.Counters) + col
	need := (len(s.Values) + 63) >> 6
	if len(s.missing) < need {
		s.missing = append(s.missing, make([]uint64, need-len(s.missing))...)
	}
	s.missing[b>>6] |= 1 << (b & 63)
	s.Values[b] = 0
}

// SetReset records that every counter was reset between sample i-1 and
// sample i, the device having gone away and come back (the sidecar's
// "# reset" line): a delta ending at i, or spanning it, has FlagReset
// whatever the readings, since a counter that restarted can have grown
// past its old value. Samples are marked in order; i is the last so far.
func (s *Series) SetReset(i int) {
	if n := len(s.resets); n == 0 || s.resets[n-1] < i {
		s.resets = append(s.resets, i)
	}
}

// resetWithin reports whether a reset is recorded before a sample in
// (j, i].
func (s *Series) resetWithin(j, i int) bool {
	k := sort.SearchInts(s.resets, j+1)
	return k < len(s.resets) && s.resets[k] <= i
}

// LostBefore is how many samples the sample_id sequence skips between sample
// i-1 and sample i (0 for i == 0 and for consecutive ids).
func (s *Series) LostBefore(i int) uint64 {
	if i <= 0 || s.SampleID[i] <= s.SampleID[i-1] {
		return 0
	}
	return s.SampleID[i] - s.SampleID[i-1] - 1
}

// Lost is the total number of samples missing from the sample_id sequence.
func (s *Series) Lost() uint64 {
	var n uint64
	for i := 1; i < len(s.SampleID); i++ {
		n += s.LostBefore(i)
	}
	return n
}

// discontinuity reports a gap or restart of the sample_id sequence before i.
func (s *Series) discontinuity(i int) bool {
	return i > 0 && s.SampleID[i] != s.SampleID[i-1]+1
}

// recheckOrder recomputes unsorted after timestamps were edited in place.
func (s *Series) recheckOrder() {
	s.unsorted = false
	for i := 1; i < len(s.StartNs); i++ {
		if s.TimeNs(i) < s.TimeNs(i-1) {
			s.unsorted = true
			return
		}
	}
}

func (s *Series) setMeta(k, v string) {
	if s.Meta == nil {
		s.Meta = make(map[string]string, 4)
	}
	s.Meta[k] = v
}

func (s *Series) warnf(file string, line int, format string, args ...any) {
	s.warnTotal++
	if len(s.Warnings) >= maxWarnings {
		if len(s.Warnings) == maxWarnings {
			s.Warnings = append(s.Warnings, Warning{File: file, Line: line, Msg: "too many warnings; further ones dropped"})
		}
		return
	}
	s.Warnings = append(s.Warnings, Warning{File: file, Line: line, Msg: clipMsg(fmt.Sprintf(format, args...))})
}

// WarningTotal is how many problems the reader stepped over, counting those
// beyond the first maxWarnings that Warnings does not keep.
func (s *Series) WarningTotal() int { return max(s.warnTotal, len(s.Warnings)) }

const maxWarnings = 1000

// maxQuotedBytes bounds how much of a value from the input a message
// echoes, and maxMsgBytes a whole message: a 10 MB field must not become a
// 10 MB warning.
const (
	maxQuotedBytes = 64
	maxMsgBytes    = 1024
)

// quoted is v as %q shows it, cut to its first maxQuotedBytes bytes with
// the full length added when longer: "abc" becomes "\"abc\"", a 10 MiB
// field its first 64 bytes quoted and "…(10485760 bytes)".
func quoted[T ~string | ~[]byte](v T) string {
	if len(v) <= maxQuotedBytes {
		return strconv.Quote(string(v))
	}
	return strconv.Quote(string(v[:maxQuotedBytes])) + "…(" + strconv.Itoa(len(v)) + " bytes)"
}

// clipped is s cut as quoted cuts it, without the quotes: for names.
func clipped(s string) string {
	if len(s) <= maxQuotedBytes {
		return s
	}
	return s[:maxQuotedBytes] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// clipMsg cuts a message to maxMsgBytes, the last safeguard for text (a
// column name, an error from elsewhere) that was not quoted with quoted.
func clipMsg(m string) string {
	if len(m) <= maxMsgBytes {
		return m
	}
	return m[:maxMsgBytes] + "…(" + strconv.Itoa(len(m)) + " bytes)"
}

// Warning is a problem a reader stepped over.
type Warning struct {
	File string
	Line int // 1-based; 0 when the warning is about the whole file
	Msg  string
}

func (w Warning) String() string { return posString(w.File, w.Line) + w.Msg }

// ParseError is a problem a reader could not step over.
type ParseError struct {
	File string
	Line int // 1-based; 0 when about the whole file
	Msg  string
}

func (e *ParseError) Error() string { return "telemetry: " + posString(e.File, e.Line) + e.Msg }

func posString(file string, line int) string {
	switch {
	case file == "" && line == 0:
		return ""
	case line == 0:
		return file + ": "
	case file == "":
		return "line " + strconv.Itoa(line) + ": "
	}
	return file + ":" + strconv.Itoa(line) + ": "
}

func perr(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Msg: clipMsg(fmt.Sprintf(format, args...))}
}

package correlate

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/telemetry"
)

// Columns of the joined table, besides one triple per counter
// (NAME: raw reading, NAME_delta: increase over the interval in the counter's
// unit, NAME_rate: increase per second in its base unit, e.g. bytes/s for
// 4-byte-word counters; both null where the counter was reset) and the
// capture's statistics.
var joinedBaseFields = []arrow.Field{
	// The telemetry's sample_id closing the interval; null for --window rows.
	{Name: "sample_id", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	// The interval [start_ns, end_ns), on the capture's clock (the
	// telemetry's times plus the offset). Row 0 of a series has no interval
	// before it: start_ns == end_ns.
	{Name: "start_ns", Type: timestampNs},
	{Name: "end_ns", Type: timestampNs},
	{Name: "source", Type: arrow.BinaryTypes.String},                          // DEVICE/PORT, or the file name
	{Name: "clock", Type: arrow.BinaryTypes.String},                           // the telemetry's clock: host, nic_frc, nic_rtc, none
	{Name: "lost_samples", Type: arrow.PrimitiveTypes.Uint64, Nullable: true}, // sample_ids skipped just before this sample
	// How far to trust the deltas: the union of the counters' flags
	// (wrapped, reset, saturated, gap, missing, no_prev, no_time;
	// interpolated for --window); null when all is well.
	{Name: "delta_flags", Type: arrow.BinaryTypes.String, Nullable: true},
	// The fraction of the interval inside the capture's time range; the
	// capture columns are null when it is 0.
	{Name: "coverage", Type: arrow.PrimitiveTypes.Float64},
	// The interval overlaps the capture only partly (0 < coverage < 1).
	{Name: "partial", Type: arrow.FixedWidthTypes.Boolean},
}

// captureMetrics are the capture's per-interval statistics, each written as
// cap_NAME (every frame), cap_tx_NAME and cap_rx_NAME (frames the NIC sent
// and received; null when the capture does not say, see Options.Local).
var captureMetrics = []string{"packets", "bytes", "data_bytes", "ecn_ce", "cnps", "naks", "retransmissions"}

// captureIPD are the inter-packet delay percentiles, ns, per direction;
// null when the interval holds fewer than two packets of that direction.
var captureIPD = []string{"ipd_p50_ns", "ipd_p99_ns"}

var slotPrefix = [3]string{slotTx: "cap_tx_", slotRx: "cap_rx_", slotAll: "cap_"}

// joinedFields is the full column list for the given counters, named
// (see counterColumnNames) names[i] for counters[i]. Counter columns carry
// their unit as field metadata ("unit": "words4", "bytes/s", ...; "kind":
// "counter" or "gauge"), which pyarrow and Arrow JS expose.
func joinedFields(counters []telemetry.Counter, names []string) []arrow.Field {
	fields := append([]arrow.Field(nil), joinedBaseFields...)
	for i, c := range counters {
		base, _ := c.Unit.Base()
		kind := c.Kind.String()
		md := func(unit, what string) arrow.Metadata {
			return arrow.NewMetadata([]string{"unit", "kind", descriptionKey}, []string{unit, kind, what})
		}
		fields = append(fields,
			arrow.Field{Name: names[i], Type: arrow.PrimitiveTypes.Uint64, Nullable: true,
				Metadata: md(c.Unit.String(), "telemetry "+kind+" "+c.Name+": reading closing the interval, "+c.Unit.String())},
			arrow.Field{Name: names[i] + "_delta", Type: arrow.PrimitiveTypes.Uint64, Nullable: true,
				Metadata: md(c.Unit.String(), "increase of "+c.Name+" over the interval, "+c.Unit.String()+"; null where it was reset")},
			arrow.Field{Name: names[i] + "_rate", Type: arrow.PrimitiveTypes.Float64, Nullable: true,
				Metadata: md(base.String()+"/s", "increase of "+c.Name+" per second, "+base.String()+"/s; null where it was reset")})
	}
	for _, s := range [3]int{slotAll, slotTx, slotRx} {
		for _, m := range captureMetrics {
			fields = append(fields, arrow.Field{Name: slotPrefix[s] + m, Type: arrow.PrimitiveTypes.Uint64, Nullable: true})
		}
		for _, m := range captureIPD {
			fields = append(fields, arrow.Field{Name: slotPrefix[s] + m, Type: arrow.PrimitiveTypes.Int64, Nullable: true})
		}
	}
	fields = append(fields, congestionFields()...)
	return describe(fields)
}

// maxJoinedCounters bounds the counters of the joined table. Each is three
// columns and costs about 18 KB of writer state in Parquet (11 KB in Arrow
// IPC) however few the rows, plus its share of each batch (joinedBatchRows):
// at the limit some 20 MB plus 64 MB of batch. No telemetry_diag
// configuration of one NIC's ports needs more.
const maxJoinedCounters = 1024

// joinedBatchBytes bounds what one batch's counter columns hold while they
// are built and encoded: a wide table gets fewer rows per batch (and per
// Parquet row group) instead of BatchRows × its width.
const joinedBatchBytes = 64 << 20

// joinedBatchRows is the rows per batch of a joined table of the given
// counters: BatchRows, or fewer so that counters × 64 bytes (value, delta
// and rate, with the builders' room to grow) × rows stays within
// joinedBatchBytes, but never below 1024 rows.
func joinedBatchRows(counters int) int {
	return min(BatchRows, max(1024, joinedBatchBytes/(64*max(counters, 1))))
}

// checkJoinedWidth refuses telemetry with more distinct counters than the
// joined table takes.
func checkJoinedWidth(series []*inSeries, paths []string) error {
	if n := len(counterUnion(series)); n > maxJoinedCounters {
		return fmt.Errorf("%s: %d distinct telemetry counters; a joined table takes at most %d (each is three columns and some 18 KB of memory while writing): sample fewer counters or data IDs",
			strings.Join(paths, ", "), n, maxJoinedCounters)
	}
	return nil
}

// counterColumnNames names each counter's three columns (NAME, NAME_delta,
// NAME_rate) so that no column name appears twice in the table. A counter
// whose columns would repeat a fixed column (a CSV column called start_ns or
// cap_packets) or an earlier counter's (a counter a_delta before a counter
// a) is renamed tel_NAME (tel_NAME_2, ... if that is taken too); each
// renaming is reported in renamed.
func counterColumnNames(counters []telemetry.Counter) (names, renamed []string) {
	taken := make(map[string]bool, len(joinedBaseFields)+3*len(captureMetrics)+3*len(captureIPD)+3*len(counters))
	for _, f := range joinedFields(nil, nil) {
		taken[f.Name] = true
	}
	free := func(n string) bool { return !taken[n] && !taken[n+"_delta"] && !taken[n+"_rate"] }
	names = make([]string, len(counters))
	for i, c := range counters {
		n := c.Name
		if !free(n) {
			n = "tel_" + c.Name
			for k := 2; !free(n); k++ {
				n = "tel_" + c.Name + "_" + strconv.Itoa(k)
			}
			renamed = append(renamed, fmt.Sprintf("telemetry column %q would repeat a column name of the joined table; written as %q", c.Name, n))
		}
		taken[n], taken[n+"_delta"], taken[n+"_rate"] = true, true, true
		names[i] = n
	}
	return names, renamed
}

// counterUnion is the union of the series' counters by name, in first-seen
// order.
func counterUnion(series []*inSeries) []telemetry.Counter {
	var out []telemetry.Counter
	seen := map[string]bool{}
	for _, in := range series {
		for _, c := range in.s.Counters {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// joinedBuilder appends joined rows.
type joinedBuilder struct {
	rb                    *array.RecordBuilder
	sampleID              *array.Uint64Builder
	start, end            *array.TimestampBuilder
	source, clock         *array.StringBuilder
	lost                  *array.Uint64Builder
	flags                 *array.StringBuilder
	coverage              *array.Float64Builder
	partial               *array.BooleanBuilder
	value, delta          []*array.Uint64Builder
	rate                  []*array.Float64Builder
	metric                [3][]*array.Uint64Builder
	ipd                   [3][]*array.Int64Builder
	cong                  congestionBuilders
	rows                  int
	dirKnown              bool
	capFirstNs, capLastNs int64
}

func newJoinedBuilder(schema *arrow.Schema, counters int) *joinedBuilder {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	j := &joinedBuilder{rb: rb}
	i := 0
	next := func() array.Builder { i++; return rb.Field(i - 1) }
	j.sampleID = next().(*array.Uint64Builder)
	j.start, j.end = next().(*array.TimestampBuilder), next().(*array.TimestampBuilder)
	j.source, j.clock = next().(*array.StringBuilder), next().(*array.StringBuilder)
	j.lost = next().(*array.Uint64Builder)
	j.flags = next().(*array.StringBuilder)
	j.coverage = next().(*array.Float64Builder)
	j.partial = next().(*array.BooleanBuilder)
	for range counters {
		j.value = append(j.value, next().(*array.Uint64Builder))
		j.delta = append(j.delta, next().(*array.Uint64Builder))
		j.rate = append(j.rate, next().(*array.Float64Builder))
	}
	for _, s := range [3]int{slotAll, slotTx, slotRx} {
		for range captureMetrics {
			j.metric[s] = append(j.metric[s], next().(*array.Uint64Builder))
		}
		for range captureIPD {
			j.ipd[s] = append(j.ipd[s], next().(*array.Int64Builder))
		}
	}
	j.cong = newCongestionBuilders(next)
	return j
}

// appendCapture appends the capture columns of interval i of b.
func (j *joinedBuilder) appendCapture(b *binner, i int) {
	startNs, endNs, st := b.startNs[i], b.endNs[i], b.statsAt(i)
	cov := coverage(startNs, endNs, j.capFirstNs, j.capLastNs)
	j.coverage.Append(cov)
	j.partial.Append(cov > 0 && cov < 1)
	for s := range st {
		known := cov > 0 && (s == slotAll || j.dirKnown)
		d := &st[s]
		vals := [...]uint64{d.packets, d.bytes, d.dataBytes, d.ecnCE, d.cnps, d.naks, d.retrans}
		for k, b := range j.metric[s] {
			if known {
				b.Append(vals[k])
			} else {
				b.AppendNull()
			}
		}
		if known && d.ipdN > 0 {
			j.ipd[s][0].Append(d.ipdP50Ns)
			j.ipd[s][1].Append(d.ipdP99Ns)
		} else {
			j.ipd[s][0].AppendNull()
			j.ipd[s][1].AppendNull()
		}
	}
	j.cong.append(b, i, cov > 0)
}

// coverage is the fraction of [a, e) inside the capture's [first, last];
// a zero-length interval is covered when it lies inside.
func coverage(a, e, first, last int64) float64 {
	if e <= a {
		return 0
	}
	lo, hi := max(a, first), min(e, last+1) // the last packet's ns belongs to the capture
	if hi <= lo {
		return 0
	}
	return float64(hi-lo) / float64(e-a)
}

// appendFlags appends a delta_flags value.
func (j *joinedBuilder) appendFlags(f telemetry.DeltaFlags, extra string) {
	f &^= telemetry.FlagGauge
	s := ""
	if f != 0 {
		s = f.String()
	}
	if extra != "" {
		if s != "" {
			s += "|"
		}
		s += extra
	}
	if s == "" {
		j.flags.AppendNull()
	} else {
		j.flags.Append(s)
	}
}

// writeJoined writes every row: per series, one per sample (or per window).
func writeJoined(out string, series []*inSeries, sets []*binner, span captureSpan, opt Options, res *Result) error {
	counters := counterUnion(series)
	meta := map[string]string{
		"ibscope.table":     "correlate",
		"ibscope.window_ns": strconv.FormatInt(opt.WindowNs, 10),
	}
	maps.Copy(meta, span.meta)
	maps.Copy(meta, opt.Meta)
	for i, in := range series {
		k := "ibscope.series." + strconv.Itoa(i) + "."
		meta[k+"file"] = in.file
		meta[k+"source"] = in.source()
		meta[k+"offset_ns"] = strconv.FormatInt(in.offsetNs, 10)
		if in.estimate != nil {
			meta[k+"offset_r"] = strconv.FormatFloat(in.estimate.R, 'f', 4, 64)
		} else {
			meta[k+"offset_r"] = "given"
		}
	}
	names, renamed := counterColumnNames(counters)
	res.TelemetryWarning = append(res.TelemetryWarning, renamed...)
	schema := schemaWithMeta(joinedFields(counters, names), meta)
	w, err := CreateTable(out, opt.Format, schema)
	if err != nil {
		return err
	}
	defer w.Abort()
	j := newJoinedBuilder(schema, len(counters))
	defer j.rb.Release()
	j.dirKnown, j.capFirstNs, j.capLastNs = res.DirectionKnown, span.firstNs, span.lastNs
	batchRows := joinedBatchRows(len(counters))
	flush := func(force bool) error {
		if j.rows == 0 || (!force && j.rows < batchRows) {
			return nil
		}
		rec := j.rb.NewRecordBatch()
		defer rec.Release()
		res.Rows += int64(j.rows)
		j.rows = 0
		return w.Write(rec)
	}
	for _, in := range series {
		cols := make([]int, len(counters))
		for c, ctr := range counters {
			cols[c] = in.s.Col(ctr.Name)
		}
		if opt.WindowNs > 0 {
			err = j.windowRows(in, cols, sets[0], opt.WindowNs, flush)
		} else {
			err = j.sampleRows(in, cols, flush)
		}
		if err != nil {
			return err
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	return w.Commit()
}

// sampleRows appends one row per sample of the series.
func (j *joinedBuilder) sampleRows(in *inSeries, cols []int, flush func(bool) error) error {
	s := in.s
	src, clock := in.source(), s.Clock.String()
	for i := 0; i < s.Len(); i++ {
		j.sampleID.Append(s.SampleID[i])
		j.start.Append(arrow.Timestamp(in.set.startNs[i]))
		j.end.Append(arrow.Timestamp(in.set.endNs[i]))
		j.source.Append(src)
		j.clock.Append(clock)
		j.lost.Append(s.LostBefore(i))
		var flags telemetry.DeltaFlags
		for c, col := range cols {
			if col < 0 {
				j.value[c].AppendNull()
				j.delta[c].AppendNull()
				j.rate[c].AppendNull()
				continue
			}
			if s.Valid(i, col) {
				j.value[c].Append(s.Value(i, col))
			} else {
				j.value[c].AppendNull()
			}
			d := s.Delta(i, col)
			flags |= d.Flags
			// A reset's increase is unknown: null, with "reset" in delta_flags.
			if d.Flags&(telemetry.FlagNoPrev|telemetry.FlagGauge|telemetry.FlagReset) != 0 {
				j.delta[c].AppendNull()
			} else {
				j.delta[c].Append(d.Value)
			}
			if d.Flags&(telemetry.FlagNoPrev|telemetry.FlagNoTime|telemetry.FlagGauge|telemetry.FlagReset) != 0 {
				j.rate[c].AppendNull()
			} else {
				_, f := s.Counters[col].Unit.Base()
				j.rate[c].Append(float64(d.Value) * float64(f) / d.Seconds())
			}
		}
		j.appendFlags(flags, "")
		j.appendCapture(in.set, i)
		j.rows++
		if err := flush(false); err != nil {
			return err
		}
	}
	return nil
}

// windowRows appends one row per window that the series' samples reach:
// counter increases interpolated linearly between samples at the window
// edges, values as last read at or before the window's end.
func (j *joinedBuilder) windowRows(in *inSeries, cols []int, wins *binner, windowNs int64, flush func(bool) error) error {
	s := in.s
	src, clock := in.source(), s.Clock.String()
	cum := cumulative(s)
	first, last := in.times[0], in.times[len(in.times)-1]
	secs := float64(windowNs) / 1e9
	for k := range wins.startNs {
		a, e := wins.startNs[k], wins.endNs[k]
		if e <= first || a > last {
			continue
		}
		j.sampleID.AppendNull()
		j.start.Append(arrow.Timestamp(a))
		j.end.Append(arrow.Timestamp(e))
		j.source.Append(src)
		j.clock.Append(clock)
		j.lost.AppendNull()
		at := lastAtOrBefore(in.times, e-1)
		for c, col := range cols {
			if col < 0 || at < 0 || !s.Valid(at, col) {
				j.value[c].AppendNull()
			} else {
				j.value[c].Append(s.Value(at, col))
			}
			var ca, ce float64
			okA, okE := false, false
			if col >= 0 && cum[col] != nil {
				ca, okA = interpolate(in.times, cum[col], a)
				ce, okE = interpolate(in.times, cum[col], e)
			}
			if !okA || !okE {
				j.delta[c].AppendNull()
				j.rate[c].AppendNull()
				continue
			}
			d := ce - ca
			j.delta[c].Append(uint64(d + 0.5))
			_, f := s.Counters[col].Unit.Base()
			j.rate[c].Append(d * float64(f) / secs)
		}
		j.appendFlags(0, "interpolated")
		j.appendCapture(wins, k)
		j.rows++
		if err := flush(false); err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ibscope/ibscope/correlate"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/plots"
)

// maxPlotSources bounds the telemetry sources a correlate plot draws:
// each adds two lines to the legend.
const maxPlotSources = 6

// plotCorrelate draws the joined table: the packets the capture holds per
// second of each row's interval above the packet counters of each joined
// port (bytes where no port counts packets), over time since the first
// packet. It reads the table back from -o when that is a regular Parquet
// or Arrow file; otherwise (text formats, standard output, a device or
// FIFO) it joins again into a temporary Arrow file, reading the captures
// once more.
func plotCorrelate(captures, telemetryFiles []string, opt correlate.Options, res correlate.Result, out, path string) error {
	table := out
	fi, err := os.Stat(out)
	readable := err == nil && fi.Mode().IsRegular() && !outfile.IsStdout(out)
	if !readable || (opt.Format != correlate.FormatParquet && opt.Format != correlate.FormatArrow) {
		dir, err := os.MkdirTemp("", "ibanalyze-plot-")
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		defer os.RemoveAll(dir)
		table = filepath.Join(dir, "joined.arrow")
		again := opt
		again.Format, again.Progress, again.OnDecodeError = correlate.FormatArrow, nil, nil
		if _, err := correlate.Correlate(captures, telemetryFiles, table, again); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		opt.Format = correlate.FormatArrow
	}
	tbl, err := readJoined(table, opt.Format)
	if err != nil {
		return fmt.Errorf("plot: read %s back: %w", table, err)
	}
	defer tbl.Release()
	return plotJoined(tbl, res.CaptureFirstNs, path)
}

// readJoined reads a Parquet or Arrow IPC file as one table.
func readJoined(path string, format correlate.Format) (arrow.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if format == correlate.FormatParquet {
		return pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(memory.DefaultAllocator),
			pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	}
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, err
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return array.NewTableFromRecords(r.Schema(), recs), nil
}

// joinedColumn is a column's values as float64 (NaN where null), or
// nil when the table has no such numeric column.
func joinedColumn(tbl arrow.Table, name string) []float64 {
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil
	}
	out := make([]float64, 0, tbl.NumRows())
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		for i := range c.Len() {
			v := math.NaN()
			if c.IsValid(i) {
				switch a := c.(type) {
				case *array.Uint64:
					v = float64(a.Value(i))
				case *array.Int64:
					v = float64(a.Value(i))
				case *array.Float64:
					v = a.Value(i)
				case *array.Timestamp:
					v = float64(a.Value(i))
				default:
					return nil
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// joinedSources is the source column's values.
func joinedSources(tbl arrow.Table) []string {
	idx := tbl.Schema().FieldIndices("source")
	if len(idx) != 1 {
		return nil
	}
	var out []string
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		for i := range c.Len() {
			out = append(out, c.ValueStr(i))
		}
	}
	return out
}

// counterRates picks the counter rate columns to draw: those counting
// packets, else those counting bytes; packets says which.
func counterRates(tbl arrow.Table) (cols []string, packets bool) {
	var pk, by []string
	for _, f := range tbl.Schema().Fields() {
		n := f.Name
		if !strings.HasSuffix(n, "_rate") || strings.HasPrefix(n, "cap_") {
			continue
		}
		switch base := strings.TrimSuffix(n, "_rate"); {
		case strings.Contains(base, "packets") || strings.Contains(base, "pkts"):
			pk = append(pk, n)
		case strings.Contains(base, "data") || strings.Contains(base, "bytes"):
			by = append(by, n)
		}
	}
	if len(pk) > 0 {
		return pk, true
	}
	return by, false
}

func plotJoined(tbl arrow.Table, firstNs int64, path string) error {
	start, end, sources := joinedColumn(tbl, "start_ns"), joinedColumn(tbl, "end_ns"), joinedSources(tbl)
	if start == nil || end == nil || len(sources) != len(start) || len(start) == 0 {
		return fmt.Errorf("%w: no joined rows", plots.ErrNothingToPlot)
	}
	rates, packets := counterRates(tbl)
	capCol, capLabel, counterLabel := "cap_packets", "captured (packets/s)", "counters (packets/s)"
	if !packets {
		capCol, capLabel, counterLabel = "cap_bytes", "captured (bytes/s)", "counters (bytes/s)"
	}
	captured := joinedColumn(tbl, capCol)
	var order []string // sources in the order the table first names them
	for _, s := range sources {
		if !slices.Contains(order, s) {
			order = append(order, s)
		}
	}
	if len(order) > maxPlotSources {
		warnf("--plot draws the first %d of %d telemetry sources: more would be unreadable", maxPlotSources, len(order))
		order = order[:maxPlotSources]
	}
	sec := func(ns float64) float64 { return (ns - float64(firstNs)) / 1e9 }
	// step draws v over each of src's rows' intervals.
	step := func(name, src string, v func(i int) float64) plots.Line {
		l := plots.Line{Name: name}
		for i := range start {
			d := (end[i] - start[i]) / 1e9
			if sources[i] != src || !(d > 0) {
				continue
			}
			y := v(i)
			if math.IsNaN(y) {
				continue
			}
			l.XS, l.YS = append(l.XS, sec(start[i]), sec(end[i])), append(l.YS, y, y)
		}
		return l
	}
	capPanel := plots.Panel{YLabel: capLabel}
	if captured != nil {
		// Every source's rows count the same capture, on their own intervals:
		// the first source's are drawn.
		capPanel.Lines = append(capPanel.Lines, step("captured "+strings.TrimPrefix(capCol, "cap_")+" ("+order[0]+"'s intervals)", order[0],
			func(i int) float64 { return captured[i] / ((end[i] - start[i]) / 1e9) }))
	}
	counters := plots.Panel{YLabel: counterLabel}
	for _, src := range order {
		for _, col := range rates {
			vs := joinedColumn(tbl, col)
			if vs == nil {
				continue
			}
			l := step(src+" "+strings.TrimSuffix(col, "_rate"), src, func(i int) float64 { return vs[i] })
			if len(l.XS) > 0 {
				counters.Lines = append(counters.Lines, l)
			}
		}
	}
	panels := []plots.Panel{capPanel, counters}
	if len(counters.Lines) == 0 {
		panels = panels[:1]
	}
	// The time axis starts at the first packet (0), also when the first
	// joined interval starts after it (an offset moved the counters).
	from, to := 0.0, 0.0
	for i := range start {
		from, to = min(from, sec(start[i])), max(to, sec(end[i]))
	}
	return plots.Draw(path, plots.Figure{Title: "capture beside telemetry counters: " + strings.Join(order, ", "), Panels: panels, From: from, To: to})
}

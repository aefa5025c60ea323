package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ibscope/ibscope/correlate"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/telemetry"
	"github.com/spf13/cobra"
)

type correlateOpts struct {
	telemetry     []string
	out           string
	plot          string
	format        string
	offset        string
	rowSpanNs     units.DurationNs
	local         string
	dataIDs       string
	clearOnSample bool
	json          bool
	source        string
	rate          rateFlag
	ports         []string
	maxValues     int64
}

// correlateHelp is correlate's --help text: the rows and columns, the
// telemetry files, the clock offset, which ports are joined, and reading
// the result.
var correlateHelp = `correlate writes one row per telemetry sample interval and source (or per
fixed --row-span): sample_id, start_ns, end_ns (timestamp[ns], UTC, on the
capture's clock), source, each counter's value, NAME_delta (in the counter's
unit) and NAME_rate (per second, in its base unit: bytes/s for 4-byte-word
counters), and what the capture shows in the same interval: cap_packets,
cap_bytes (frame bytes), cap_data_bytes (message payload), cap_ecn_ce (IP ECN
CE for RoCE, FECN for native IB), cap_cnps, cap_naks, cap_retransmissions
(a PSN its QP direction sent before, requests and responses apart, as
flows counts duplicates), cap_ipd_p50_ns and cap_ipd_p99_ns
(inter-packet delay percentiles), and the same per
direction as cap_tx_* and cap_rx_*: from what the capture records (pcapng
epb_flags; ERF interface 0 sent, 1 received, as ibsim and ibcap write it; a
Linux cooked capture's packet type), or, for captures that do not say, from --local. A packet belongs to
the interval holding its timestamp; coverage and partial flag intervals the
capture covers only in part.

Telemetry files are DOCA telemetry_diag CSV, ibscope sidecars (ibcap
--telemetry) or perfquery text. ` + perfqueryHelp + `

The clock offset (capture time = telemetry
time + offset) is --offset, or estimated per source by cross-correlating the
capture's byte rate with the telemetry's byte counters (its packet rate with
the packet counters where there are no byte counters, as on SoftRoCE:
sent_pkts, rcvd_pkts) and printed with its confidence (the Pearson
correlation r of the interval counts).
Telemetry that does not overlap the capture in time is refused.

Which ports are joined: those named by --port (as the source column writes
them: DEVICE/PORT, lid:N/PORT for perfquery, or the file's name for a file
that names no port); otherwise
the ports the capture saw, those whose counters follow the capture's
(r >= 0.8 at the offset, estimated or given), the others listed as skipped
with their evidence. When no port's counters follow the capture, all are
joined, each with a warning. A given offset is printed with its evidence too.
Each estimate is labelled by its evidence: clear (r >= 0.8, no other offset
nearly as good), ambiguous (another offset two samples or more away leaves
less than twice as much unexplained, 1 - r^2, plus 0.01: regular traffic)
or weak (r < 0.8); ambiguous and weak ones are warned about.

Read the result with pandas (2.x, with pyarrow) or DuckDB:
  df = pd.read_parquet("joined.parquet")
  df.plot(x="cap_bytes", y="port_xmit_data_rate", kind="scatter")
  df = duckdb.sql("select * from 'joined.parquet'").df()
The format follows the extension of -o (.parquet, .arrow, .csv, .jsonl) or
--format. ` + textFormatsHelp + `

` + selectHelp + `The selection chooses what the cap_* columns count; the capture's time
range and the clock offset still come from every packet, since the
counters count them all.`

func init() {
	var o correlateOpts
	cmd := &cobra.Command{
		Use:   "correlate CAPTURE... --telemetry FILE... -o OUT.parquet|OUT.arrow|OUT.csv|OUT.jsonl",
		Short: "Join NIC telemetry with the capture on one time axis, as Parquet, Arrow, CSV or JSON Lines",
		Long:  correlateHelp,
		Example: `  ibanalyze correlate out.pcap --telemetry diag.csv --data-ids ids.json -o joined.parquet
  ibanalyze correlate out.pcap --telemetry out.pcap.telemetry.csv --row-span 1ms -o joined.arrow
  ibanalyze correlate s1.pcapng --telemetry perfquery.txt -o joined.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = dashIsStdout(o.out)
			out := cmd.OutOrStdout()
			if outfile.IsStdout(o.out) {
				out = cmd.ErrOrStderr() // the rows go to stdout
			}
			return runCorrelate(out, args, o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.telemetry, "telemetry", nil, "telemetry `FILE`s (repeat or comma-separate)")
	f.StringVarP(&o.out, "output", "o", "", "output `FILE`: .parquet, .arrow, .csv or .jsonl (- for standard output, with --format)")
	f.StringVar(&o.plot, "plot", "", "draw the captured packets above the ports' packet counters over time to `FILE` (.png, .svg, .pdf)")
	f.StringVar(&o.format, "format", "", correlate.FormatNames+" (default: from the extension of -o: .parquet, .arrow, .csv, .jsonl)")
	f.StringVar(&o.offset, "offset", "auto", "clock offset, capture time = telemetry time + `OFFSET` (-1.5ms, 250us, ns), or auto to estimate it")
	f.Var(&o.rowSpanNs, "row-span", "one row per fixed span of time of this `DURATION` (e.g. 1ms) instead of one per telemetry interval")
	// --window was this flag's first name; ipd's and flows' --window is a
	// number of packets.
	f.Var(&o.rowSpanNs, "window", "")
	_ = f.MarkDeprecated("window", "use --row-span")
	f.StringVar(&o.local, "local", "", "the NIC's IP addresses, GIDs or LIDs (`LIST`), to split packets into sent and received")
	f.StringVar(&o.dataIDs, "data-ids", "", "DOCA telemetry_diag data-IDs `JSON` naming the CSV's columns")
	f.BoolVar(&o.clearOnSample, "clear-on-sample", false, "the telemetry_diag capture cleared counters at each sample (\"data clear\")")
	f.StringVar(&o.source, "source", "", "`DEVICE/PORT` the telemetry describes, for files that do not say (telemetry_diag CSV; without it their rows carry the file's name as source)")
	f.StringArrayVar(&o.ports, "port", nil, "join only this telemetry `DEVICE/PORT` (repeatable; default: the ports the capture saw)")
	f.BoolVar(&o.json, "json", false, "print the summary (rows, offsets and their confidence) as JSON")
	addRateFlag(f, &o.rate, "PFC/PAUSE quanta count at for cap_paused_ns_p*, as pfc's", "100G")
	f.StringVar(&o.rate.rate, "pause-rate", "", "the same as --rate")
	_ = f.MarkDeprecated("pause-rate", "use --rate, as every command that needs a link rate")
	f.Int64Var(&o.maxValues, "max-telemetry-values", correlate.DefaultMaxTelemetryValues,
		"refuse telemetry of more than `N` values, all files together (samples × (counters + 3); ~40 bytes each while correlating)")
	addSelectFlags(f, &selected, true)
	cmd.MarkFlagRequired("telemetry")
	cmd.MarkFlagRequired("output")
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runCorrelate(stdout io.Writer, captures []string, o correlateOpts) error {
	opt, err := correlateOptions(captures, o)
	if err != nil {
		return err
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	// correlate reads its captures twice (time range and byte rate, then the join).
	if captures, err = spoolStdin(captures, "correlate reads its captures twice"); err != nil {
		return err
	}

	var size int64
	for _, c := range captures {
		if fi, err := os.Stat(c); err == nil {
			size += fi.Size()
		}
	}
	prog := newProgress("correlate", size, o.json)
	opt.Progress = prog.update
	var dw decodeWarnings
	opt.OnDecodeError = dw.warn
	start := time.Now()
	res, err := correlate.Correlate(captures, o.telemetry, o.out, opt)
	prog.done()
	for i, w := range res.TelemetryWarning {
		if i == maxWarnings {
			warnf("%s not shown", units.Count(len(res.TelemetryWarning)-maxWarnings, "more telemetry warning"))
			break
		}
		warnf("%s", w)
	}
	if err != nil {
		return withCorrelateFlag(err)
	}
	if dw.n > maxWarnings {
		warnf("%d frames could not be decoded (first %d shown); they are counted with what could be decoded", dw.n, maxWarnings)
	}
	if !res.DirectionKnown {
		warnf("the capture does not say which packets the NIC sent: cap_tx_* and cap_rx_* are null; give --local ADDR")
	}
	if res.LateIPDs > 0 {
		warnf("%s out of time order: counted, but their inter-packet delays left out", units.CountVerb(res.LateIPDs, "packet", "was", "were"))
	}
	// The summary first: a picture with nothing to draw leaves it.
	if o.json {
		if err := writeJSON(stdout, correlateSummary(res, time.Since(start))); err != nil {
			return err
		}
	} else {
		printSeries(stdout, res)
		unselected := ""
		if res.NotSelected > 0 {
			unselected = fmt.Sprintf(" (%d more not selected)", res.NotSelected)
		}
		fmt.Fprintf(stdout, "%s: %s from %s%s, %.2f s\n", termtext.Escape(res.Path), units.Count(res.Rows, "row"), units.Count(res.Frames, "frame"), unselected, time.Since(start).Seconds())
	}
	if o.plot != "" {
		return plotCorrelate(captures, o.telemetry, opt, res, o.out, o.plot)
	}
	return nil
}

// correlateOptions turns the flags into correlate.Options, each value
// range-checked.
func correlateOptions(captures []string, o correlateOpts) (correlate.Options, error) {
	if o.maxValues < 1 || o.maxValues > correlate.MaxMaxTelemetryValues {
		return correlate.Options{}, fmt.Errorf("--max-telemetry-values %d: want 1 to %d", o.maxValues, int64(correlate.MaxMaxTelemetryValues))
	}
	opt := correlate.Options{WindowNs: int64(o.rowSpanNs), Meta: commandMeta(), Ports: o.ports, MaxTelemetryValues: o.maxValues}
	var err error
	if opt.Workers, err = workers(false); err != nil {
		return opt, err
	}
	if o.format != "" {
		opt.Format, err = correlate.ParseFormat(o.format)
	} else {
		opt.Format, err = correlate.FormatFromPath(o.out)
	}
	if err != nil {
		return opt, err
	}
	if o.rowSpanNs < 0 {
		return opt, fmt.Errorf("--row-span %s: must be positive", o.rowSpanNs)
	}
	if o.offset != "auto" {
		if opt.OffsetNs, err = units.ParseDurationNs(o.offset); err != nil {
			return opt, fmt.Errorf("--offset: %w", err)
		}
		opt.OffsetGiven = true
	}
	if opt.Local, err = correlate.ParseLocal(o.local); err != nil {
		return opt, fmt.Errorf("--local: %w", err)
	}
	if r, _, ok, err := o.rate.resolve(captures); err != nil {
		return opt, err
	} else if ok {
		opt.PauseBitsPerSec = r.BitsPerSec()
	}
	topt := &telemetry.Options{ClearOnSample: o.clearOnSample}
	if o.source != "" {
		if topt.Source, err = telemetry.ParseSource(o.source); err != nil {
			return opt, err
		}
	}
	if o.dataIDs != "" {
		if topt.DataIDs, err = telemetry.ReadDataIDsFile(o.dataIDs); err != nil {
			return opt, err
		}
	}
	opt.Telemetry = topt
	if opt.Select, err = selected.selection(); err != nil {
		return opt, err
	}
	return opt, nil
}

// printSeries says, for each telemetry series, the offset it was joined at
// and the evidence for it, warning where that is weak; then the series not
// joined and why.
func printSeries(stdout io.Writer, res correlate.Result) {
	for _, s := range res.Series {
		label := seriesLabel(s.File, s.Source)
		if s.Estimate == nil {
			ev := "its counters could not be checked against the capture: " + s.NoEvidence
			if e := s.Evidence; e != nil {
				ev = fmt.Sprintf("r = %.3f over %d matched intervals of %s", e.R, e.Intervals, strings.Join(e.Counters, ", "))
			}
			fmt.Fprintf(stdout, "%s: offset %s (given), %s\n", termtext.Escape(label), units.FormatSignedNs(s.OffsetNs), termtext.Escape(ev))
			if e := s.Evidence; e != nil && !(e.R >= correlate.MinFollowR) {
				warnf("%s: the counters hardly follow the capture at the given offset (r = %.3f, below %.1f); check it", label, e.R, correlate.MinFollowR)
			}
			if b := s.Better; b != nil {
				warnf("%s: the counters follow the capture clearly better at %s (r = %.3f) than at the given %s (r = %.3f); check --offset",
					label, units.FormatSignedNs(b.OffsetNs), b.R, units.FormatSignedNs(s.OffsetNs), s.Evidence.R)
			}
			continue
		}
		e := s.Estimate
		fmt.Fprintf(stdout, "%s: offset %s estimated, %s: r = %.3f over %d matched intervals of %s (next best %s, r = %.3f; grid %s)\n",
			termtext.Escape(label), units.FormatSignedNs(e.OffsetNs), e.Quality(), e.R, e.Intervals, termtext.Escape(strings.Join(e.Counters, ", ")),
			units.FormatSignedNs(e.NextOffsetNs), e.NextR, units.FormatNs(e.ResolutionNs))
		if q := e.Quality(); q != correlate.OffsetClear {
			warnf("%s: the offset estimate is %s: %s; check it, or give --offset", label, q, e.Why())
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(stdout, "%s\n", termtext.Escape(fmt.Sprintf("%s: not joined: %s (name it with --port %s to join it)", seriesLabel(s.File, s.Source), s.Reason, s.Source)))
	}
}

// seriesLabel names a series in messages: its file and source, the source
// left out when it is only the file's name.
func seriesLabel(file, source string) string {
	if source == filepath.Base(file) {
		return file
	}
	return file + " " + source
}

// correlateSummary is the --json output: keys snake_case, times in ns.
func correlateSummary(res correlate.Result, took time.Duration) map[string]any {
	var series []map[string]any
	for _, s := range res.Series {
		m := map[string]any{"file": s.File, "source": s.Source, "clock": s.Clock, "offset_ns": s.OffsetNs,
			"offset_estimated": s.Estimate != nil}
		if e := s.Evidence; e != nil {
			m["r"], m["intervals"], m["counters"], m["counted"] = e.R, e.Intervals, e.Counters, map[bool]string{false: "bytes", true: "packets"}[e.Packets]
		} else {
			m["no_evidence"] = s.NoEvidence
		}
		if b := s.Better; b != nil {
			m["better_offset_ns"], m["better_r"] = b.OffsetNs, b.R
		}
		if e := s.Estimate; e != nil {
			m["next_offset_ns"], m["next_r"], m["resolution_ns"] = e.NextOffsetNs, e.NextR, e.ResolutionNs
			m["quality"], m["why"] = e.Quality().String(), e.Why()
		}
		series = append(series, m)
	}
	skipped := []map[string]any{}
	for _, s := range res.Skipped {
		m := map[string]any{"file": s.File, "source": s.Source, "reason": s.Reason}
		if e := s.Estimate; e != nil {
			m["offset_ns"] = e.OffsetNs
		}
		if e := s.Evidence; e != nil {
			m["r"], m["intervals"] = e.R, e.Intervals
		}
		skipped = append(skipped, m)
	}
	return map[string]any{"output": res.Path, "rows": res.Rows, "frames": res.Frames, "not_selected": res.NotSelected, "decode_errors": res.DecodeErrors,
		"capture_first_ns": res.CaptureFirstNs, "capture_last_ns": res.CaptureLastNs, "direction_known": res.DirectionKnown,
		"late_ipds": res.LateIPDs, "series": series, "skipped": skipped, "seconds": took.Seconds()}
}

// correlateFlags maps the correlate.Options fields an OptionError names to
// the flags that set them.
var correlateFlags = map[string]string{"OffsetNs": "--offset", "WindowNs": "--row-span", "Ports": "--port"}

// withCorrelateFlag says which flag to change when err is about an option's
// value ("...; give the offset with --offset").
func withCorrelateFlag(err error) error {
	var oe *correlate.OptionError
	if errors.As(err, &oe) && correlateFlags[oe.Field] != "" {
		return fmt.Errorf("%w with %s", err, correlateFlags[oe.Field])
	}
	return err
}

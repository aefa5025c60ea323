package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ibscope/ibscope/correlate"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type exportOpts struct {
	out         string
	format      string
	partitionBy string
	json        bool
	noCRC       bool
}

func init() {
	var o exportOpts
	cmd := &cobra.Command{
		Use:   "export CAPTURE... -o packets.parquet|packets.arrow|packets.csv|packets.jsonl",
		Short: "Write one row per frame (the decode contract's fields) as Parquet, Arrow, CSV or JSON Lines",
		Long: `export writes every frame of a capture as one row with the fields of
"ibanalyze decode --json": nested headers flattened (reth_va, aeth_msn, ...),
absent headers as nulls, ts_ns as timestamp[ns] (UTC, stored without a zone
so that DuckDB and pandas keep the ns), then what the capture file records:
cap_len, iface, direction (tx/rx, or null when the file does not say) and
file (the capture's name, which tells several captures apart);
zstd-compressed, in row groups of 65536 rows (Parquet's are encoded on
every core while the next rows are decoded, on one core unless -j says
otherwise). Each column carries a description in its field metadata; the file's metadata holds the captures'
names, link types and timestamp resolution and this command line. The format follows the extension of -o (.parquet,
.arrow, .csv, .jsonl) or --format.
` + textFormatsHelp + `
With --partition-by, -o names a directory that receives a Hive-style
partitioned Parquet dataset, e.g. --partition-by host=node17,date,transport
writes OUT/host=node17/date=2026-11-22/transport=rocev2/part-CAPTURE.parquet;
run export on each host's capture into the same OUT and query them together:
  duckdb -c "SELECT host, count(*) FROM read_parquet('OUT/**/*.parquet', hive_partitioning=true) GROUP BY host"
Keys: date and hour (UTC, of ts_ns), transport, or NAME=VALUE constants.

Files appear under their final names only once complete; a device or FIFO
(-o /dev/null) is written through, a symbolic link refused. A partition file
that already exists (an earlier export of a capture of the same name) is
never replaced: the export is refused. Frames that cannot be decoded still
get a row, with the reason in the error column. Several captures (the pieces
of a rotated capture) are merged in time order into one table; - reads
standard input.

` + selectHelp + `Only the frames selected get a row.`,
		Example: `  ibanalyze export out.pcap -o packets.parquet
  ibanalyze export out.pcap -o packets.csv      or .jsonl: pandas without pyarrow
  ibanalyze export out.pcap --partition-by date,hour,host=node17 -o dataset/
  ibanalyze export -Y 'udp_src_port in {49152, 49153} and not fecn' out.pcap -o p.parquet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = dashIsStdout(o.out)
			return runExport(cmd, args, o)
		},
	}
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "output `FILE` (.parquet, .arrow, .csv or .jsonl; - for standard output, with --format), or directory with --partition-by")
	cmd.Flags().StringVar(&o.format, "format", "", correlate.FormatNames+" (default: from the extension of -o: .parquet, .arrow, .csv, .jsonl; parquet for datasets)")
	cmd.Flags().StringVar(&o.partitionBy, "partition-by", "", "write a Hive-style dataset partitioned by `KEYS` (date, hour, transport, NAME=VALUE)")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary (rows, files) as JSON")
	addSelectFlags(cmd.Flags(), &selected, true)
	cmd.Flags().BoolVar(&o.noCRC, "no-crc", false, "do not verify ICRC/VCRC/LPCRC (icrc_ok, vcrc_ok, link_lpcrc_ok are null)")
	cmd.MarkFlagRequired("output")
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runExport(cmd *cobra.Command, captures []string, o exportOpts) error {
	opt, err := exportOptions(o)
	if err != nil {
		return err
	}
	var size int64
	for _, c := range captures {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
	}
	capture := strings.Join(captures, ", ")
	prog := newProgress(capture, size, o.json)
	opt.Progress = prog.update
	var dw decodeWarnings
	opt.OnDecodeError = dw.warn
	start := time.Now()
	st, err := correlate.Export(captures, o.out, opt)
	prog.done()
	if err != nil && st.FileErrors == 0 {
		return err
	}
	if err != nil { // damaged captures: the rows before the damage are written, and summed up
		warnf("%v", err)
		err = errReported
	}
	if dw.n > maxWarnings {
		warnf("%s: %d frames could not be decoded (first %d shown); each has a row with the reason in the error column", capture, dw.n, maxWarnings)
	}
	secs := time.Since(start).Seconds()
	w := cmd.OutOrStdout()
	if outfile.IsStdout(o.out) {
		w = cmd.ErrOrStderr() // the rows went to stdout
	}
	if werr := writeExportSummary(w, o, len(opt.PartitionBy) > 0, st, secs); werr != nil {
		return werr
	}
	return err
}

// exportOptions turns export's flags into correlate's options, refusing
// a format or partitioning that cannot be written before any capture is
// read. The format comes from --format, else from -o's extension; a
// partitioned dataset (-o a directory) has no extension to tell, so
// there it is --format or Parquet (Format's zero value).
func exportOptions(o exportOpts) (correlate.ExportOptions, error) {
	opt := correlate.ExportOptions{NoCRC: o.noCRC, Meta: commandMeta(), Map: true}
	var err error
	if opt.Workers, err = workers(true); err != nil {
		return opt, err
	}
	if opt.Select, err = selected.selection(); err != nil {
		return opt, err
	}
	switch {
	case o.format != "":
		if opt.Format, err = correlate.ParseFormat(o.format); err != nil {
			return opt, err
		}
	case o.partitionBy == "":
		if opt.Format, err = correlate.FormatFromPath(o.out); err != nil {
			return opt, err
		}
	}
	// Without -j, a Parquet export decodes on the command's own goroutine:
	// its writer encodes the columns on the other cores, and decoding ahead
	// on them hands every frame (1.7 KB) from core to core, which cost more
	// than it saved (the 2M-frame RoCEv2 file on 2 cores: 0.28 s wall and
	// 0.41 s CPU decoding on one goroutine against 0.36 and 0.68 on two).
	if !jobs.set && opt.Format == correlate.FormatParquet {
		opt.Workers = 1
	}
	if o.partitionBy != "" {
		if opt.Format != correlate.FormatParquet && opt.Format != correlate.FormatArrow {
			return opt, fmt.Errorf("--partition-by writes a Parquet or Arrow dataset, not %s", opt.Format)
		}
		if opt.PartitionBy, err = correlate.ParsePartitionBy(o.partitionBy); err != nil {
			return opt, fmt.Errorf("--partition-by: %w", err)
		}
		if fi, err := os.Stat(o.out); err == nil && !fi.IsDir() {
			return opt, fmt.Errorf("%s: with --partition-by, -o names a directory", o.out)
		}
	}
	return opt, nil
}

// writeExportSummary prints what export wrote, as JSON with --json or
// as one line (and, for a partitioned dataset, its files one a line).
// Its error is only the writing's: export's own goes back to the caller.
func writeExportSummary(w io.Writer, o exportOpts, partitioned bool, st correlate.ExportStats, secs float64) error {
	if o.json {
		return writeJSON(w, map[string]any{"output": o.out, "rows": st.Frames, "decode_errors": st.DecodeErrors, "file_errors": st.FileErrors,
			"not_selected": st.NotSelected, "files": st.Files, "seconds": secs})
	}
	damaged := ""
	if st.FileErrors > 0 {
		damaged = fmt.Sprintf(", %d damaged capture(s) not read to the end", st.FileErrors)
	}
	if partitioned {
		fmt.Fprintf(w, "%s: %s in %s (%s not decoded%s), %.2f s\n", termtext.Escape(o.out), units.Count(st.Frames, "row"), units.Count(len(st.Files), "file"),
			units.Count(st.DecodeErrors, "frame"), damaged, secs)
		for _, f := range st.Files {
			fmt.Fprintf(w, "  %s\n", f)
		}
		return nil
	}
	fmt.Fprintf(w, "%s: %s (%s not decoded%s), %.2f s\n", o.out, units.Count(st.Frames, "row"), units.Count(st.DecodeErrors, "frame"), damaged, secs)
	return nil
}

// dashIsStdout is the output path for -o: "-" is standard output, as
// tcpdump's -w - (not a file named "-" in the working directory).
func dashIsStdout(path string) string {
	if path == "-" {
		return "/dev/stdout"
	}
	return path
}

// commandMeta is the metadata that records, in the files written, the
// command line that wrote them.
func commandMeta() map[string]string {
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		args[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"$\\") {
			args[i] = strconv.Quote(a)
		}
	}
	return map[string]string{"ibscope.command": strings.Join(args, " ")}
}

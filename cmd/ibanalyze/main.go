// Command ibanalyze decodes and analyses InfiniBand and RoCE captures:
// decode, ipd, flows, credits, buffer, tick, correlate, export, pfc, hops,
// report (all of them into one HTML page), and the fleet view status,
// nics, links. Each
// subcommand lives in its own file and registers itself in init.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/cmddoc"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/version"
)

var rootCmd = &cobra.Command{
	Use:           "ibanalyze",
	Short:         "Decode and analyse InfiniBand and RoCE captures",
	SilenceUsage:  true,
	SilenceErrors: true,
	Example: `  ibanalyze decode capture.pcap
  ibanalyze flows capture.pcap
  ibanalyze ipd --by link --rate '4x SDR' --phases capture.pcap
  ibanalyze correlate capture.pcap --telemetry perfquery.txt -o joined.parquet
  ibanalyze nics --prometheus http://prom:9090`,
}

// quiet is --quiet/-q: no progress and no warnings on stderr.
var quiet bool

func init() {
	rootCmd.PersistentFlags().BoolVarP(&quiet, "quiet", "q", false, "no progress or warnings on stderr")
	rootCmd.Version = version.Read().String()
	rootCmd.Flags().Bool("version", false, version.FlagUsage)
	rootCmd.SetVersionTemplate(version.Template)
	rootCmd.SetFlagErrorFunc(flagHint)
}

// errReported means the command already printed why it failed (or what went
// wrong with part of the input) and only the exit code is left to set.
var errReported = errors.New("errors reported above")

func main() {
	stopProfile := startCPUProfile()
	startGC()
	if cmddoc.Completing(os.Args) {
		if err := cmddoc.Register(rootCmd, completers); err != nil {
			fmt.Fprintln(os.Stderr, "ibanalyze:", err)
			os.Exit(1)
		}
	}
	cmddoc.Main(rootCmd, manual) // "ibanalyze __docs DIR": man pages and completions (make install)
	stop := handleSignals()
	err := execute()
	stop()
	removeTemporaries()
	stopProfile()
	outfile.AwaitSignalExit() // a run whose outputs a signal removed ends with its status
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "ibanalyze:", termtext.Lines(err.Error()))
		}
		os.Exit(1)
	}
}

// execute runs the command. The captures it reads are mapped into memory
// (capfile.StreamOptions.Map): one that another program cuts short while
// it is read faults where its pages went, which comes back here as the
// error naming the file; the outputs are then removed as for any error.
func execute() (err error) {
	debug.SetPanicOnFault(true)
	defer func() {
		if v := recover(); v != nil {
			ferr := capfile.Faulted(v)
			if ferr == nil {
				panic(v)
			}
			err = ferr
		}
	}()
	return rootCmd.Execute()
}

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeReport writes the JSON with --json (jsonTo encodes it, one flow at a
// time for the reports of many flows), or what text prints, through one
// buffered writer.
func writeReport(out io.Writer, jsonOut bool, jsonTo func(io.Writer) error, text func(io.Writer)) error {
	w := bufio.NewWriter(out)
	var err error
	if jsonOut {
		err = jsonTo(w)
	} else {
		text(w)
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	return err
}

// warnf prints a warning to stderr unless --quiet (the report collects
// them instead: warnSink).
func warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if !collectWarning(msg) {
		printWarning(msg)
	}
}

// printWarning prints msg on stderr (unless --quiet), never into a
// report's page: what a signal did is said there, as the page it would go
// in may never be written.
func printWarning(msg string) {
	if !quiet {
		fmt.Fprintln(os.Stderr, "ibanalyze:", termtext.Lines(msg))
	}
}

// stderrIsTerminal reports whether stderr is a character device (a terminal).
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress prints a status line on a terminal's stderr at most every 200 ms;
// it is silent when stderr is not a terminal, under --json or --quiet.
type progress struct {
	on    bool
	label string
	total int64 // bytes to do, 0 if unknown
	last  time.Time
	start time.Time
}

func newProgress(label string, totalBytes int64, jsonOut bool) *progress {
	return &progress{on: !quiet && !jsonOut && stderrIsTerminal(), label: label, total: totalBytes, start: time.Now()}
}

// update reports frames done and bytes done; call it every few thousand frames.
func (p *progress) update(frames int, doneBytes int64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	rate := float64(frames) / now.Sub(p.start).Seconds()
	if p.total > 0 {
		fmt.Fprintf(os.Stderr, "\r%s: %d frames, %.0f%%, %.2f Mframes/s ", p.label, frames, 100*float64(doneBytes)/float64(p.total), rate/1e6)
	} else {
		fmt.Fprintf(os.Stderr, "\r%s: %d frames, %.2f Mframes/s ", p.label, frames, rate/1e6)
	}
}

// done clears the status line.
func (p *progress) done() {
	if p.on && !p.last.IsZero() {
		fmt.Fprint(os.Stderr, "\r\033[K")
	}
}

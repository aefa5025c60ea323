package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type creditsOpts struct {
	json     bool
	plot     string
	rate     rateFlag
	interval intervalFlag
}

func init() {
	var o creditsOpts
	cmd := &cobra.Command{
		Use:   "credits CAPTURE...",
		Short: "Link-level flow control: FCTBS/FCCL, credits, credit stalls, receive-buffer estimate",
		Long: `credits reads a capture of one link with its flow-control packets (ERF
type 25), both directions (as a tap at a port records them), and reports per
link direction and VL: credits available (FCCL - FCTBS mod 4096, 64-byte
blocks), blocks in flight, the time data waited for credits, a check that
FCTBS advances by exactly the blocks of the data packets seen (mismatches mean
frames the capture lost), and the receiver's buffer: the most credits ever
available, reached while nothing is in flight.

Without flow-control packets there is nothing to account; estimate a switch
buffer from sender and receiver captures with 'ibanalyze buffer' instead.

` + intervalHelp + `Both need --rate: without it, credits reads its input twice, first to
infer the link's byte time, and a signal ends it at once.`,
		Example: `  ibanalyze credits link.pcap                   FCTBS/FCCL per VL, credit stalls, receive buffer
  ibanalyze credits --rate '4x EDR' --plot credits.png link.pcap`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCredits(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "JSON report (with a downsampled time series per direction)")
	f.StringVar(&o.plot, "plot", "", "plot credits and blocks in flight over time to `FILE` (.png, .svg, .pdf)")
	addRateFlag(f, &o.rate, "for packet end times", "inferred from back-to-back packets (a second reading)")
	addIntervalFlag(f, &o.interval, "credit accounting (with --rate)")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runCredits(w io.Writer, paths []string, o creditsOpts) error {
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	opts := analyze.CreditOptions{}
	r, _, ok, err := o.rate.resolve(paths)
	if err != nil {
		return err
	}
	if ok {
		opts.NsPerByte = r.NsPerByte()
	}
	if !ok && o.interval.DurationNs > 0 {
		return errors.New("--interval needs --rate (or a capture that records its link speed): without it credits reads its input twice, first to infer the link's byte time, and has no report so far to give")
	}
	if !ok {
		if paths, err = spoolStdin(paths, "without --rate credits reads its input twice (to infer the link's byte time)"); err != nil {
			return err
		}
	}
	in, err := newInput(analyze.StreamOptions{LinkPackets: true})
	if err != nil {
		return err
	}
	port := recordedPorts(paths)
	write := func(w io.Writer, rep *analyze.CreditReport) error {
		return writeReport(w, o.json, func(w io.Writer) error { return writeJSON(w, rep) }, func(w io.Writer) { printCredits(w, rep, port) })
	}
	var rep *analyze.CreditReport
	var rs *reports[*analyze.CreditReport]
	if ok { // one pass, with reports so far and the stop on a signal
		var run streamed[*analyze.CreditReport]
		run, err = runStreamed(w, paths, "credits", in, o.interval, o.json, func(*analyze.Stream) (analyze.Analysis[*analyze.CreditReport], error) {
			return analyze.NewCreditsAnalysis(opts)
		}, write)
		rep, rs = run.report, run.reports
	} else { // two passes, the first to infer the byte time: no stop on a signal
		rep, err = analyze.Credits(analyze.Files(paths, in.opts), opts)
		rs = newReports(w, o.interval, o.json, write)
	}
	if errors.Is(err, analyze.ErrNoFCP) {
		return fmt.Errorf("%w; credits needs a capture of a link with its flow-control packets. "+
			"To estimate a switch buffer from data packets alone, run: ibanalyze buffer SENDER-CAPTURE... RECEIVER-CAPTURE", err)
	}
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		warnf("%s: %s", rep.File, p)
	}
	// The text first: a picture with nothing to draw leaves the report.
	if err := rs.totals(rep); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotCredits(rep, tappedPort(paths[0]), o.plot); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// recordedPorts is the port every one of paths names (recordedPort), ""
// when one names none or they differ.
func recordedPorts(paths []string) string {
	port := ""
	for i, p := range paths {
		name := recordedPort(p)
		if name == "" || (i > 0 && name != port) {
			return ""
		}
		port = name
	}
	return port
}

// printCredits writes the text report; port, when the capture names the
// tapped port, names each link direction as the plot does ("from s1/1"),
// beside the interface numbers of the JSON.
func printCredits(w io.Writer, rep *analyze.CreditReport, port string) {
	how := "given"
	if rep.NsPerByteInferred {
		how = "inferred"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s; byte time %.4g ns (%s)%s\n",
		rep.File, units.Count(rep.Frames, "frame"), units.Count(rep.FCPs, "flow-control packet"), units.Count(rep.DataPackets, "data packet"), rep.NsPerByte, how,
		unusable(analyze.Input{DecodeErrors: rep.DecodeErrors, NoTime: rep.NoTime, CutHeaders: rep.CutHeaders, FileErrors: rep.FileErrors}))
	for _, l := range rep.Links {
		link := fmt.Sprintf("interface %d -> %d", l.Iface, l.PeerIface)
		if port != "" {
			link = fmt.Sprintf("%s (%s)", directionName(termtext.Escape(port), l.Iface), link)
		}
		fmt.Fprintf(w, "\n%s, VL %d: %d data packets (%d blocks), %d sender FCPs, %d receiver FCPs\n",
			link, l.VL, l.DataPackets, l.DataBlocks, l.SenderFCPs, l.ReceiverFCPs)
		if l.ReceiverFCPs == 0 || l.SenderFCPs == 0 {
			fmt.Fprintln(w, "  not enough flow-control packets to account for credits")
			continue
		}
		fmt.Fprintf(w, "  receive buffer    %d blocks = %d bytes (%s; seen in %d FCPs)\n",
			l.BufferBlocks, l.BufferBytes, units.FormatBytes(uint64(max(0, l.BufferBytes))), l.BufferSeen)
		if l.DataPackets > 0 {
			fmt.Fprintf(w, "  credits           min %d blocks before a send; most in flight %d blocks\n", l.MinCredits, l.MaxInFlight)
			span := l.LastNs - l.FirstNs
			frac := ""
			if span > 0 {
				frac = fmt.Sprintf(" (%.1f%% of the %s the data spans)", 100*float64(l.CreditStallNs)/float64(span), units.FormatNs(span))
			}
			if l.CreditStallNs < 0 {
				fmt.Fprintf(w, "  credit stalls     not timed: %s\n", l.StallNote)
			} else {
				fmt.Fprintf(w, "  credit stalls     %s in %d waits%s\n", units.FormatNs(l.CreditStallNs), l.CreditStalls, frac)
			}
		}
		verdict := "ok"
		if l.FCTBSMismatches > 0 {
			verdict = fmt.Sprintf("%d mismatches, %d blocks sent that the capture lacks (lost frames)", l.FCTBSMismatches, l.MissingBlocks)
		}
		fmt.Fprintf(w, "  FCTBS check       %d checks: %s\n", l.FCTBSChecks, verdict)
		for _, m := range l.Mismatches {
			fmt.Fprintf(w, "    frame %d: FCTBS %d, expected %d (%d blocks missing)\n", m.Frame, m.Got, m.Expected, m.Blocks)
		}
	}
}

// plotCredits draws, per link direction with data, credits available and
// blocks in flight against time since the first point; port names the
// tapped port, whose sending and receiving directions the lines are.
func plotCredits(rep *analyze.CreditReport, port, path string) error {
	var t0 int64
	for _, l := range rep.Links {
		if l.DataPackets > 0 && len(l.Series) > 0 && (t0 == 0 || l.Series[0].TsNs < t0) {
			t0 = l.Series[0].TsNs
		}
	}
	var series []plots.Line
	for _, l := range rep.Links {
		if l.DataPackets == 0 || len(l.Series) == 0 {
			continue
		}
		name := fmt.Sprintf("%s, VL%d:", directionName(port, l.Iface), l.VL)
		credits := plots.Line{Name: name + " credits"}
		inFlight := plots.Line{Name: name + " in flight"}
		for _, pt := range l.Series {
			x := float64(pt.TsNs-t0) / 1e9
			credits.XS, credits.YS = append(credits.XS, x), append(credits.YS, float64(pt.Credits))
			inFlight.XS, inFlight.YS = append(inFlight.XS, x), append(inFlight.YS, float64(pt.InFlight))
		}
		series = append(series, credits, inFlight)
	}
	if len(series) == 0 {
		return fmt.Errorf("%w: no direction has both data and flow-control packets", plots.ErrNothingToPlot)
	}
	return plots.Lines(path, "credits at "+port+": "+rep.File, "credits and blocks in flight (64-byte blocks)", series)
}

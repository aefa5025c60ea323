package main

import (
	"fmt"
	"io"
	"math"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/telemetry"
	"github.com/spf13/cobra"
)

type tickOpts struct {
	telemetry string
	json      bool
	plot      string
	rate      rateFlag
	iface     int
	source    string
	minPhase  int
	maxPkts   int
	interval  intervalFlag
}

func init() {
	var o tickOpts
	cmd := &cobra.Command{
		Use:   "tick CAPTURE... --telemetry FILE",
		Short: "PortXmitWait tick from a congestion episode: capture against telemetry",
		Long: `tick finds the congestion episode in a capture of the packets a port sends
(the phase of widest packet spacing, by IPD phase detection), measures how
long the port waited between packets within the telemetry samples that fall
inside the episode, and divides by the PortXmitWait increase over those
samples, allowing for only whole ticks counting. It reports the tick in ns and
in symbol times of the link (SDR: 4 ns), and the plain ratio of episode length
to PortXmitWait increase for comparison.

The telemetry is perfquery text, an ibscope sidecar or DOCA telemetry_diag
CSV, and must hold PortXmitWait of the sending port, sampled at least twice
within the episode. ` + perfqueryHelp + `

` + intervalHelp + `A report so far finds the episode among the packets so far, or says why
it cannot yet.`,
		Example: `  ibanalyze tick s1.pcapng --telemetry perfquery.txt   PortXmitWait tick in ns and symbol times
  ibanalyze tick --rate '4x SDR' --source lid:1/1 s1.pcapng --telemetry perfquery.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTick(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.telemetry, "telemetry", "", "telemetry `FILE` with PortXmitWait samples (required)")
	f.BoolVar(&o.json, "json", false, "JSON report")
	f.StringVar(&o.plot, "plot", "", "draw the IPD phases above the PortXmitWait counter over time to `FILE` (.png, .svg, .pdf)")
	addRateFlag(f, &o.rate, "whose symbol time the tick is counted in", "inferred from back-to-back packets (4x preferred)")
	f.IntVar(&o.iface, "iface", -1, "capture interface (direction) the port sends on; -1: the one with the most data packets")
	f.StringVar(&o.source, "source", "", "telemetry series to use, e.g. lid:1/1 (default: the LID of the captured packets' source)")
	f.IntVar(&o.minPhase, "phase-packets", analyze.DefaultPhasePackets, "shortest IPD phase in packets, as ipd's --phase-packets")
	// --min-phase-packets was this flag's first name.
	f.IntVar(&o.minPhase, "min-phase-packets", analyze.DefaultPhasePackets, "")
	_ = f.MarkDeprecated("min-phase-packets", "use --phase-packets")
	f.IntVar(&o.maxPkts, "max-packets", analyze.DefaultMaxPackets, maxPacketsHelp("tick", 16))
	addIntervalFlag(f, &o.interval, "tick estimate")
	addSelectFlags(f, &selected, true)
	cmd.MarkFlagRequired("telemetry")
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runTick(w io.Writer, paths []string, o tickOpts) error {
	if o.minPhase < 0 || o.minPhase > analyze.MaxPhasePackets {
		return fmt.Errorf("--phase-packets %d: want 1 to %d (0: the ipd default, %d)", o.minPhase, analyze.MaxPhasePackets, analyze.DefaultPhasePackets)
	}
	if o.iface < -1 || o.iface > math.MaxInt8 {
		return fmt.Errorf("--iface %d: want 0 to %d, or -1 for the interface with the most data packets", o.iface, math.MaxInt8)
	}
	if err := checkMaxPacketsFlag(o.maxPkts); err != nil {
		return err
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	opts := analyze.TickOptions{Iface: o.iface, MinPhasePackets: o.minPhase, MaxPackets: o.maxPkts}
	r, from, ok, err := o.rate.resolve(paths)
	if err != nil {
		return err
	}
	if ok {
		// The tick is counted in symbol times: an IB speed's.
		ib, isIB := r.AsIB()
		switch {
		case isIB:
			opts.Rate, opts.Lanes = ib.IB, ib.Lanes
		case from == rateFromFlag:
			return fmt.Errorf("--rate %s: tick counts in an IB lane's symbol times; want an IB speed (HDR, 4x EDR) or a data rate one has (200G)", o.rate.rate)
		}
	}
	if o.source != "" {
		src, err := telemetry.ParseSource(o.source)
		if err != nil {
			return err
		}
		opts.Source = src
	}
	series, err := telemetry.ReadFile(o.telemetry, nil)
	if err != nil {
		return err
	}
	for _, s := range series {
		for _, wn := range s.Warnings {
			warnf("%s", wn)
		}
	}
	a, err := analyze.NewTickAnalysis(series, o.telemetry, opts)
	if err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{})
	if err != nil {
		return err
	}
	run, err := runStreamed(w, paths, "tick", in, o.interval, o.json, analysis(a), func(w io.Writer, rep *analyze.TickReport) error {
		return writeReport(w, o.json, func(w io.Writer) error { return writeJSON(w, rep) }, func(w io.Writer) { writeTickText(w, rep) })
	})
	if err != nil {
		return tooManyPackets(err)
	}
	rep := run.report
	for _, wn := range rep.Warnings {
		warnf("%s: %s", rep.File, wn)
	}
	// The text first: a picture with nothing to draw leaves the report.
	if err := run.reports.totals(rep); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotTick(rep, series, tappedPort(paths[0]), o.plot); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

func writeTickText(w io.Writer, rep *analyze.TickReport) {
	how := "given"
	if rep.RateInferred {
		how = "inferred from packet spacing; --rate to set"
	}
	fmt.Fprintf(w, "%s: %d data packets on interface %d from LID %d; link %s %dx (%s)%s\n", termtext.Escape(rep.File), rep.Packets, rep.Iface, rep.SLID, rep.Rate, rep.Lanes, how, unusable(rep.Input))
	fmt.Fprintf(w, "phases:\n")
	for _, p := range rep.Phases {
		mark := ""
		if p.StartNs == rep.CongestionStartNs {
			mark = "  <- congestion"
		}
		fmt.Fprintf(w, "  %10s long, %7d packets, median IPD %s%s\n", units.FormatNs(p.EndNs-p.StartNs), p.Packets, units.FormatNs(p.MedianIPDNs), mark)
	}
	fmt.Fprintf(w, "congestion       %s (IPD %s against %s)\n", units.FormatNs(rep.CongestionEndNs-rep.CongestionStartNs),
		units.FormatNs(rep.CongestedIPDNs), units.FormatNs(rep.BaselineIPDNs))
	fmt.Fprintf(w, "telemetry        %s series %s: samples %s apart within it, PortXmitWait +%d\n", rep.Telemetry, rep.Series,
		units.FormatNs(rep.WindowEndNs-rep.WindowStartNs), rep.XmitWaitDelta)
	fmt.Fprintf(w, "port waited      %s in %d waits of at least a tick\n", units.FormatNs(rep.WaitNs), rep.Waits)
	fmt.Fprintf(w, "tick             %.3f ns = %.2f symbol times (%s symbol %.4g ns)\n", rep.TickNs, rep.TickSymbols, rep.Rate, rep.SymbolNs)
	fmt.Fprintf(w, "                 (window / PortXmitWait = %.3f ns: counts the time the port was sending too)\n", rep.NaiveTickNs)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type ipdOpts struct {
	by           string
	opcodes      string
	bin          string
	bins         int
	exp          bool
	edges        string
	rate         rateFlag
	gbps         float64
	phases       bool
	phasePackets int
	json         bool
	plot         string
	logY         bool
	window       int
	top          int
	compare      bool
	matchWindow  string
	maxFlows     int
	interval     intervalFlag
}

func init() {
	var o ipdOpts
	cmd := &cobra.Command{
		Use:   "ipd FILE [FILE...]",
		Short: "Inter-packet delay histograms and figures per flow, link direction or QP",
		Long: `ipd measures the time between consecutive packets of each flow (IB: SLID,
DLID, DestQP; RoCE: source, destination, DestQP), of each link direction
(--by link: every packet to one destination) or of each QP (--by qp), over
data-carrying packets unless --opcodes says otherwise. By default the MADs,
UD SENDs to the management QPs 0 and 1 (subnet management, SA queries,
rdma_cm's connection messages), are left out: they are no data traffic, and
one between a link's data packets would cut a delay in two. --opcodes all
(or any list) counts the opcodes named on every QP.

Several files are read as one capture in timestamp order (rotated pieces);
timestamps out of order are sorted back within a window and reported.
The capture's timestamp resolution is detected and bins finer than it are
refused. Percentiles come from a log-linear sketch in bounded memory: exact
below 128 ns, below 65 us for microsecond stamps, and wherever the IPDs
near a percentile are all equal (back-to-back packets), otherwise within
0.78%; count, min, max, mean and stddev are exact.

With --compare A B, two captures of the same traffic (sender and receiver
side) are shown side by side with aligned histograms, the Kolmogorov-Smirnov
distance, and one-way delays of packets matched by (flow, PSN).

Bins: linear by default, with width and count picked from the first 8192
IPDs (up to twice their 90th percentile, outliers counted above); --bin and
--bins fix them, --exp doubles each bin, --edges gives every edge. All
flows share the same bins. Durations take ns, us, ms or s: --bin 1us,
--edges 0,1us,2us,4us,8us.

` + intervalHelp + `Before the bins are picked (8192 IPDs), a report so far shows them as
picked from the IPDs so far. Packets are analysed --window packets behind
the reading: on a slow live stream a smaller --window brings reports sooner.`,
		Example: `  ibanalyze ipd out.pcap                              per flow: IPD histogram and percentiles
  ibanalyze ipd --by link --rate '4x SDR' --phases out.pcap   + expected IPD, regime changes
  ibanalyze ipd --edges 0,1us,2us,4us,10us --plot ipd.png out.pcap
  ibanalyze ipd --compare sender.pcap receiver.pcap   side by side, KS distance, one-way delay`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.compare {
				if o.interval.DurationNs > 0 {
					return errors.New("--interval does not go with --compare: the two captures are matched against each other to the end, with no report so far")
				}
				return runCompare(cmd.OutOrStdout(), args, o)
			}
			return runIPD(cmd.OutOrStdout(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.by, "by", string(analyze.ByFlow), "group packets by `flow`, link (direction) or qp")
	f.StringVar(&o.opcodes, "opcodes", "", "opcodes to count: names (RC_RDMA_WRITE_MIDDLE), numbers, data, ack, all (default data)")
	f.StringVar(&o.bin, "bin", "", "bin width (linear) or first bin (--exp), e.g. 1us (default: picked from the data)")
	f.IntVar(&o.bins, "bins", 0, "number of bins (default: picked from the data)")
	f.BoolVar(&o.exp, "exp", false, "exponential bins: [0,b), [b,2b), [2b,4b), ...")
	f.StringVar(&o.edges, "edges", "", "free bin edges, e.g. 0,1us,2us,4us,10us")
	addRateFlag(f, &o.rate, "for the expected IPD", "none")
	f.Float64Var(&o.gbps, "gbps", 0, "link data rate in Gb/s for the expected IPD")
	_ = f.MarkDeprecated("gbps", "use --rate G (--rate 40 or --rate 40G is --gbps 40)")
	f.BoolVar(&o.phases, "phases", false, "detect where the IPD regime changes and report each phase")
	f.IntVar(&o.phasePackets, "phase-packets", analyze.DefaultPhasePackets, "shortest phase reported, in packets")
	f.BoolVar(&o.json, "json", false, "JSON output (the ipd contract)")
	f.StringVar(&o.plot, "plot", "", "draw the histograms to `FILE` (.png, .svg, .pdf)")
	f.BoolVar(&o.logY, "log", false, "log-scale counts in --plot")
	addWindowFlag(f, &o.window)
	f.IntVar(&o.maxFlows, "max-flows", analyze.DefaultMaxFlows, fmt.Sprintf("keep at most `N` flows (links, QPs), about %d bytes each; packets of later ones are counted together as \"other\" (at most %d)", analyze.IPDGroupBytes, analyze.MaxFlowsLimit))
	f.IntVar(&o.top, "top", 10, "text output: the `N` busiest flows (0: all)")
	f.BoolVar(&o.compare, "compare", false, "compare two captures A B of the same traffic (sender and receiver side)")
	f.StringVar(&o.matchWindow, "match-window", units.FormatNs(analyze.DefaultMatchWindowNs), "with --compare: how long a packet waits for its twin on the other side")
	addIntervalFlag(f, &o.interval, "IPDs")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

// ipdConfig turns the flags into an analysis configuration; the rate, when
// --rate gives none, is the one the captures of paths record.
func ipdConfig(o ipdOpts, paths []string) (analyze.IPDOptions, error) {
	cfg := analyze.IPDOptions{Phases: o.phases, PhasePackets: o.phasePackets, MaxFlows: o.maxFlows}
	var err error
	if cfg.By, err = analyze.ParseGroupBy(o.by); err != nil {
		return cfg, fmt.Errorf("--by: %w", err)
	}
	// "data" named alone is the default: data packets off the management QPs.
	if !strings.EqualFold(strings.TrimSpace(o.opcodes), "data") {
		if cfg.Opcodes, err = decode.ParseOpcodes(o.opcodes); err != nil {
			return cfg, err
		}
	}
	h := &cfg.Hist
	h.Mode, h.Bins = analyze.ModeLinear, o.bins
	if o.exp {
		h.Mode = analyze.ModeExp
	}
	if o.bin != "" {
		if h.BinNs, err = units.ParseDurationNs(o.bin); err != nil {
			return cfg, fmt.Errorf("--bin: %w", err)
		}
		if h.BinNs <= 0 {
			return cfg, fmt.Errorf("--bin %s: must be positive", o.bin)
		}
	}
	maxBins := analyze.MaxBins
	if o.exp {
		maxBins = analyze.MaxExpBins
	}
	if o.bins < 0 || o.bins > maxBins {
		return cfg, fmt.Errorf("--bins %d: want 1 to %d (0 picks from the data)", o.bins, maxBins)
	}
	if o.edges != "" {
		if o.exp || o.bin != "" || o.bins != 0 {
			return cfg, errors.New("--edges sets every bin: it does not go with --exp, --bin or --bins")
		}
		h.Mode = analyze.ModeEdges
		if h.EdgesNs, err = parseEdges(o.edges); err != nil {
			return cfg, fmt.Errorf("--edges: %w", err)
		}
	}
	if o.gbps != 0 {
		if o.rate.rate != "" {
			return cfg, errors.New("give --rate, not both --rate and --gbps")
		}
		o.rate.rate = strconv.FormatFloat(o.gbps, 'g', -1, 64)
	}
	r, from, ok, err := o.rate.resolve(paths)
	if err != nil {
		return cfg, err
	}
	if ok {
		cfg.DataGbps, cfg.RateName = r.DataGbps, r.String()
		if from == rateFromCapture {
			cfg.RateName += ", as the capture records it"
		}
	}
	if o.phasePackets < 1 || o.phasePackets > analyze.MaxPhasePackets {
		return cfg, fmt.Errorf("--phase-packets %d: want 1 to %d", o.phasePackets, analyze.MaxPhasePackets)
	}
	if err := checkMaxFlows(o.maxFlows); err != nil {
		return cfg, err
	}
	if o.top < 0 {
		return cfg, fmt.Errorf("--top %d: want 0 (all) or more", o.top)
	}
	if err := checkPlot(o.plot); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func runIPD(stdout io.Writer, paths []string, o ipdOpts) error {
	cfg, err := ipdConfig(o, paths)
	if err != nil {
		return err
	}
	if err := checkWindow(o.window); err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, KeyOnly: true})
	if err != nil {
		return err
	}
	ran := false // the analysis was made: its errors are the run's
	run, err := runStreamed(stdout, paths, "ipd", in, o.interval, o.json, func(s *analyze.Stream) (analyze.Analysis[*analyze.IPDReport], error) {
		a, err := analyze.NewIPDAnalysis(cfg, s.ResolutionNs)
		if err == nil {
			err = cfg.Hist.Validate(s.ResolutionNs())
		}
		if err != nil {
			return nil, binsHint(err, cfg.Hist.Mode, s.ResolutionNs())
		}
		ran = true
		return a, nil
	}, func(w io.Writer, r *analyze.IPDReport) error {
		return writeReport(w, o.json, r.WriteJSON, func(w io.Writer) { writeIPDText(w, r, o.top) })
	})
	if err != nil && !ran {
		return err
	}
	s := run.stream
	if err != nil {
		packets := s.Stats().Packets
		switch {
		case errors.Is(err, analyze.ErrNoIPD) && packets == 0:
			return noPackets(s.Input())
		case errors.Is(err, analyze.ErrNoIPD):
			return noIPD(err, paths, packets, cfg.By, o.opcodes)
		}
		return binsHint(err, cfg.Hist.Mode, s.ResolutionNs())
	}
	r, rs := run.report, run.reports
	warnInput(r.Input)
	if r.MaxFlows > 0 {
		warnf("more than %s: the packets of those after the first %d (%s) are counted together as %q, without IPDs; --max-flows raises the bound (about %d bytes a %s)",
			units.Count(r.MaxFlows, string(r.By)), r.MaxFlows, units.Count(r.OtherPackets, "packet"), "other", analyze.IPDGroupBytes, r.By)
	}
	if err := rs.totals(r); err != nil {
		return err
	}
	if o.plot != "" {
		var series []plots.Hist
		for i := range plotFlows(r.NumFlows(), o.top, r.By) {
			f := r.Flow(i)
			series = append(series, plotHist(f.Key.String(), f.Hist()))
		}
		if err := plots.Histograms(o.plot, "IPD per "+string(r.By)+": "+strings.Join(r.Input.Files, ", "), series, o.exp, o.logY); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// noIPD says plainly what the input held when no group had two counted
// packets, and which flag counts what it held.
func noIPD(err error, paths []string, packets int, by analyze.GroupBy, opcodes string) error {
	var ne *analyze.NoIPDError
	if !errors.As(err, &ne) {
		return err
	}
	files := strings.Join(paths, ", ")
	which := "ipd counts data packets (SEND, RDMA WRITE, RDMA READ response) off the management QPs 0 and 1 by default"
	if strings.TrimSpace(opcodes) != "" {
		which = "--opcodes " + opcodes + " counts"
	}
	all := strings.EqualFold(strings.TrimSpace(opcodes), "all")
	switch {
	case ne.Counted == 0 && ne.AtomicsOnly():
		return fmt.Errorf("%s: %s, all atomics and their ACKs: %s; %s: use --opcodes all to count them",
			files, units.Count(packets, "IB/RoCE packet"), ne.Found(), which)
	case ne.Counted == 0:
		return fmt.Errorf("%s: %s, none of the kind counted: %s; %s: use --opcodes all to count every opcode, or --opcodes with their names",
			files, units.Count(packets, "IB/RoCE packet"), ne.Found(), which)
	}
	hint := " --by link groups every packet to one destination"
	if !all {
		hint = " --opcodes all counts every opcode;" + hint
	}
	return fmt.Errorf("%s: %s (%s), %d counted, but no %s has two of them: no inter-packet delay.%s",
		files, units.Count(packets, "IB/RoCE packet"), ne.Found(), ne.Counted, by, hint)
}

// binsHint adds to an error about bins finer than the capture's clock the
// flag that widens them.
func binsHint(err error, mode analyze.HistMode, resNs int64) error {
	if !errors.Is(err, analyze.ErrBinsTooFine) {
		return err
	}
	if mode == analyze.ModeEdges {
		return fmt.Errorf("%w: give --edges at least %s apart", err, units.FormatNs(resNs))
	}
	return fmt.Errorf("%w: use --bin %s or more", err, units.FormatNs(resNs))
}

// plotHist is a histogram as plots draws it.
func plotHist(name string, h *analyze.Histogram) plots.Hist {
	return plots.Hist{Name: name, EdgesNs: h.EdgesNs, Counts: h.Counts}
}

// plotFlows is how many of n flows, busiest first, a plot draws: --top of
// them, and maxPlotFlows at most.
func plotFlows(n, top int, by analyze.GroupBy) int {
	if top > 0 {
		n = min(n, top)
	}
	if n > maxPlotFlows {
		warnf("--plot draws the %d busiest of %d %ss (--top): more would be unreadable", maxPlotFlows, n, by)
		n = maxPlotFlows
	}
	return n
}

// maxPlotFlows bounds the histograms one plot draws: each is a line in the
// legend, and the plot holds every one in memory.
const maxPlotFlows = 50

// barWidth is the longest histogram bar in the text output, in characters.
const barWidth = 50

func writeIPDText(w io.Writer, r *analyze.IPDReport, top int) {
	in := r.Input
	opcodes := strings.Join(r.Opcodes, ",")
	if len(r.Opcodes) == 256 {
		opcodes = "all"
	}
	if r.MADs > 0 {
		opcodes += "; " + units.Count(r.MADs, "MAD") + " to QP 0 and 1 left out"
	}
	fmt.Fprintf(w, "%s: %s, %s, %d counted (%s); timestamp resolution %s%s\n",
		strings.Join(in.Files, ", "), units.Count(in.Frames, "frame"), units.Count(in.Packets, "IB/RoCE packet"), r.Counted, opcodes, units.FormatNs(r.ResolutionNs), unusable(in))
	if r.Rate != "" {
		fmt.Fprintf(w, "link: %s\n", r.Rate)
	}
	fmt.Fprint(w, units.Count(r.NumFlows(), string(r.By)))
	if top > 0 && r.NumFlows() > top {
		fmt.Fprintf(w, ", the %d busiest shown (--top 0 for all)", top)
	}
	fmt.Fprintln(w)
	for i := range r.NumFlows() {
		if top > 0 && i >= top {
			break
		}
		f := r.Flow(i)
		if i == r.NumFlows()-1 && r.MaxFlows > 0 {
			fmt.Fprintf(w, "\nother: %s of the %ss after the first %d (--max-flows): no IPD\n", units.Count(f.Packets, "packet"), r.By, r.MaxFlows)
			continue
		}
		fmt.Fprintf(w, "\n%s %s: %s\n", r.By, f.Key, units.Count(f.Packets, "packet"))
		s := f.IPDNs
		if s.Count == 0 {
			fmt.Fprintf(w, "  one packet: no IPD\n")
			continue
		}
		fs := units.FormatNs
		fmt.Fprintf(w, "  IPD: count %d  min %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s  stddev %s\n",
			s.Count, fs(s.Min), fs(s.P50), fs(s.P90), fs(s.P99), fs(s.P999), fs(s.Max), fs(s.Mean), fs(s.StdDev))
		if f.ExpectedIPDNs > 0 {
			fmt.Fprintf(w, "  expected %s for %.0f-byte packets back to back; observed median / expected = %.2f\n",
				fs(f.ExpectedIPDNs), f.MeanWireBytes, f.Ratio)
		}
		if f.Late > 0 {
			fmt.Fprintf(w, "  %d packets out of order beyond the window: no IPD for them\n", f.Late)
		}
		writeHistText(w, f.Histogram, s.Count)
		if len(f.Phases) > 0 {
			fmt.Fprintf(w, "  phases:\n")
			for j, p := range f.Phases {
				fmt.Fprintf(w, "    %d: +%s .. +%s  %d packets  median IPD %s\n", j+1,
					fs(p.StartNs-f.FirstNs), fs(p.EndNs-f.FirstNs), p.Packets, fs(p.MedianIPDNs))
			}
		}
	}
}

// writeHistText writes the study's table: interval, occurrence, percentage, bar.
func writeHistText(w io.Writer, h analyze.HistCounts, total uint64) {
	var most uint64
	for _, b := range h.Bins {
		most = max(most, b.Count)
	}
	most = max(most, h.Below, h.Above, 1)
	t := table{header: []string{"interval", "occurrence", "percent", ""}, leftCols: 1, leftLast: true, indent: "  "}
	row := func(label string, c uint64) {
		bar := strings.Repeat("#", int((c*barWidth+most-1)/most))
		t.add(label, strconv.FormatUint(c, 10), fmt.Sprintf("%.2f%%", 100*float64(c)/float64(total)), bar)
	}
	if h.Below > 0 {
		row("< "+units.FormatNs(h.Bins[0].LoNs), h.Below)
	}
	// Runs of three or more empty bins share one row.
	for i := 0; i < len(h.Bins); i++ {
		j := i
		for j+1 < len(h.Bins) && h.Bins[i].Count == 0 && h.Bins[j+1].Count == 0 {
			j++
		}
		if j-i < 2 {
			j = i
		}
		row("["+units.FormatNs(h.Bins[i].LoNs)+", "+units.FormatNs(h.Bins[j].HiNs)+")", h.Bins[i].Count)
		i = j
	}
	row(">= "+units.FormatNs(h.Bins[len(h.Bins)-1].HiNs), h.Above)
	t.write(w) // a write error sticks in the buffered writer and comes out of its Flush
}

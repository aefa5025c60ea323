package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type hopsOpts struct {
	bin, edges      string
	bins            int
	linear          bool
	occBin, occBins int
	occLinear       bool
	occEdges        string
	seriesInterval  units.DurationNs
	series          bool
	json            bool
	plot            string
	top             int
	window          int
	maxFlows        int
	interval        intervalFlag
}

func init() {
	o := hopsOpts{seriesInterval: analyze.DefaultHopIntervalNs}
	cmd := &cobra.Command{
		Use:   "hops FILE [FILE...]",
		Short: "Per switch port residence time and queue occupancy from IFA 2.0 probes, and the hop that delays each flow most",
		Long: `hops reads the IFA 2.0 probes of a RoCE capture (draft-kumar-ippm-ifa-08,
IP protocol 253): every switch on a probe's path appends its metadata, and
of it hops reads the residence time (arrival to departure, ns) and the
egress queue's occupancy (the first 32-bit word of the hop's opaque data,
where devices that report it put it, in the device's units).

Per switch (device ID and LNS) and egress port: records, CE marks, min,
mean and max of both, their histograms, and a series per interval of
packet time (mean and max; --series-interval, doubled whenever a series
would pass 512 intervals). Per flow: the hops its probes crossed, each
with the residence time it added, and the worst one. IFA 1.0 probes carry
their metadata undecoded and are not read.

Bins (as DOCA PCC names them): exponential by default, [0, b), [b, 2b),
[2b, 4b), ... from --bin (64ns) up to 2^32 ns, the field's range; --linear
gives --bins bins of --bin; --edges every edge. The occupancy's bins are
set the same way by --occ-bin, --occ-bins, --occ-linear and --occ-edges,
in the device's units (exponential from 1 by default).

Several files are read as one capture in timestamp order (rotated pieces);
- is standard input. Memory: at most 16,384 ports, each up to 16 KB of
series plus 8 bytes per bin of its two histograms; per flow about 240
bytes plus 32 per hop (--max-flows).

` + intervalHelp,
		Example: `  ibanalyze hops out.pcapng                     per switch port residence and queue from IFA probes
  ibanalyze hops --edges 0,500ns,1us,10us --top 5 out.pcapng`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runHops(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.bin, "bin", "", "residence bins: the first bin (exponential) or the width (--linear), e.g. 100ns (default 64ns exponential)")
	f.IntVar(&o.bins, "bins", 0, "number of residence bins (default: up to 2^32 ns exponential, 100 linear)")
	f.BoolVar(&o.linear, "linear", false, "linear residence bins of --bin")
	f.StringVar(&o.edges, "edges", "", "free residence bin edges, e.g. 0,500ns,1us,10us")
	f.IntVar(&o.occBin, "occ-bin", 0, "occupancy bins: the first bin or the width (--occ-linear), device units (default 1, exponential)")
	f.IntVar(&o.occBins, "occ-bins", 0, "number of occupancy bins")
	f.BoolVar(&o.occLinear, "occ-linear", false, "linear occupancy bins of --occ-bin")
	f.StringVar(&o.occEdges, "occ-edges", "", "free occupancy bin edges, e.g. 0,100,1000,10000")
	f.Var(&o.seriesInterval, "series-interval", "the series' interval of packet time (doubled past 512 intervals)")
	f.BoolVar(&o.series, "series", false, "with --json, include each port's series")
	f.BoolVar(&o.json, "json", false, "JSON output")
	f.StringVar(&o.plot, "plot", "", "draw each switch port's residence time and queue occupancy over time to `FILE` (.png, .svg, .pdf)")
	f.IntVar(&o.top, "top", 20, "text output: the `N` ports and flows with the most residence time (0: all)")
	addWindowFlag(f, &o.window)
	f.IntVar(&o.maxFlows, "max-flows", analyze.DefaultMaxFlows, fmt.Sprintf("keep at most `N` flows apart; probes of later ones count for their ports only (at most %d)", analyze.MaxFlowsLimit))
	addIntervalFlag(f, &o.interval, "hops")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

// hopsHist turns one histogram's flags into a spec; values are ns for
// residence and plain numbers for occupancy (parse reads one edge).
func hopsHist(name string, linear bool, bin int64, bins int, edges string, parse func(string) (int64, error)) (analyze.HistSpec, error) {
	var h analyze.HistSpec
	maxBins := analyze.MaxExpBins
	if linear {
		maxBins = analyze.MaxBins
	}
	switch {
	case bins < 0 || bins > maxBins:
		return h, fmt.Errorf("--%sbins %d: want 1 to %d (0 for the default)", name, bins, maxBins)
	case bin < 0:
		return h, fmt.Errorf("--%sbin: must be positive", name)
	case edges != "" && (linear || bin != 0 || bins != 0):
		return h, fmt.Errorf("--%sedges sets every bin: it does not go with --%slinear, --%sbin or --%sbins", name, name, name, name)
	case edges != "":
		h.Mode = analyze.ModeEdges
		for i, e := range strings.Split(edges, ",") {
			if i > analyze.MaxBins {
				return h, fmt.Errorf("--%sedges: more than %d bin edges", name, analyze.MaxBins+1)
			}
			v, err := parse(e)
			if err != nil {
				return h, fmt.Errorf("--%sedges: edge %d: %w", name, i+1, err)
			}
			if i > 0 && v <= h.EdgesNs[i-1] {
				return h, fmt.Errorf("--%sedges: edges must increase: edge %d (%s) is not above the one before", name, i+1, strings.TrimSpace(e))
			}
			h.EdgesNs = append(h.EdgesNs, v)
		}
		if len(h.EdgesNs) < 2 {
			return h, fmt.Errorf("--%sedges %q: need at least two edges to make a bin", name, edges)
		}
	case linear && bin == 0:
		return h, fmt.Errorf("--%slinear needs --%sbin, the bins' width", name, name)
	case linear:
		h = analyze.HistSpec{Mode: analyze.ModeLinear, BinNs: bin, Bins: bins}
	case bin != 0 || bins != 0:
		h = analyze.HistSpec{Mode: analyze.ModeExp, BinNs: bin, Bins: bins}
	}
	return h, nil
}

// parseCount reads an occupancy edge: a whole number, 0 or more.
func parseCount(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a whole number of 0 or more", strings.TrimSpace(s))
	}
	return v, nil
}

func hopsOptions(o hopsOpts) (analyze.HopsOptions, error) {
	opts := analyze.HopsOptions{IntervalNs: int64(o.seriesInterval), MaxFlows: o.maxFlows}
	switch {
	case o.seriesInterval <= 0:
		return opts, fmt.Errorf("--series-interval %s: want a positive duration", units.FormatNs(int64(o.seriesInterval)))
	case o.top < 0:
		return opts, fmt.Errorf("--top %d: want 0 (all) or more", o.top)
	}
	if err := checkMaxFlows(o.maxFlows); err != nil {
		return opts, err
	}
	if err := checkWindow(o.window); err != nil {
		return opts, err
	}
	var bin int64
	if o.bin != "" {
		var err error
		if bin, err = units.ParseDurationNs(o.bin); err != nil {
			return opts, fmt.Errorf("--bin: %w", err)
		}
		if bin <= 0 {
			return opts, fmt.Errorf("--bin %s: must be positive", o.bin)
		}
	}
	var err error
	if opts.Residence, err = hopsHist("", o.linear, bin, o.bins, o.edges, units.ParseDurationNs); err != nil {
		return opts, err
	}
	if opts.Occupancy, err = hopsHist("occ-", o.occLinear, int64(o.occBin), o.occBins, o.occEdges, parseCount); err != nil {
		return opts, err
	}
	return opts, nil
}

func runHops(stdout io.Writer, paths []string, o hopsOpts) error {
	opts, err := hopsOptions(o)
	if err != nil {
		return err
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	a, err := analyze.NewHopsAnalysis(opts)
	if err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, Ethernet: true})
	if err != nil {
		return err
	}
	run, err := runStreamed(stdout, paths, "hops", in, o.interval, o.json, analysis(a),
		func(w io.Writer, r *analyze.HopsReport) error {
			return writeReport(w, o.json, func(w io.Writer) error { return writeJSON(w, hopsJSON(r, o.series)) }, func(w io.Writer) { writeHopsText(w, r, o.top) })
		})
	if err != nil {
		return err
	}
	r := run.report
	if r.Input.Packets == 0 {
		return noPackets(r.Input)
	}
	warnInput(r.Input)
	if r.Probes == 0 {
		warnf("no IFA 2.0 probes with hop metadata in %s (IP protocol 253 before UDP 4791)", strings.Join(r.Input.Files, ", "))
	}
	if r.OtherRecords > 0 {
		warnf("more than 16384 switch ports: %s of the later ones not analysed", units.Count(r.OtherRecords, "hop record"))
	}
	if r.MaxFlows > 0 {
		warnf("more than %d flows: %s of later ones counted for their ports only; --max-flows raises the bound", r.MaxFlows, units.Count(r.OtherProbes, "probe"))
	}
	// The text first: a picture with nothing to draw leaves the report.
	if err := run.reports.totals(r); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotHops(r, o.plot); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// hopsJSON is the report as --json writes it: without the series unless
// --series (a copy: the report is left as it is).
func hopsJSON(r *analyze.HopsReport, series bool) *analyze.HopsReport {
	if series {
		return r
	}
	c := *r
	c.Ports = make([]analyze.HopPort, len(r.Ports))
	for i, p := range r.Ports {
		p.Series = nil
		c.Ports[i] = p
	}
	return &c
}

func writeHopsText(w io.Writer, r *analyze.HopsReport, top int) {
	in := r.Input
	fmt.Fprintf(w, "%s: %s, %s, %s, %s, %s%s\n",
		strings.Join(in.Files, ", "), units.Count(in.Frames, "frame"), units.Count(r.Probes, "IFA 2.0 probe"), units.Count(r.HopRecords, "hop record"),
		units.Count(len(r.Ports), "switch port"), units.Count(len(r.Flows), "flow"), unusable(in))
	ports, flows := r.Ports, r.Flows
	if top > 0 {
		ports, flows = ports[:min(top, len(ports))], flows[:min(top, len(flows))]
	}
	fmt.Fprintln(w, "\nper switch egress port, most residence time first (occupancy in the device's units)")
	t := table{leftCols: 2, indent: "  ", header: []string{"switch", "port", "records", "CE", "res min", "res mean", "res max", "occ min", "occ mean", "occ max"}}
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	for _, p := range ports {
		t.add(fmt.Sprintf("0x%05x/%d", p.DeviceID, p.LNS), strconv.Itoa(int(p.EgressPort)), strconv.FormatUint(p.Records, 10), strconv.FormatUint(p.Congested, 10),
			units.FormatNs(int64(p.ResidenceNs.Min)), units.FormatNs(int64(p.ResidenceNs.Mean+0.5)), units.FormatNs(int64(p.ResidenceNs.Max)),
			u(p.Occupancy.Min), strconv.FormatFloat(p.Occupancy.Mean, 'f', 1, 64), u(p.Occupancy.Max))
	}
	if len(ports) == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	t.write(w)
	if len(ports) < len(r.Ports) {
		fmt.Fprintf(w, "  (%d more ports: --top 0)\n", len(r.Ports)-len(ports))
	}
	fmt.Fprintln(w, "\nresidence time histograms (non-empty bins)")
	for _, p := range ports {
		h := p.ResidenceHistogram
		var b strings.Builder
		if h.Below > 0 {
			fmt.Fprintf(&b, " below:%d", h.Below)
		}
		for _, bin := range h.Bins {
			if bin.Count > 0 {
				fmt.Fprintf(&b, " [%s,%s):%d", units.FormatNs(bin.LoNs), units.FormatNs(bin.HiNs), bin.Count)
			}
		}
		if h.Above > 0 {
			fmt.Fprintf(&b, " above:%d", h.Above)
		}
		fmt.Fprintf(w, "  %s%s\n", p.HopID, b.String())
	}
	fmt.Fprintln(w, "\nper flow, most residence time first: the hop that added the most")
	ft := table{leftCols: 2, indent: "  ", header: []string{"flow", "worst hop", "probes", "hops", "path mean", "its mean", "its share"}}
	for _, f := range flows {
		wh := f.WorstHop
		ft.add(f.Key.String(), wh.HopID.String(), strconv.Itoa(f.Probes), strconv.Itoa(len(f.Hops)), units.FormatNs(int64(f.MeanPathResidenceNs+0.5)),
			units.FormatNs(int64(wh.MeanResidenceNs+0.5)), fmt.Sprintf("%.1f%%", 100*wh.Share))
	}
	ft.write(w)
	if len(flows) < len(r.Flows) {
		fmt.Fprintf(w, "  (%d more flows: --top 0)\n", len(r.Flows)-len(flows))
	}
}

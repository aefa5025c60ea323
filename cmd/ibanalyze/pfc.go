package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type pfcOpts struct {
	rate      rateFlag
	storm     units.DurationNs
	dscpMap   string
	json      bool
	plot      string
	top       int
	maxPauses int
	window    int
	maxFlows  int
	interval  intervalFlag
}

func init() {
	o := pfcOpts{storm: analyze.DefaultStormNs}
	cmd := &cobra.Command{
		Use:   "pfc FILE [FILE...]",
		Short: "Pause time per link direction and priority from PFC and PAUSE frames, storms, and the RoCE flows paused",
		Long: `pfc reads the pauses of lossless Ethernet: an 802.1Qbb PFC frame naming
priority p with time q pauses p for q quanta of 512 bit times at the link
rate (--rate); a later frame with time 0 (XON) ends the pause early, a later
non-zero one restarts its timer with the new time. An 802.3x PAUSE pauses
every priority. A link direction is the port that sent the frames (its
source MAC; "iface N" in a capture without Ethernet headers): it stops the
traffic sent to it.

Per link direction and priority: frames, pauses (a frame arriving while
paused refreshes the pause rather than starting one), XONs that ended one,
paused time and its share of the observed span (first frame to last, or to
the end of a pause still running), the longest pause, and storms: pauses
that lasted longer than --storm without a gap.

Per priority, the RoCE flows sent on it (the VLAN PCP when tagged, else the
DSCP mapped by --dscp-map, by default DSCP>>3), each towards the link
direction of its destination MAC: packets and wire bytes sent while that
direction paused the priority and while it did not, and the throughput of
each (paused bytes over the paused time; the rest over the rest of the
span). A pause holds back only frames not yet begun: while a frame of the
priority begun before the pause is still on the wire (its wire bytes at
--rate from its timestamp), the time counts as not paused for the rates.
Bytes sent while paused are frames in flight or a sender that did not
honour the pause.

PFC and PAUSE frames are seen only where the capture point sees link-level
frames (a port mirror, a NIC in sniffer mode, ibsim's taps). Several files
are read as one capture in timestamp order (rotated pieces); - is standard
input. Memory: about 220 bytes per flow (--max-flows), a state per link
direction and priority (at most 4,096 link directions, and the last frame
per priority to each of at most 4,096 destination MACs), and at most
--max-pauses pauses listed per link direction and priority.

` + intervalHelp,
		Example: `  ibanalyze pfc --rate 100G out.pcapng          pause time per link direction and priority
  ibanalyze pfc --rate 25G --dscp-map 26=3 --storm 5ms out.pcapng`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPFC(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	addRateFlag(f, &o.rate, "pause quanta count at", "100 Gb/s, with a warning")
	f.Var(&o.storm, "storm", "a pause longer than `DURATION` without a gap is a storm")
	f.StringVar(&o.dscpMap, "dscp-map", "", "DSCP to priority for untagged RoCE packets, e.g. 26=3,46=5 (the rest: DSCP>>3)")
	f.BoolVar(&o.json, "json", false, "JSON output")
	f.StringVar(&o.plot, "plot", "", "draw the pauses over time, a row per link direction and priority, to `FILE` (.png, .svg, .pdf)")
	f.IntVar(&o.top, "top", 10, "text output: the `N` busiest flows per priority (0: all)")
	f.IntVar(&o.maxPauses, "max-pauses", analyze.DefaultPauseIntervals, fmt.Sprintf("--json: list the first `N` pauses per link direction and priority (at most %d)", analyze.MaxPauseIntervals))
	addWindowFlag(f, &o.window)
	f.IntVar(&o.maxFlows, "max-flows", analyze.DefaultMaxFlows, fmt.Sprintf("keep at most `N` flows apart, about 220 bytes each; later ones are counted in other_packets (at most %d)", analyze.MaxFlowsLimit))
	addIntervalFlag(f, &o.interval, "pauses")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

// parseDSCPMap reads --dscp-map "26=3,46=5" over the default DSCP>>3.
func parseDSCPMap(s string) (*[64]uint8, error) {
	m := analyze.DefaultDSCPPriority()
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	given := map[int]int{} // DSCP to the entry that mapped it
	for i, kv := range strings.Split(s, ",") {
		d, p, ok := strings.Cut(strings.TrimSpace(kv), "=")
		dscp, err1 := strconv.Atoi(strings.TrimSpace(d))
		prio, err2 := strconv.Atoi(strings.TrimSpace(p))
		if !ok || err1 != nil || err2 != nil || dscp < 0 || dscp > 63 || prio < 0 || prio > 7 {
			return nil, fmt.Errorf("--dscp-map entry %d %q: want DSCP=PRIORITY, DSCP 0 to 63 and priority 0 to 7 (e.g. 26=3)", i+1, kv)
		}
		// Which of two priorities the user meant cannot be guessed.
		if j, dup := given[dscp]; dup {
			return nil, fmt.Errorf("--dscp-map entry %d %q: DSCP %d is mapped already by entry %d; give each DSCP once", i+1, kv, dscp, j)
		}
		given[dscp] = i + 1
		m[dscp] = uint8(prio)
	}
	return m, nil
}

func runPFC(stdout io.Writer, paths []string, o pfcOpts) error {
	opts := analyze.PFCOptions{StormNs: int64(o.storm), MaxFlows: o.maxFlows, MaxIntervals: o.maxPauses, PausedTime: o.plot != ""}
	var err error
	switch {
	case o.storm <= 0:
		return fmt.Errorf("--storm %s: want a positive duration", units.FormatNs(int64(o.storm)))
	case o.top < 0:
		return fmt.Errorf("--top %d: want 0 (all) or more", o.top)
	case o.maxPauses < 1 || o.maxPauses > analyze.MaxPauseIntervals:
		return fmt.Errorf("--max-pauses %d: want 1 to %d", o.maxPauses, analyze.MaxPauseIntervals)
	}
	if err := checkMaxFlows(o.maxFlows); err != nil {
		return err
	}
	if err := checkWindow(o.window); err != nil {
		return err
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	rate, from, ok, err := o.rate.resolve(paths)
	if err != nil {
		return err
	}
	if ok {
		opts.LinkBitsPerSec = rate.BitsPerSec()
		if from == rateFromCapture {
			warnf("pause quanta counted at %s, the link speed the capture records (--rate to change)", rate)
		}
	} else {
		// Said before the reading, so before any table (--interval).
		warnf("no --rate, and the capture records no link speed: pause quanta counted at 100 Gb/s (5.12 ns each); pause times scale with 100 Gb/s over the real rate")
	}
	if opts.DSCPPriority, err = parseDSCPMap(o.dscpMap); err != nil {
		return err
	}
	a, err := analyze.NewPFCAnalysis(opts)
	if err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, MACControl: true})
	if err != nil {
		return err
	}
	run, err := runStreamed(stdout, paths, "pfc", in, o.interval, o.json, analysis(a),
		func(w io.Writer, r *analyze.PFCReport) error {
			return writeReport(w, o.json, func(w io.Writer) error { return writeJSON(w, r) }, func(w io.Writer) { writePFCText(w, r, o.top) })
		})
	if err != nil {
		return err
	}
	r := run.report
	if r.Input.Packets == 0 {
		return fmt.Errorf("no PFC, PAUSE or RoCE frames in %s: %d frames read, %d of other kinds, %d could not be decoded",
			strings.Join(r.Input.Files, ", "), r.Input.Frames, r.Input.NotIB+r.Input.LinkPackets, r.Input.DecodeErrors)
	}
	warnInput(r.Input)
	if r.PFCFrames+r.PauseFrames == 0 {
		warnf("no PFC or PAUSE frames in %s: nothing paused (they are seen only where link-level frames are captured: a port mirror, a NIC in sniffer mode)", strings.Join(r.Input.Files, ", "))
	}
	if r.OtherLinkFrames > 0 {
		warnf("pause frames from more than 4096 link directions: %s of the later ones not analysed", units.Count(r.OtherLinkFrames, "frame"))
	}
	if r.MaxFlows > 0 {
		warnf("more than %d flows: the packets of later ones (%d) are counted in other_packets; --max-flows raises the bound", r.MaxFlows, r.OtherPackets)
	}
	if r.UnattributedPackets > 0 {
		warnf("%s without Ethernet addresses (a cooked capture): not matched to a link direction", units.Count(r.UnattributedPackets, "RoCE packet"))
	}
	// The text first: a picture with nothing to draw leaves the report.
	if err := run.reports.totals(r); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotPFC(r, paths, o.plot, o.maxPauses); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

func writePFCText(w io.Writer, r *analyze.PFCReport, top int) {
	in := r.Input
	rate := units.FormatBitRate(r.RateGbps * 1e9)
	if r.RateAssumed {
		rate += " (assumed: no --rate, and the capture records no speed)"
	}
	fmt.Fprintf(w, "%s: %s, %d PFC, %d PAUSE; quanta at %s; span %s%s\n", termtext.Escape(strings.Join(in.Files, ", ")), units.Count(in.Frames, "frame"), r.PFCFrames, r.PauseFrames, rate, units.FormatNs(r.SpanNs), unusable(in))
	fmt.Fprintf(w, "\npauses per link direction (the port that sent them) and priority; a storm is a pause longer than %s\n", units.FormatNs(r.StormNs))
	t := table{leftCols: 1, indent: "  ", header: []string{"link", "prio", "frames", "pauses", "XON", "paused", "share", "longest", "storms", "in storms"}}
	for _, l := range r.Links {
		for _, p := range l.Priorities {
			paused := units.FormatNs(p.PausedNs)
			if p.Paused {
				paused += "+" // still paused at the end: counted to its timer's end
			}
			t.add(l.Link, strconv.Itoa(p.Priority), strconv.Itoa(p.Frames), strconv.Itoa(p.Pauses), strconv.Itoa(p.XONs), paused,
				fmt.Sprintf("%.2f%%", 100*p.PausedShare), units.FormatNs(p.LongestNs), strconv.Itoa(p.Storms), units.FormatNs(p.StormNs))
		}
	}
	if len(t.rows) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		t.write(w)
	}
	fmt.Fprintln(w, "\nRoCE flows per priority, towards the link direction of their destination MAC; paused: sent while it paused the priority;")
	fmt.Fprintln(w, "rates: over the paused time less the frames already on the wire when a pause began, and over the rest of the span")
	ft := table{leftCols: 3, indent: "  ", header: []string{"prio", "flow", "link", "packets", "bytes", "paused pkts", "paused bytes", "rate paused", "rate not paused"}}
	rateOf := func(g *float64) string {
		if g == nil {
			return "-"
		}
		return units.FormatBitRate(*g * 1e9)
	}
	for _, pr := range r.Priorities {
		flows := pr.Flows
		if top > 0 && len(flows) > top {
			flows = flows[:top]
		}
		for _, f := range flows {
			ft.add(strconv.Itoa(pr.Priority), f.Key.String(), f.Link, strconv.Itoa(f.Packets), strconv.FormatUint(f.Bytes, 10),
				strconv.Itoa(f.PausedPackets), strconv.FormatUint(f.PausedBytes, 10), rateOf(f.PausedGbps), rateOf(f.UnpausedGbps))
		}
		if len(flows) < len(pr.Flows) {
			ft.add(strconv.Itoa(pr.Priority), fmt.Sprintf("(%d more: --top 0)", len(pr.Flows)-len(flows)), "", "", "", "", "", "", "")
		}
	}
	if len(ft.rows) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		ft.write(w)
	}
}

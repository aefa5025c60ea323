package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/units"
)

// runCompare is `ipd --compare A B`: two captures of the same traffic side by side.
func runCompare(stdout io.Writer, paths []string, o ipdOpts) error {
	if len(paths) != 2 {
		return fmt.Errorf("--compare takes two captures, A (sender side) and B (receiver side); got %d", len(paths))
	}
	cfg, err := ipdConfig(o, paths)
	if err != nil {
		return err
	}
	windowNs, err := units.ParseDurationNs(o.matchWindow)
	if err != nil || windowNs <= 0 || windowNs > analyze.MaxMatchWindowNs {
		return fmt.Errorf("--match-window %q: want a duration from 1ns to %s, such as 10ms (every packet inside it is kept)", o.matchWindow, units.FormatNs(analyze.MaxMatchWindowNs))
	}
	if err := stdinOnce(paths); err != nil {
		return err
	}
	if err := checkWindow(o.window); err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, KeyOnly: true})
	if err != nil {
		return err
	}
	a, err := in.open(paths[:1])
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := in.open(paths[1:])
	if err != nil {
		return err
	}
	defer b.Close()
	_, totalA := a.Progress()
	_, totalB := b.Progress()
	prog := newProgress("ipd --compare", totalA+totalB, o.json)
	r, err := analyze.RunCompare(a, b, cfg, windowNs, func() {
		da, _ := a.Progress()
		db, _ := b.Progress()
		prog.update(a.Stats().Frames+b.Stats().Frames, da+db)
	})
	prog.done()
	// A side with no IB or RoCE packet at all is the wrong file, not a
	// side that lost every packet: there is nothing to compare.
	for _, s := range []*analyze.Stream{a, b} {
		if s.Stats().Packets == 0 {
			return noPackets(s.Input())
		}
	}
	if err != nil {
		return binsHint(err, cfg.Hist.Mode, max(a.ResolutionNs(), b.ResolutionNs()))
	}
	warnInput(r.A)
	warnInput(r.B)
	if r.MaxFlows > 0 {
		warnf("more than %d %ss on a side: the packets of those after the first %d are counted together as %q, without IPDs; --max-flows raises the bound",
			r.MaxFlows, r.By, r.MaxFlows, "other")
	}
	if err := writeReport(stdout, o.json, r.WriteJSON, func(w io.Writer) { writeCompareText(w, r, o.top) }); err != nil {
		return err
	}
	if o.plot != "" {
		var series []plots.Hist
		for i := range plotFlows(r.NumFlows(), o.top, r.By) {
			f := r.Flow(i)
			ha, hb := f.Hists()
			series = append(series, plotHist("A "+f.Key.String(), ha), plotHist("B "+f.Key.String(), hb))
		}
		if err := plots.Histograms(o.plot, "IPD, A: "+paths[0]+" vs B: "+paths[1], series, o.exp, o.logY); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// compareBarWidth is each side's longest bar in the side-by-side table.
const compareBarWidth = 24

func writeCompareText(w io.Writer, r *analyze.CompareReport, top int) {
	fs := units.FormatNs
	fmt.Fprintf(w, "A: %s (%d packets)\nB: %s (%d packets)\ntimestamp resolution %s\n",
		strings.Join(r.A.Files, ", "), r.A.Packets, strings.Join(r.B.Files, ", "), r.B.Packets, fs(r.ResolutionNs))
	fmt.Fprintf(w, "matched by (flow, PSN) within %s: %d matched, %d only in A, %d only in B\n", fs(r.MatchWindowNs), r.Matched, r.OnlyA, r.OnlyB)
	if d := r.OneWayDelayNs; d != nil {
		fmt.Fprintf(w, "one-way delay B-A: min %s p50 %s p90 %s p99 %s p99.9 %s max %s\n", fs(d.Min), fs(d.P50), fs(d.P90), fs(d.P99), fs(d.P999), fs(d.Max))
	}
	for i := range r.NumFlows() {
		if top > 0 && i >= top {
			break
		}
		f := r.Flow(i)
		if i == r.NumFlows()-1 && r.MaxFlows > 0 {
			fmt.Fprintf(w, "\nother (%ss after the first %d, --max-flows): A %d packets, B %d packets, %d matched, %d only in A, %d only in B; no IPD\n",
				r.By, r.MaxFlows, f.PacketsA, f.PacketsB, f.Matched, f.OnlyA, f.OnlyB)
			continue
		}
		ks := "no KS distance (one side has no IPD)"
		if f.KS != nil {
			ks = fmt.Sprintf("KS distance %.4f", *f.KS)
		}
		fmt.Fprintf(w, "\n%s %s: A %d packets, B %d packets; %s\n", r.By, f.Key, f.PacketsA, f.PacketsB, ks)
		for _, side := range []struct {
			name string
			s    analyze.IPDStats
		}{{"A", f.IPDA}, {"B", f.IPDB}} {
			s := side.s
			if s.Count == 0 {
				fmt.Fprintf(w, "  %s IPD: none\n", side.name)
				continue
			}
			fmt.Fprintf(w, "  %s IPD: min %s p50 %s p90 %s p99 %s p99.9 %s max %s mean %s\n",
				side.name, fs(s.Min), fs(s.P50), fs(s.P90), fs(s.P99), fs(s.P999), fs(s.Max), fs(s.Mean))
		}
		if d := f.OneWayDelayNs; d != nil {
			fmt.Fprintf(w, "  one-way delay (%d matched, %d only in A, %d only in B): min %s p50 %s p99 %s max %s\n",
				f.Matched, f.OnlyA, f.OnlyB, fs(d.Min), fs(d.P50), fs(d.P99), fs(d.Max))
		}
		writeSideBySide(w, f.HistA, f.HistB, f.IPDA.Count, f.IPDB.Count)
	}
}

// writeSideBySide writes the two histograms row by row with a bar each.
func writeSideBySide(w io.Writer, a, b analyze.HistCounts, totalA, totalB uint64) {
	most := max(a.Below, a.Above, b.Below, b.Above, 1)
	for i := range a.Bins {
		most = max(most, a.Bins[i].Count, b.Bins[i].Count)
	}
	pct := func(c, total uint64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * float64(c) / float64(total)
	}
	bar := func(c uint64) string { return strings.Repeat("#", int((c*compareBarWidth+most-1)/most)) }
	// A's bars are padded to their full width so that the | lines up.
	t := table{header: []string{"interval", "A", "", strings.Repeat(" ", compareBarWidth), "|", "B", "", ""}, leftCols: 1, leftLast: true, indent: "  "}
	row := func(label string, ca, cb uint64) {
		t.add(label, strconv.FormatUint(ca, 10), fmt.Sprintf("%.2f%%", pct(ca, totalA)), fmt.Sprintf("%-*s", compareBarWidth, bar(ca)), "|",
			strconv.FormatUint(cb, 10), fmt.Sprintf("%.2f%%", pct(cb, totalB)), bar(cb))
	}
	if a.Below+b.Below > 0 {
		row("< "+units.FormatNs(a.Bins[0].LoNs), a.Below, b.Below)
	}
	for i := 0; i < len(a.Bins); i++ {
		j := i
		for j+1 < len(a.Bins) && a.Bins[i].Count+b.Bins[i].Count == 0 && a.Bins[j+1].Count+b.Bins[j+1].Count == 0 {
			j++
		}
		if j-i < 2 {
			j = i
		}
		row("["+units.FormatNs(a.Bins[i].LoNs)+", "+units.FormatNs(a.Bins[j].HiNs)+")", a.Bins[i].Count, b.Bins[i].Count)
		i = j
	}
	row(">= "+units.FormatNs(a.Bins[len(a.Bins)-1].HiNs), a.Above, b.Above)
	t.write(w) // a write error sticks in the buffered writer and comes out of its Flush
}

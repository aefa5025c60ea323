package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/units"
)

// plotPFC draws the pause timeline: a row per link direction and
// priority (the most paused first, at most plots.MaxRows), a bar per
// pause the report lists, storms in their own color; and below it the
// share of time each row was paused per bin over every pause (past the
// listed ones too), which pauses too close together for the timeline's
// pixels still show. The analysis must keep PFCOptions.PausedTime.
func plotPFC(r *analyze.PFCReport, paths []string, path string, maxPauses int) error {
	type row struct {
		name string
		p    *analyze.PausePriority
	}
	var rows []row
	for _, l := range r.Links {
		for i := range l.Priorities {
			rows = append(rows, row{fmt.Sprintf("%s%s prio %d", l.Link, pausedPort(l, paths), l.Priorities[i].Priority), &l.Priorities[i]})
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("%w: no PFC or PAUSE frames", plots.ErrNothingToPlot)
	}
	if len(rows) > plots.MaxRows {
		slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(b.p.PausedNs, a.p.PausedNs) })
		warnf("--plot draws the %d of %d link directions and priorities paused longest: more would be unreadable", plots.MaxRows, len(rows))
		rows = rows[:plots.MaxRows]
	}
	sec := func(ns int64) float64 { return float64(ns-r.FirstNs) / 1e9 }
	var left int
	panel := plots.Panel{} // the rows name themselves
	for _, rw := range rows {
		pr := plots.Row{Name: rw.name}
		for _, iv := range rw.p.Intervals {
			pr.Bars = append(pr.Bars, plots.Bar{From: sec(iv.StartNs), To: sec(iv.EndNs)})
		}
		for _, iv := range rw.p.StormList {
			pr.Bars = append(pr.Bars, plots.Bar{From: sec(iv.StartNs), To: sec(iv.EndNs), Kind: 1})
		}
		if n := len(rw.p.Intervals); rw.p.IntervalsLeftOut > 0 && n > 0 {
			// Where the listed pauses end, the row goes on unknown.
			pr.Bars = append(pr.Bars, plots.Bar{From: sec(rw.p.Intervals[n-1].EndNs), To: sec(r.LastNs), Kind: 2})
		}
		left += rw.p.IntervalsLeftOut
		panel.Rows = append(panel.Rows, pr)
	}
	title := "PFC pauses per pause sender (MAC) and priority: " + strings.Join(r.Input.Files, ", ")
	kinds := []string{"paused", "storm (a pause longer than " + units.FormatNs(r.StormNs) + ")"}
	if left > 0 {
		kinds = append(kinds, fmt.Sprintf("not drawn: past the first %d pauses (--max-pauses)", maxPauses))
		warnf("--plot draws the first %d pauses of each link direction and priority (--max-pauses): %s not drawn", maxPauses, units.Count(left, "more pause"))
	}
	share := plots.Panel{YLabel: "time paused (% of each bin)"}
	for _, rw := range rows {
		share.Lines = append(share.Lines, pausedShare(rw.name, rw.p.PausedTime, r.FirstNs, r.LastNs))
	}
	return plots.Draw(path, plots.Figure{Title: title, Panels: []plots.Panel{panel, share},
		XLabel: "time since the first frame", From: 0, To: sec(r.LastNs),
		BarKinds: kinds})
}

// shareBins bounds the bins the paused share is drawn in.
const shareBins = 200

// pausedShare is the percentage of each bin of t (every pause, past
// those listed) that the priority was paused, as a line named name, up
// to lastNs.
func pausedShare(name string, t *analyze.PausedTime, firstNs, lastNs int64) plots.Line {
	l := plots.Line{Name: name}
	if t == nil || t.WidthNs <= 0 {
		return l
	}
	sec := func(ns int64) float64 { return float64(ns-firstNs) / 1e9 }
	if t.OriginNs > firstNs { // not paused before the first pause
		l.XS, l.YS = append(l.XS, 0, sec(t.OriginNs)), append(l.YS, 0, 0)
	}
	// Bins merged by twos to at most shareBins: narrower ones alias
	// with the pause cycle into a comb.
	per := 1
	for (len(t.Ns)+per-1)/per > shareBins {
		per *= 2
	}
	width := t.WidthNs * int64(per)
	for b := 0; b*per < len(t.Ns); b++ {
		from := t.OriginNs + int64(b)*width
		if from >= lastNs {
			break
		}
		var ns int64
		for _, v := range t.Ns[b*per : min((b+1)*per, len(t.Ns))] {
			ns += v
		}
		to := min(from+width, lastNs)
		l.XS = append(l.XS, sec(from), sec(to))
		share := min(100, 100*float64(ns)/float64(to-from))
		l.YS = append(l.YS, share, share)
	}
	return l
}

// pausedPort names, after a pause sender's MAC, the tapped port its pauses
// were captured on, when the capture names it (ibsim's "s1/1", a device)
// and recorded the direction: " to s1/1" for pauses the port received.
func pausedPort(l analyze.PauseLink, paths []string) string {
	if l.File < 0 || l.File >= len(paths) || l.Iface < 0 || l.Link == "" || strings.HasPrefix(l.Link, "iface ") {
		return ""
	}
	port := recordedPort(paths[l.File])
	if port == "" {
		return ""
	}
	return " " + directionName(port, l.Iface) + ","
}

package main

import (
	"cmp"
	"errors"
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
// share of time each row was paused per bin, which pauses too close
// together for the timeline's pixels still show.
func plotPFC(r *analyze.PFCReport, path string, maxPauses int) error {
	type row struct {
		name string
		p    *analyze.PausePriority
	}
	var rows []row
	for _, l := range r.Links {
		for i := range l.Priorities {
			rows = append(rows, row{fmt.Sprintf("%s prio %d", l.Link, l.Priorities[i].Priority), &l.Priorities[i]})
		}
	}
	if len(rows) == 0 {
		return errors.New("nothing to plot: no PFC or PAUSE frames")
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
		warnf("--plot draws the first %d pauses of each link direction and priority (--max-pauses): %d more not drawn", maxPauses, left)
	}
	share := plots.Panel{YLabel: "time paused (% of each bin)"}
	for i, rw := range rows {
		share.Lines = append(share.Lines, pausedShare(rw.name, rw.p.Intervals, panel.Rows[i].Bars, r.FirstNs, r.LastNs))
	}
	return plots.Draw(path, plots.Figure{Title: title, Panels: []plots.Panel{panel, share},
		XLabel: "time since the first frame", From: 0, To: sec(r.LastNs),
		BarKinds: kinds})
}

// pauseBins is how many bins of the observed span the paused share is
// counted in.
const pauseBins = 300

// pausedShare is the percentage of each of pauseBins bins of [firstNs,
// lastNs] that the listed pauses cover, as a line named name (drawn
// to where the listing ends, when pauses were left out of it).
func pausedShare(name string, pauses []analyze.PauseInterval, bars []plots.Bar, firstNs, lastNs int64) plots.Line {
	l := plots.Line{Name: name}
	span := lastNs - firstNs
	if span <= 0 {
		return l
	}
	width := float64(span) / pauseBins
	paused := make([]float64, pauseBins)
	for _, iv := range pauses {
		from, to := float64(iv.StartNs-firstNs), float64(iv.EndNs-firstNs)
		for b := max(0, int(from/width)); b < pauseBins && float64(b)*width < to; b++ {
			lo, hi := float64(b)*width, float64(b+1)*width
			paused[b] += max(0, min(hi, to)-max(lo, from))
		}
	}
	end := pauseBins
	if n := len(bars); n > 0 && bars[n-1].Kind == 2 { // the listing stops there
		end = min(pauseBins, int(bars[n-1].From*1e9/width)+1)
	}
	for b := range end {
		l.XS = append(l.XS, float64(b)*width/1e9, float64(b+1)*width/1e9)
		l.YS = append(l.YS, 100*paused[b]/width, 100*paused[b]/width)
	}
	return l
}

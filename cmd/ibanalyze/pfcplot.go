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
// pause the report lists, storms in their own color.
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
		left += rw.p.IntervalsLeftOut
		panel.Rows = append(panel.Rows, pr)
	}
	title := "PFC pauses per pause sender (MAC) and priority: " + strings.Join(r.Input.Files, ", ")
	if left > 0 {
		title = fmt.Sprintf("the first %d pauses per row (--max-pauses) of ", maxPauses) + title
		warnf("--plot draws the first pauses of each link direction and priority that --max-pauses lists: %d more not drawn", left)
	}
	return plots.Draw(path, plots.Figure{Title: title, Panels: []plots.Panel{panel},
		XLabel: "time since the first frame", From: 0, To: sec(r.LastNs),
		BarKinds: []string{"paused", "storm (a pause longer than " + units.FormatNs(r.StormNs) + ")"}})
}

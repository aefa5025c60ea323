package main

import (
	"fmt"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/units"
)

// maxPlotPorts bounds the switch ports a hops plot draws: each is a line
// in the legend.
const maxPlotPorts = 12

// plotHops draws, per switch egress port (the most residence time first,
// at most maxPlotPorts), the mean residence time and the mean queue
// occupancy of each series interval, over time since the first probe.
func plotHops(r *analyze.HopsReport, path string) error {
	ports := r.Ports
	if len(ports) == 0 {
		return fmt.Errorf("%w: no IFA 2.0 probes with hop metadata", plots.ErrNothingToPlot)
	}
	if len(ports) > maxPlotPorts {
		warnf("--plot draws the %d of %d switch ports with the most residence time: more would be unreadable", maxPlotPorts, len(ports))
		ports = ports[:maxPlotPorts]
	}
	res := plots.Panel{YLabel: "mean residence time", YNs: true}
	occ := plots.Panel{YLabel: "mean queue occupancy (device units)"}
	for _, p := range ports {
		name := p.HopID.String()
		rl, ol := plots.Line{Name: name + " residence"}, plots.Line{Name: name + " occupancy"}
		for _, pt := range p.Series {
			x := float64(pt.StartNs-r.OriginNs) / 1e9
			rl.XS, rl.YS = append(rl.XS, x), append(rl.YS, pt.MeanResidenceNs)
			ol.XS, ol.YS = append(ol.XS, x), append(ol.YS, pt.MeanOccupancy)
		}
		res.Lines, occ.Lines = append(res.Lines, rl), append(occ.Lines, ol)
	}
	title := "residence per hop (" + units.FormatNs(r.IntervalNs) + " intervals): " + strings.Join(r.Input.Files, ", ")
	return plots.Draw(path, plots.Figure{Title: title, XLabel: "time since the first probe", Panels: []plots.Panel{res, occ}})
}

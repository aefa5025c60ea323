package main

import (
	"fmt"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/telemetry"
)

// plotTick draws the capture's IPD phases (each phase's median IPD, the
// congestion episode shaded) above the PortXmitWait counter of the
// telemetry series used (its increase per microsecond over each sample
// interval, the samples used shaded), over time since the first data
// packet; port names the tapped port, whose sending or receiving
// direction (rep.Iface) the phases are of.
func plotTick(rep *analyze.TickReport, series []*telemetry.Series, port, path string) error {
	if len(rep.Phases) == 0 {
		return fmt.Errorf("%w: no IPD phases in %s", plots.ErrNothingToPlot, rep.File)
	}
	t0 := rep.Phases[0].StartNs
	sec := func(ns int64) float64 { return float64(ns-t0) / 1e9 }
	ipd := plots.Panel{YLabel: "median inter-packet delay", YNs: true,
		Spans: []plots.Span{{Name: "congestion episode", From: sec(rep.CongestionStartNs), To: sec(rep.CongestionEndNs)}}}
	l := plots.Line{Name: fmt.Sprintf("median IPD per phase, %s (LID %d)", directionName(port, rep.Iface), rep.SLID)}
	for _, p := range rep.Phases {
		l.XS = append(l.XS, sec(p.StartNs), sec(p.EndNs))
		l.YS = append(l.YS, float64(p.MedianIPDNs), float64(p.MedianIPDNs))
	}
	ipd.Lines = []plots.Line{l}
	panels := []plots.Panel{ipd}
	for _, s := range series {
		col := s.Col(telemetry.PortXmitWait)
		if s.Source.String() != rep.Series || col < 0 {
			continue
		}
		wait := plots.Panel{YLabel: "PortXmitWait (ticks per us)",
			Spans: []plots.Span{{Name: "telemetry samples used", From: sec(rep.WindowStartNs), To: sec(rep.WindowEndNs)}}}
		wl := plots.Line{Name: "PortXmitWait of " + rep.Series}
		for i := 1; i < s.Len(); i++ {
			r, flags := s.Rate(i, col)
			if flags&(telemetry.FlagNoPrev|telemetry.FlagNoTime|telemetry.FlagReset|telemetry.FlagMissing) != 0 {
				continue
			}
			d := s.Delta(i, col)
			// A step over the sample's interval.
			wl.XS = append(wl.XS, sec(d.StartNs), sec(d.EndNs))
			wl.YS = append(wl.YS, r/1e6, r/1e6)
		}
		wait.Lines = []plots.Line{wl}
		panels = append(panels, wait)
		break
	}
	return plots.Draw(path, plots.Figure{Title: fmt.Sprintf("PortXmitWait tick %.2f ns: %s against %s", rep.TickNs, rep.File, rep.Telemetry),
		XLabel: "time since the first data packet", Panels: panels, From: 0, To: sec(rep.Phases[len(rep.Phases)-1].EndNs)})
}

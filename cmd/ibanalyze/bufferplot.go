package main

import (
	"fmt"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
)

// plotBuffer draws each sender's occupancy (blocks it injected that the
// receiver has not yet seen) over time since the first sender's first
// packet, its plateau shaded and its estimate as a level: a panel per
// sender, so that senders sharing the buffer alike do not hide each other
// (all in one when there are more than maxBufferPanels).
func plotBuffer(rep *analyze.BufferReport, path string) error {
	var t0 int64
	for i, s := range rep.Senders {
		if i == 0 || s.FirstNs < t0 {
			t0 = s.FirstNs
		}
	}
	var panels []plots.Panel
	drawn := 0
	for _, s := range rep.Senders {
		if len(s.Series) > 0 {
			drawn++
		}
	}
	for _, s := range rep.Senders {
		if len(s.Series) == 0 {
			continue
		}
		if len(panels) == 0 || drawn <= maxBufferPanels {
			panels = append(panels, plots.Panel{YLabel: "occupancy (64-byte blocks)"})
		}
		panel := &panels[len(panels)-1]
		name := tappedPort(s.File)
		l := plots.Line{Name: "from " + name}
		for _, pt := range s.Series {
			l.XS, l.YS = append(l.XS, float64(pt.TsNs-t0)/1e9), append(l.YS, float64(pt.Blocks))
		}
		panel.Lines = append(panel.Lines, l)
		if s.Congested {
			from, to := float64(s.PlateauStartNs-t0)/1e9, float64(s.PlateauEndNs-t0)/1e9
			panel.Spans = append(panel.Spans, plots.Span{Name: "plateau of " + name, From: from, To: to})
			panel.Lines = append(panel.Lines, plots.Line{Name: fmt.Sprintf("%s: estimate %d blocks (%d bytes)", name, s.EstimateBlocks, s.EstimateBytes),
				XS: []float64{from, to}, YS: []float64{float64(s.EstimateBlocks), float64(s.EstimateBlocks)}})
		}
	}
	if len(panels) == 0 {
		return fmt.Errorf("%w: no sender's packets matched the receiver's", plots.ErrNothingToPlot)
	}
	return plots.Draw(path, plots.Figure{Title: "occupancy between senders and receiver " + tappedPort(rep.Receiver) + " (" + rep.Receiver + ")",
		XLabel: "time since the first packet sent (sender clock)", Panels: panels})
}

// maxBufferPanels bounds the panels of a buffer picture: past it the
// senders share one.
const maxBufferPanels = 4

package plots

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ibscope/ibscope/internal/outfile"
)

// The picture's size: a fixed width, and a height that grows with the
// panels and with the legend's rows, so that nothing is drawn past an edge.
const (
	Width        = 8 * vg.Inch
	onePanel     = 4.5 * vg.Inch // a figure of one panel
	stackedPanel = 2.6 * vg.Inch // each panel of a stack
	// A timeline's rows take timelineRow each, and its axes and labels
	// about an inch more, up to maxTimelineIn.
	timelineRow   = 0.28 * vg.Inch
	maxTimelineIn = 9 * vg.Inch
	titleGap      = 4  // points between the title and the panels
	edgeMargin    = 6  // points kept free at the left and right edges
	legendGap     = 6  // points above and below the legend
	legendColGap  = 16 // points between legend columns
	legendThumb   = 20 // points of a legend entry's line or box
	// legendOneColumn: up to this many entries, a name may take the
	// picture's whole width; past it, half.
	legendOneColumn = 6
)

// PanelHeight is the height of one panel in a figure of n panels.
func PanelHeight(n int) vg.Length {
	if n <= 1 {
		return onePanel
	}
	return stackedPanel
}

// entry is one name in a figure's legend and the mark that stands for it.
type entry struct {
	name  string
	thumb plot.Thumbnailer
}

// figure is what is drawn: a title, panels stacked over one x axis, each
// with its height, and one legend for all of them below the last.
type figure struct {
	title   string
	panels  []*plot.Plot
	heights []vg.Length
	legend  []entry
	// fixedY holds the panels whose y range was set (timelines): no
	// headroom is added to them.
	fixedY map[*plot.Plot]bool
}

// legendStyle is the legend's and title's text.
func legendStyle(size vg.Length) text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// legendLayout places the entries in as many columns as fit the
// picture's width, filled top to bottom, each as wide as its widest entry,
// and returns the columns' widths, the rows and the names as drawn: cut in
// the middle to the width, or to half of it when there are more than
// legendOneColumn entries, so that a long name does not leave the others
// one to a row.
func (f *figure) legendLayout(sty text.Style) (colW []vg.Length, rows int, names []string) {
	n := len(f.legend)
	if n == 0 {
		return nil, 0, nil
	}
	avail := Width - 2*edgeMargin
	limit := avail
	if n > legendOneColumn {
		limit = (avail - legendColGap) / 2
	}
	widths := make([]vg.Length, n)
	for i, e := range f.legend {
		name := fitText(sty, e.name, limit-legendThumb-sty.Rectangle(" ").Max.X)
		names = append(names, name)
		widths[i] = legendThumb + sty.Rectangle(" "+name).Max.X
	}
	for cols := n; cols >= 1; cols-- {
		rows = (n + cols - 1) / cols
		colW = colW[:0]
		total := vg.Length(0)
		for c := 0; c*rows < n; c++ {
			w := vg.Length(0)
			for _, x := range widths[c*rows : min(n, (c+1)*rows)] {
				w = max(w, x)
			}
			colW = append(colW, w)
			total += w
		}
		total += vg.Length(len(colW)-1) * legendColGap
		if total <= avail || cols == 1 {
			return colW, rows, names
		}
	}
	return colW, rows, names
}

// fitText cuts s in its middle, with "...", until it is at most w wide
// (its size: a centred style's rectangle reaches only half of it right of
// the point).
func fitText(sty text.Style, s string, w vg.Length) string {
	if sty.Rectangle(s).Size().X <= w {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n > 4; n-- {
		cut := string(r[:n/2]) + "..." + string(r[len(r)-(n-n/2):])
		if sty.Rectangle(cut).Size().X <= w {
			return cut
		}
	}
	return "..."
}

// entryHeight is one legend row's height.
func entryHeight(sty text.Style) vg.Length {
	return sty.Rectangle("Xg").Size().Y * 1.35
}

// size is the picture's height.
func (f *figure) height() vg.Length {
	h := vg.Length(0)
	for _, ph := range f.heights {
		h += ph
	}
	if f.title != "" {
		h += legendStyle(12).Rectangle(f.title).Size().Y + titleGap
	}
	if _, rows, _ := f.legendLayout(legendStyle(10)); rows > 0 {
		h += vg.Length(rows)*entryHeight(legendStyle(10)) + 2*legendGap
	}
	return h
}

// draw draws the figure onto c.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, edgeMargin, -edgeMargin, 0, 0)
	if f.title != "" {
		sty := legendStyle(12)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		title := fitText(sty, f.title, c.Max.X-c.Min.X)
		h := sty.Rectangle(title).Size().Y
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y}, title)
		c = draw.Crop(c, 0, 0, 0, -(h + titleGap))
	}
	sty := legendStyle(10)
	if colW, rows, names := f.legendLayout(sty); rows > 0 {
		eh := entryHeight(sty)
		lh := vg.Length(rows)*eh + 2*legendGap
		// Centred under the panels.
		total := vg.Length(len(colW)-1) * legendColGap
		for _, w := range colW {
			total += w
		}
		x := c.Min.X + (c.Max.X-c.Min.X-total)/2
		for i, name := range names {
			col, row := i/rows, i%rows
			if row == 0 && col > 0 {
				x += colW[col-1] + legendColGap
			}
			y := c.Min.Y + lh - legendGap - vg.Length(row+1)*eh
			thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y + eh*0.15}, Max: vg.Point{X: x + legendThumb, Y: y + eh*0.85}}}
			f.legend[i].thumb.Thumbnail(&thumb)
			c.FillText(sty, vg.Point{X: x + legendThumb + sty.Rectangle(" ").Max.X, Y: y + (eh-sty.Rectangle(name).Max.Y)/2 + sty.FontExtents().Descent}, name)
		}
		c = draw.Crop(c, 0, 0, lh, 0)
	}
	n := len(f.panels)
	if n == 0 {
		return
	}
	rows := make([][]*plot.Plot, n)
	for i, p := range f.panels {
		rows[i] = []*plot.Plot{p}
	}
	logLabels := make([]string, n)
	for i, p := range f.panels {
		if !f.fixedY[p] {
			headroom(p)
		}
		// gonum/plot makes room for a log axis's label as if centred at
		// the arithmetic middle of the range (near the top of a log
		// axis): a blank band under the title. Such a label is drawn
		// here instead, at the panel's left, centred.
		if _, log := p.Y.Scale.(plot.LogScale); log && p.Y.Label.Text != "" {
			logLabels[i], p.Y.Label.Text = p.Y.Label.Text, ""
		}
	}
	// Aligned: the panels' data areas have one width, under one another.
	canvases := plot.Align(rows, draw.Tiles{Rows: n, Cols: 1, PadY: vg.Points(4)}, c)
	for i, p := range f.panels {
		pc := canvases[i][0]
		if label := logLabels[i]; label != "" {
			sty := p.Y.Label.TextStyle
			sty.Rotation, sty.XAlign, sty.YAlign = math.Pi/2, draw.XCenter, draw.YTop
			h := sty.Rectangle(label).Size().X // rotated: its height is across
			pc.FillText(sty, vg.Point{X: pc.Min.X, Y: (pc.Min.Y + pc.Max.Y) / 2}, label)
			pc = draw.Crop(pc, h+p.Y.Label.Padding, 0, 0, 0)
		}
		p.Draw(pc)
	}
}

// write draws the figure and writes it to path (.png, .svg or .pdf) by
// outfile's rule: the drawing goes to a temporary file renamed into place
// once complete, so a plot that fails (out of memory, disk full) leaves no
// file under its name.
func (f *figure) write(path string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var cw vg.CanvasWriterTo
	if format == "svg" {
		// The fonts go in the file, as a PDF's do: the text was measured
		// in them, and a viewer without them (a browser has no Liberation
		// Serif) drew wider ones over the axes and the legend.
		cw = vgsvg.NewWith(vgsvg.UseWH(Width, f.height()), vgsvg.EmbedFonts(true))
	} else {
		var err error
		if cw, err = draw.NewFormattedCanvas(Width, f.height(), format); err != nil {
			return fmt.Errorf("write plot %s: %w", path, err)
		}
	}
	f.draw(draw.New(cw))
	out, err := outfile.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer out.Abort()
	if _, err := cw.WriteTo(out); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// newPanel is a panel with a grid and the y label given.
func newPanel(yLabel string) *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = yLabel
	p.Y.Tick.Marker = numberTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// shareX gives the panels one x range and time axis, named below the
// last.
func shareX(panels []*plot.Plot, xLabel string) {
	lo, hi := panels[0].X.Min, panels[0].X.Max
	for _, p := range panels[1:] {
		lo, hi = min(lo, p.X.Min), max(hi, p.X.Max)
	}
	for i, p := range panels {
		p.X.Min, p.X.Max = lo, hi
		p.X.Tick.Marker = timeTicks{unit: 1}
		if i == len(panels)-1 {
			p.X.Label.Text = xLabel
		}
	}
}

// headroom starts a linear y axis at 0 (what the analyses draw, rates,
// counts, times, is 0 or more: a level reads against none) and raises its
// top by 5% of its span (a log axis's by 5% of its decades), so that the
// highest line is not drawn on the frame.
func headroom(p *plot.Plot) {
	if _, log := p.Y.Scale.(plot.LogScale); log && p.Y.Min > 0 && p.Y.Max > p.Y.Min {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.05) // 5% of the span in decades
		return
	}
	if _, linear := p.Y.Scale.(plot.LinearScale); !linear {
		return
	}
	p.Y.Min = min(p.Y.Min, 0)
	if p.Y.Max > p.Y.Min {
		p.Y.Max += 0.05 * (p.Y.Max - p.Y.Min)
	}
}

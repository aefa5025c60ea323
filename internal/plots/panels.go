package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is a picture of panels stacked over one time axis (seconds since
// the capture's first packet, XLabel naming it), titled, with one legend
// below them naming every line, span and kind of bar.
type Figure struct {
	Title  string
	XLabel string // default: "time since the first packet"
	// From and To fix the time axis's range (seconds); both 0: the data's.
	From, To float64
	Panels   []Panel
	// BarKinds names the kinds of Bar (Bar.Kind indexes it): "pause",
	// "storm".
	BarKinds []string
}

// Panel is one panel: lines and shaded spans over time, or a timeline
// of named rows of bars (Rows set: one row per name, top first).
type Panel struct {
	YLabel string // with its unit
	// YNs: the y values are durations in ns, their ticks labelled with the
	// unit the axis's span reads best in ("2us").
	YNs   bool
	Lines []Line
	Spans []Span
	Rows  []Row
}

// Span is a stretch of time shaded across a panel and named in the
// legend: a congestion episode, a plateau.
type Span struct {
	Name     string
	From, To float64 // seconds
}

// Row is one row of a timeline: a name on the y axis and its bars.
type Row struct {
	Name string
	Bars []Bar
}

// Bar is one stretch of time in a timeline row, of a kind the figure
// names (Figure.BarKinds).
type Bar struct {
	From, To float64 // seconds
	Kind     int
}

// ErrNothingToPlot says the data holds nothing to draw (no probes, no
// pauses, no rows joined): the analysis itself may still have reported.
// Errors that say why wrap it.
var ErrNothingToPlot = errors.New("nothing to plot")

// MaxRows bounds a timeline's rows: each takes a quarter inch of height.
const MaxRows = 32

// Draw draws f to path (.png, .svg or .pdf).
func Draw(path string, f Figure) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if len(f.Panels) == 0 {
		return ErrNothingToPlot
	}
	fig := figure{title: f.Title}
	color, shade := 0, 0
	for _, pn := range f.Panels {
		p := newPanel(pn.YLabel)
		if pn.YNs {
			p.Y.Tick.Marker = timeTicks{unit: 1e-9}
			p.Y.Min = 0 // a duration's axis starts at none
		}
		h := PanelHeight(len(f.Panels))
		var spans []entry
		for _, s := range pn.Spans {
			sp := &span{from: s.From, to: s.To, color: spanColor(shade)}
			shade++
			p.Add(sp) // first: behind the lines
			spans = append(spans, entry{s.Name, sp})
		}
		if len(pn.Rows) > 0 {
			if len(pn.Rows) > MaxRows {
				return fmt.Errorf("plot %s: %d timeline rows, at most %d fit", path, len(pn.Rows), MaxRows)
			}
			tl := &timeline{rows: pn.Rows}
			p.Add(tl)
			ticks := make([]plot.Tick, len(pn.Rows))
			for i, r := range pn.Rows {
				ticks[i] = plot.Tick{Value: float64(len(pn.Rows) - 1 - i), Label: r.Name}
			}
			p.Y.Tick.Marker = plot.ConstantTicks(ticks)
			p.Y.Min, p.Y.Max = -0.5, float64(len(pn.Rows))-0.5
			if fig.fixedY == nil {
				fig.fixedY = map[*plot.Plot]bool{}
			}
			fig.fixedY[p] = true
			h = min(max(vg.Length(len(pn.Rows))*timelineRow+1.2*vg.Inch, 2*vg.Inch), maxTimelineIn)
		}
		for _, l := range pn.Lines {
			pts := make(plotter.XYs, len(l.XS))
			for j := range l.XS {
				pts[j] = plotter.XY{X: l.XS[j], Y: l.YS[j]}
			}
			ln, err := addLine(p, color, l.Name, pts)
			if err != nil {
				return err
			}
			fig.legend = append(fig.legend, entry{l.Name, ln})
			color++
		}
		fig.legend = append(fig.legend, spans...)
		fig.panels = append(fig.panels, p)
		fig.heights = append(fig.heights, h)
	}
	for k, name := range f.BarKinds {
		fig.legend = append(fig.legend, entry{name, barThumb(k)})
	}
	xLabel := f.XLabel
	if xLabel == "" {
		xLabel = "time since the first packet"
	}
	if f.To > f.From {
		for _, p := range fig.panels {
			p.X.Min, p.X.Max = f.From, f.To
		}
	}
	shareX(fig.panels, xLabel)
	return fig.write(path)
}

// spanColors shade spans: light enough for lines to show through.
var spanColors = []color.NRGBA{{R: 255, G: 200, B: 80, A: 90}, {R: 120, G: 180, B: 255, A: 70}, {R: 180, G: 230, B: 140, A: 90}, {R: 230, G: 150, B: 230, A: 70}}

func spanColor(i int) color.Color { return spanColors[i%len(spanColors)] }

// barColors are the timeline's kinds of bar: blue, red, light gray.
var barColors = []color.Color{
	color.NRGBA{R: 31, G: 119, B: 180, A: 255},
	color.NRGBA{R: 214, G: 39, B: 40, A: 255},
	color.NRGBA{R: 200, G: 200, B: 200, A: 255}, // the third: what is not known
}

func barColor(kind int) color.Color { return barColors[kind%len(barColors)] }

// span shades [from, to) over the panel's full height.
type span struct {
	from, to float64
	color    color.Color
}

func (s *span) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	x0, x1 := max(tx(s.from), c.Min.X), min(tx(s.to), c.Max.X)
	if x1 < x0 {
		return
	}
	x1 = max(x1, x0+1) // a span shorter than a point still shows
	c.SetColor(s.color)
	c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: c.Min.Y}, Max: vg.Point{X: x1, Y: c.Max.Y}}.Path())
}

func (s *span) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.from, s.to, math.Inf(1), math.Inf(-1)
}

func (s *span) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.color)
	c.Fill(c.Rectangle.Path())
}

// timeline draws each row's bars, the first row at the top.
type timeline struct{ rows []Row }

func (t *timeline) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	n := len(t.rows)
	for i, r := range t.rows {
		y := float64(n - 1 - i)
		y0, y1 := ty(y-0.35), ty(y+0.35)
		for _, b := range r.Bars {
			x0, x1 := max(tx(b.From), c.Min.X), min(tx(b.To), c.Max.X)
			if x1 < x0 {
				continue
			}
			// A pause shorter than a point still shows.
			x1 = max(x1, x0+vg.Points(0.75))
			c.SetColor(barColor(b.Kind))
			c.Fill(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}.Path())
		}
	}
}

func (t *timeline) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, r := range t.rows {
		for _, b := range r.Bars {
			xmin, xmax = min(xmin, b.From), max(xmax, b.To)
		}
	}
	if xmin > xmax {
		xmin, xmax = 0, 1
	}
	return xmin, xmax, -0.5, float64(len(t.rows)) - 0.5
}

// barThumb is a kind of bar's mark in the legend.
type barThumb int

func (k barThumb) Thumbnail(c *draw.Canvas) {
	c.SetColor(barColor(int(k)))
	c.Fill(c.Rectangle.Path())
}

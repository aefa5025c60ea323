package plots

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/ibscope/ibscope/internal/outfile"
)

// Hist is one histogram to draw: its legend name, len(Counts)+1 ascending
// bin edges in ns, and the count in each bin.
type Hist struct {
	Name    string
	EdgesNs []int64
	Counts  []uint64
}

// Line is one line to draw: X in seconds from the capture's start, Y in
// the unit the plot's label names.
type Line struct {
	Name string
	XS   []float64
	YS   []float64
}

// plotFormats are the file types gonum/plot writes that we offer.
var plotFormats = []string{".png", ".svg", ".pdf"}

// CheckPath refuses a plot file name whose type cannot be drawn, or that
// writing it would refuse (a folder that is not there, a symbolic link: see
// outfile.Check), so that commands can say so before any work is done.
func CheckPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range plotFormats {
		if ext == f {
			// What writing it would refuse, found before the analysis.
			return outfile.Check(path)
		}
	}
	return fmt.Errorf("plot %s: want a .png, .svg or .pdf file name", path)
}

// emptyBinFloor is where an empty bin is drawn on a log count axis, which
// cannot show 0.
const emptyBinFloor = 0.5

// Histograms draws histograms that share edges as step lines (x: IPD; y:
// occurrences, on a log axis with logY; x on a log axis with logX, for
// exponential bins) and writes path (.png, .svg or .pdf).
func Histograms(path, title string, series []Hist, logX, logY bool) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	p := newPanel("occurrences (packets)")
	p.X.Label.Text = "inter-packet delay"
	p.X.Tick.Marker = timeTicks{unit: 1e-6}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
		p.Y.Min = emptyBinFloor
	}
	if logX {
		p.X.Label.Text = "inter-packet delay (us)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
	}
	f := figure{title: title, panels: []*plot.Plot{p}, heights: []vg.Length{onePanel}}
	for i, h := range series {
		pts := make(plotter.XYs, 0, 2*len(h.Counts))
		for b, c := range h.Counts {
			lo, hi := float64(h.EdgesNs[b])/1e3, float64(h.EdgesNs[b+1])/1e3
			if logX && lo <= 0 {
				lo = hi / 2
			}
			y := float64(c)
			if logY && y < emptyBinFloor {
				y = emptyBinFloor
			}
			pts = append(pts, plotter.XY{X: lo, Y: y}, plotter.XY{X: hi, Y: y})
		}
		l, err := addLine(p, i, h.Name, pts)
		if err != nil {
			return err
		}
		l.Width = vg.Points(1.2)
		f.legend = append(f.legend, entry{h.Name, l})
	}
	return f.write(path)
}

// Lines draws time series (x: seconds) with the y label given (with its
// unit) and writes path (.png, .svg or .pdf).
func Lines(path, title, yLabel string, series []Line) error {
	return Draw(path, Figure{Title: title, Panels: []Panel{{YLabel: yLabel, Lines: series}}})
}

// maxTimeTicks is the most labelled ticks a time axis gets.
const maxTimeTicks = 10

// timeTicks marks a linear time axis whose values are in units of unit
// seconds (1: seconds, 1e-6: microseconds) at round steps (1, 2 or 5 times
// a power of ten) chosen from the span, 5 to 11 labelled ticks, each label
// with the unit the axis's largest value reads best in: "0", "50ms",
// "100ms".
type timeTicks struct{ unit float64 }

func (t timeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) || !(t.unit > 0) {
		return nil // plot.Axis widens an empty range before asking
	}
	step := niceStep((hi - lo) / maxTimeTicks)
	mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
	minor := step / 5
	if math.Round(mant) == 2 {
		minor = step / 4
	}
	sec := t.unit * math.Max(math.Abs(lo), math.Abs(hi))
	name, per := "ns", 1e-9
	for _, u := range []struct {
		name string
		sec  float64
	}{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}} {
		if sec >= u.sec {
			name, per = u.name, u.sec
			break
		}
	}
	decimals := max(0, int(math.Ceil(-math.Log10(step*t.unit/per)-1e-9)))
	first, last := math.Ceil(lo/minor-1e-9), math.Floor(hi/minor+1e-9)
	if !(last-first < 100) {
		// The span is below float64's resolution at this offset.
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	var ticks []plot.Tick
	for k := 0.0; k <= last-first; k++ {
		v := (first + k) * minor
		tk := plot.Tick{Value: v}
		if major := math.Round(v / step); math.Abs(v/step-major) < 1e-6 {
			tk.Value = major * step
			tk.Label = "0"
			if major != 0 {
				tk.Label = strconv.FormatFloat(tk.Value*t.unit/per, 'f', decimals, 64) + name
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// niceStep is the smallest 1, 2 or 5 times a power of ten at least x (> 0):
// niceCeil for axis values, which may be fractional (ms, us).
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// addLine adds series i's line, in its own color and dashes, to p; the
// figure's legend names it.
func addLine(p *plot.Plot, i int, name string, pts plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i)
	p.Add(l)
	return l, nil
}

// numberTicks are plot's default ticks labelled without trailing zeros,
// and with k, M or G from 10,000 up: "2500", "17.5k", "0.25".
type numberTicks struct{}

func (numberTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = formatNumber(ticks[i].Value)
		}
	}
	return ticks
}

func formatNumber(v float64) string {
	for _, u := range []struct {
		from, div float64
		suffix    string
	}{{1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}} {
		if math.Abs(v) >= u.from {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + u.suffix
		}
	}
	// Rounded to 6 significant digits: float steps such as 0.30000000000000004.
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// inRange drops the ticks a ticker gives outside the axis's range:
// plot.LogTicks gives the decade above the largest value too, whose label
// plot makes room for above the axis, a blank band under the title.
type inRange struct{ plot.Ticker }

func (r inRange) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range r.Ticker.Ticks(lo, hi) {
		if t.Value >= lo && t.Value <= hi {
			out = append(out, t)
		}
	}
	return out
}

package plots

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// labels returns the labelled ticks of a time axis from lo to hi.
func labels(tt timeTicks, lo, hi float64) []string {
	var out []string
	for _, tk := range tt.Ticks(lo, hi) {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

func TestTimeTicks(t *testing.T) {
	for _, c := range []struct {
		unit, lo, hi float64
		want         string
	}{
		{1, 0, 0.27, "0 50ms 100ms 150ms 200ms 250ms"},
		{1, 0, 2.3, "0 0.5s 1.0s 1.5s 2.0s"},
		{1, 0, 12e-6, "0 2us 4us 6us 8us 10us 12us"},
		{1e-6, 0, 5, "0 0.5us 1.0us 1.5us 2.0us 2.5us 3.0us 3.5us 4.0us 4.5us 5.0us"},
		{1e-6, 0, 320, "0 50us 100us 150us 200us 250us 300us"},
		{1e-6, 0.1, 0.9, "100ns 200ns 300ns 400ns 500ns 600ns 700ns 800ns 900ns"},
		{1, 100, 100.001, "100.0000s 100.0001s 100.0002s 100.0003s 100.0004s 100.0005s 100.0006s 100.0007s 100.0008s 100.0009s 100.0010s"},
	} {
		if got := strings.Join(labels(timeTicks{unit: c.unit}, c.lo, c.hi), " "); got != c.want {
			t.Errorf("unit %g, %g..%g: %q, want %q", c.unit, c.lo, c.hi, got, c.want)
		}
	}
	// A span below float64's resolution at its offset still gets ticks;
	// an empty one gets none.
	if ticks := (timeTicks{unit: 1}).Ticks(1e12, 1e12+1e-3); len(ticks) == 0 {
		t.Error("1e12 s + 1 ms: no ticks")
	}
	if ticks := (timeTicks{unit: 1}).Ticks(3, 3); len(ticks) != 0 {
		t.Errorf("3..3: %v", ticks)
	}
}

// TestPlotLinesTimeAxis: a line plot's time axis is labelled in the unit
// its span reads best in.
func TestPlotLinesTimeAxis(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines.svg")
	s := Line{Name: "flow a", XS: []float64{0, 0.1, 0.2, 0.27}, YS: []float64{1, 4, 4, 2}}
	if err := Lines(path, "t", "Gb/s", []Line{s}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">50ms<", ">250ms<", ">flow a<", ">time since the first packet<"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 2500: "2500", 17500: "17.5k", 0.25: "0.25", 0.1 + 0.2: "0.3", 3e6: "3M", 1.5e9: "1.5G", -20000: "-20k"} {
		if got := formatNumber(v); got != want {
			t.Errorf("%g: %q, want %q", v, got, want)
		}
	}
}

// TestLegendFits: a legend of many long names is laid out in columns
// inside the picture's width, a name too long for it cut in the middle,
// and the picture grows by the legend's rows.
func TestLegendFits(t *testing.T) {
	var series []Line
	for i := range 20 {
		series = append(series, Line{Name: fmt.Sprintf("rocev2 10.0.%d.1>10.0.0.3 qp 0x%06x", i, 0x100+i), XS: []float64{0, 1e-3}, YS: []float64{float64(i), float64(i + 1)}})
	}
	series = append(series, Line{Name: strings.Repeat("a-very-long-flow-name-", 30) + "END", XS: []float64{0, 1e-3}, YS: []float64{1, 2}})
	f := figure{title: "t"}
	for _, s := range series {
		f.legend = append(f.legend, entry{name: s.Name})
	}
	sty := legendStyle(10)
	colW, rows, names := f.legendLayout(sty)
	total := vg.Length(len(colW)-1) * legendColGap
	for _, w := range colW {
		total += w
	}
	if total > Width-2*edgeMargin || len(colW) < 2 || len(colW)*rows < len(series) {
		t.Errorf("%d columns %v in %d rows: %v wide, the picture %v", len(colW), colW, rows, total, Width)
	}
	last := names[len(names)-1]
	if !strings.Contains(last, "...") || !strings.HasSuffix(last, "END") || sty.Rectangle(last).Max.X > Width {
		t.Errorf("long name drawn as %q", last)
	}
	path := filepath.Join(t.TempDir(), "many.png")
	if err := Lines(path, "many flows", "Gb/s", series); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	cfg, err := png.DecodeConfig(fh)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 768 || cfg.Height <= 480 {
		t.Errorf("%dx%d: want 768 wide and taller than a picture without a legend", cfg.Width, cfg.Height)
	}
	if os.Getenv("PLOTS_KEEP") != "" {
		b, _ := os.ReadFile(path)
		os.WriteFile(os.Getenv("PLOTS_KEEP"), b, 0o644)
	}
}

// TestLogHistogramLabel: a log count axis keeps its label, which the
// figure draws itself (gonum/plot would make room for it near the top).
func TestLogHistogramLabel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.svg")
	h := Hist{Name: "flow a", EdgesNs: []int64{0, 100, 200, 400}, Counts: []uint64{1, 1900, 30}}
	if err := Histograms(path, "t", []Hist{h}, false, true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">occurrences (packets)<", ">1000<", ">flow a<"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
}

// TestTitleFits: a title longer than the picture (a pfc of seven
// captures) is cut in its middle to the width between the margins; the
// title is centred, and its style's rectangle reaches only half of it
// right of the centre, which let titles up to twice the width through.
func TestTitleFits(t *testing.T) {
	sty := legendStyle(12)
	sty.XAlign = -0.5 // centred, as draw draws it
	long := "PFC pauses per pause sender (MAC) and priority: " + strings.Repeat("sN.pcapng, ", 10) + "r.pcapng"
	w := Width - 2*edgeMargin
	got := fitText(sty, long, w)
	if size := sty.Rectangle(got).Size().X; size > w || !strings.Contains(got, "...") || !strings.HasSuffix(got, "r.pcapng") {
		t.Errorf("title drawn as %q, %v wide: want it cut in the middle to at most %v", got, size, w)
	}
}

// TestSVGCarriesItsFont: an SVG holds the font its text was measured in,
// so that a browser without it does not draw a wider one over the axes.
func TestSVGCarriesItsFont(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.svg")
	if err := Lines(path, "title", "Gb/s", []Line{{Name: "a flow", XS: []float64{0, 1e-3}, YS: []float64{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "@font-face") || !strings.Contains(string(b), "font-family:Liberation Serif") {
		t.Errorf("%s: no embedded font face for its text", path)
	}
}

package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pictures' size: 8 inches wide, at 96 dpi for a PNG.
const (
	pictureWidthPt = "576pt"
	pictureWidthPx = 768
)

// checkPicture checks that path is a valid PNG or SVG picture 8 inches
// wide, not trivially blank, and (SVG) whose text holds each of names as
// one whole label, so that a legend or axis names what it should.
func checkPicture(t *testing.T, path string, names ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(path) {
	case ".png":
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		checkPNG(t, path, img)
	case ".svg":
		dec := xml.NewDecoder(bytes.NewReader(b))
		var texts []string
		var width string
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed XML: %v", path, err)
			}
			switch el := tok.(type) {
			case xml.StartElement:
				for _, a := range el.Attr {
					if el.Name.Local == "svg" && a.Name.Local == "width" {
						width = a.Value
					}
				}
			case xml.CharData:
				if s := strings.TrimSpace(string(el)); s != "" {
					texts = append(texts, s)
				}
			}
		}
		if width != pictureWidthPt {
			t.Errorf("%s: width %q, want %s", path, width, pictureWidthPt)
		}
		for _, n := range names {
			found := false
			for _, s := range texts {
				found = found || s == n
			}
			if !found {
				t.Errorf("%s: no label %q among %q", path, n, texts)
			}
		}
	default:
		t.Fatalf("%s: not a picture this test reads", path)
	}
}

// checkPNG: the expected width, a plausible height, and a drawing: enough
// pixels that are not the white background, in several colors.
func checkPNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	r := img.Bounds()
	if r.Dx() != pictureWidthPx || r.Dy() < 200 || r.Dy() > 2000 {
		t.Errorf("%s: %dx%d, want %d wide and 200 to 2000 high", path, r.Dx(), r.Dy(), pictureWidthPx)
	}
	inked := 0
	colors := map[[3]uint32]bool{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				inked++
			}
			if len(colors) < 100 {
				colors[[3]uint32{cr >> 8, cg >> 8, cb >> 8}] = true
			}
		}
	}
	if frac := float64(inked) / float64(r.Dx()*r.Dy()); frac < 0.01 || len(colors) < 5 {
		t.Errorf("%s: %.2f%% of the pixels drawn, %d colors: want a drawing", path, 100*frac, len(colors))
	}
}

// plotCase is an analysis that draws a picture (--plot NAME.svg and
// NAME.png) holding names as text.
type plotCase struct {
	name  string
	args  []string
	names []string
}

// drawEach draws each case's picture into out as SVG and as PNG and checks
// it (checkPicture).
func drawEach(t *testing.T, out string, cases []plotCase) {
	t.Helper()
	for _, c := range cases {
		for _, ext := range []string{".svg", ".png"} {
			pic := filepath.Join(out, c.name+ext)
			args := append(append([]string{}, c.args...), "-q", "--plot", pic)
			if _, errOut, code := run(t, args...); code != 0 {
				t.Errorf("%s: exit %d\n%s", strings.Join(args, " "), code, errOut)
				continue
			}
			checkPicture(t, pic, c.names...)
		}
	}
}

// TestPlotsOnSimulatedRoCE: pfc, hops and correlate draw a picture of a
// simulated RoCE incast (PFC pauses, IFA probes, perfquery counters), each
// as SVG with its names in the legend and axes (a pause sender beside the
// tapped port it paused), and as PNG.
func TestPlotsOnSimulatedRoCE(t *testing.T) {
	dir := simPreset(t, "incast-small-roce")
	out := t.TempDir()
	r, s1 := filepath.Join(dir, "r.pcapng"), filepath.Join(dir, "s1.pcapng")
	drawEach(t, out, []plotCase{
		{"pfc", []string{"pfc", s1}, []string{"02:00:01:00:04:01 to s1/1, prio 0", "paused", "time since the first frame", "time paused (% of each bin)"}},
		{"pfc-listed", []string{"pfc", s1, "--max-pauses", "10"}, []string{"not drawn: past the first 10 pauses (--max-pauses)"}},
		{"hops", []string{"hops", r}, []string{"dev 0x00004/1 port 3 residence", "dev 0x00004/1 port 3 occupancy", "mean residence time", "2us"}},
		{"correlate", []string{"correlate", r, "--telemetry", filepath.Join(dir, "perfquery.txt"), "-o", filepath.Join(out, "j.parquet")},
			[]string{"lid:4/3 port_xmit_packets", "counters (packets/s)", "captured (packets/s)"}},
		{"correlate-csv", []string{"correlate", r, "--telemetry", filepath.Join(dir, "perfquery.txt"), "-o", filepath.Join(out, "j.csv")},
			[]string{"lid:4/3 port_rcv_packets"}},
		// A device the table cannot be read back from: joined again.
		{"correlate-device", []string{"correlate", r, "--telemetry", filepath.Join(dir, "perfquery.txt"), "--format", "arrow", "-o", "/dev/null"},
			[]string{"lid:3/1 port_xmit_packets"}},
		{"flows", []string{"flows", r}, []string{"rocev2 10.0.0.1>10.0.0.3 qp 0x000100", "Gb/s on the wire"}},
		{"ipd", []string{"ipd", r}, []string{"rocev2 10.0.0.1>10.0.0.3 qp 0x000100", "occurrences (packets)"}},
	})
}

// TestPlotsOnSimulatedIB: credits, buffer and tick draw a picture of a
// simulated InfiniBand incast, naming the tapped ports (credits' and
// tick's directions, buffer's senders).
func TestPlotsOnSimulatedIB(t *testing.T) {
	dir := simPreset(t, "incast-small")
	out := t.TempDir()
	s1, s2, r := filepath.Join(dir, "s1.pcapng"), filepath.Join(dir, "s2.pcapng"), filepath.Join(dir, "r.pcapng")
	drawEach(t, out, []plotCase{
		{"credits", []string{"credits", s1}, []string{"from s1/1, VL0: credits", "to s1/1, VL0: in flight", "credits and blocks in flight (64-byte blocks)"}},
		{"buffer", []string{"buffer", s1, s2, r}, []string{"from s1/1", "plateau of s2/1", "s1/1: estimate 512 blocks (32768 bytes)", "occupancy (64-byte blocks)"}},
		{"tick", []string{"tick", s1, "--telemetry", filepath.Join(dir, "perfquery.txt")},
			[]string{"median IPD per phase, from s1/1 (LID 1)", "congestion episode", "PortXmitWait of lid:1/1", "PortXmitWait (ticks per us)", "median inter-packet delay"}},
	})
	// A bad picture name is refused before any work.
	if _, errOut, code := run(t, "tick", s1, "--telemetry", filepath.Join(dir, "perfquery.txt"), "--plot", "x.gif"); code == 0 || !strings.Contains(errOut, ".png, .svg or .pdf") {
		t.Errorf("tick --plot x.gif: exit %d, %s", code, errOut)
	}
}

// A --plot or report -o that could not be written (its folder is not
// there, it is a symbolic link) is refused before any capture is read:
// the error names it, not the capture that is missing too.
func TestOutputRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-capture.pcap")
	link := filepath.Join(dir, "link.png")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.png"), link); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(dir, "no", "such", "folder")
	for _, args := range [][]string{
		{"ipd", missing, "--plot", noDir + ".png"},
		{"flows", missing, "--plot", link},
		{"pfc", missing, "--plot", noDir + ".svg"},
		{"report", missing, "-o", noDir + ".html"},
	} {
		_, errOut, code := run(t, args...)
		out := args[len(args)-1]
		if code != 1 || !strings.Contains(errOut, "create "+out) || strings.Contains(errOut, missing) {
			t.Errorf("ibanalyze %s: exit %d, want 1 and an error naming %s (before reading %s):\n%s", strings.Join(args, " "), code, out, missing, errOut)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ibscope/ibscope/internal/testenv"
)

// reportPage is what a report's HTML holds, as a parser reads it.
type reportPage struct {
	titles   []string // h2 and h3 texts
	errors   []string // class="error" texts
	pictures [][]byte // the PNGs of data: image sources
	external []string // src or href not data: nor #anchor
	scripts  int
}

func parseReport(t *testing.T, path string) reportPage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var p reportPage
	var text func(n *html.Node) string
	text = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			b.WriteString(text(c))
		}
		return b.String()
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "h2", "h3":
				p.titles = append(p.titles, text(n))
			case "script":
				p.scripts++
			}
			for _, a := range n.Attr {
				switch {
				case a.Key == "class" && a.Val == "error":
					p.errors = append(p.errors, text(n))
				case a.Key == "src" && strings.HasPrefix(a.Val, "data:image/png;base64,"):
					b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a.Val, "data:image/png;base64,"))
					if err != nil {
						t.Errorf("%s: an image's data does not decode: %v", path, err)
					}
					p.pictures = append(p.pictures, b)
				case (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#"):
					p.external = append(p.external, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return p
}

// TestReport writes the report of a simulated RoCE incast (flows, ipd,
// pfc, hops, correlate) and of an InfiniBand one (credits, tick, buffer):
// one page each, with a section and a picture for every analysis that
// applies, nothing fetched from elsewhere, no temporary folder named
// (correlate's table is "-o joined.parquet"), and (with chromium) rendered
// whole: no console message, no element past the window's width at
// 1280 and 800 pixels, every picture decoded.
func TestReport(t *testing.T) {
	out := t.TempDir()
	roce, ib := simPreset(t, "incast-small-roce"), simPreset(t, "incast-small")
	// A path with no room to break in names a capture: the page wraps it
	// rather than grow wider than the window.
	long := filepath.Join(roce, strings.Repeat("a-long-folder-name-without-spaces-", 6))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(roce, "s1.pcapng"), filepath.Join(long, "s1.pcapng")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		args     []string
		sections []string
		absent   []string // analyses the captures give nothing to
	}{
		{"roce", []string{"report", filepath.Join(long, "s1.pcapng"), filepath.Join(roce, "r.pcapng"), "--telemetry", filepath.Join(roce, "perfquery.txt")},
			[]string{"flows", "inter-packet delay", "PFC pauses", "hops", "correlate"}, []string{"credits", "PortXmitWait tick"}},
		{"ib", []string{"report", filepath.Join(ib, "s1.pcapng"), filepath.Join(ib, "s2.pcapng"), filepath.Join(ib, "r.pcapng"),
			"--telemetry", filepath.Join(ib, "perfquery.txt"), "--receiver", filepath.Join(ib, "r.pcapng")},
			[]string{"flows", "credits", "PortXmitWait tick", "buffer between the senders and " + filepath.Join(ib, "r.pcapng")}, []string{"PFC pauses", "hops"}},
	} {
		page := filepath.Join(out, c.name+".html")
		if _, errOut, code := run(t, append(c.args, "-o", page)...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", c.name, code, errOut)
		}
		p := parseReport(t, page)
		// The temporary folder the analyses wrote in is gone when the page is read.
		if b, err := os.ReadFile(page); err != nil || bytes.Contains(b, []byte("ibanalyze-report-")) {
			t.Errorf("%s: names the report's temporary folder (%v)", c.name, err)
		}
		for _, s := range c.sections {
			found := false
			for _, title := range p.titles {
				found = found || title == s
			}
			if !found {
				t.Errorf("%s: no section %q among %q", c.name, s, p.titles)
			}
		}
		for _, title := range p.titles {
			if slices.Contains(c.absent, title) {
				t.Errorf("%s: a section %q, which its captures give nothing to", c.name, title)
			}
		}
		if len(p.errors) > 0 || p.scripts > 0 || len(p.external) > 0 {
			t.Errorf("%s: errors %q, %d scripts, sources from elsewhere %q", c.name, p.errors, p.scripts, p.external)
		}
		if len(p.pictures) < len(c.sections) {
			t.Errorf("%s: %d pictures for %d analyses", c.name, len(p.pictures), len(c.sections))
		}
		for i, b := range p.pictures {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Errorf("%s: picture %d: %v", c.name, i+1, err)
				continue
			}
			checkPNG(t, c.name+" picture", img)
		}
		checkRendered(t, page)
	}
}

// measureScript, added to a copy of a report, writes into the page what
// a browser laid out: the window's and the document's widths, the
// elements wider than their box or reaching past the window, and the
// pictures it could not decode; and logs one console message, which
// shows the console check sees them.
const measureScript = `<script>
window.addEventListener("load", function () {
  var bad = [];
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== "inline") bad.push(e.tagName + " scrolls " + e.scrollWidth + ">" + e.clientWidth);
    if (r.right > window.innerWidth + 0.5) bad.push(e.tagName + " reaches " + r.right);
  });
  var imgs = Array.prototype.slice.call(document.images);
  var m = document.createElement("pre");
  m.id = "measure";
  m.textContent = JSON.stringify({inner: window.innerWidth, scroll: document.documentElement.scrollWidth, images: imgs.length,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length, bad: bad});
  document.body.appendChild(m);
  console.log("ibscope-probe");
});
</script>`

// checkRendered opens page in headless chromium: a screenshot of it
// renders with no console message; a measuring copy finds nothing cut.
func checkRendered(t *testing.T, page string) {
	t.Helper()
	chromium := testenv.MustHaveTool(t, "chromium")
	dir := t.TempDir()
	browse := func(args ...string) (stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
			"--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000"}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, e.String())
		}
		return o.String(), e.String()
	}
	// Chromium logs each console message as `INFO:CONSOLE:0] "text", source: URL (line)`.
	console := regexp.MustCompile(`(?m)CONSOLE[^\]]*\] "(.*)", source:`)
	shot := filepath.Join(dir, "shot.png")
	_, logs := browse("--screenshot="+shot, "--window-size=1280,2400", "file://"+page)
	if m := console.FindAllStringSubmatch(logs, -1); len(m) > 0 {
		t.Errorf("%s: console messages %q", page, m)
	}
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, logs)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r := img.Bounds(); r.Dx() != 1280 {
		t.Errorf("screenshot %dx%d, want 1280 wide", r.Dx(), r.Dy())
	}

	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The copy may run its one script: the report's policy allows none.
	policy := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="[^"]*">`)
	if !policy.Match(src) {
		t.Fatalf("%s: no Content-Security-Policy", page)
	}
	measured := policy.ReplaceAllString(string(src), `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`)
	measured = strings.Replace(measured, "</body>", measureScript+"</body>", 1)
	copyPath := filepath.Join(dir, "measure.html")
	if err := os.WriteFile(copyPath, []byte(measured), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 800} {
		dom, logs := browse("--dump-dom", "--window-size="+strconv.Itoa(width)+",900", "file://"+copyPath)
		if m := console.FindAllStringSubmatch(logs, -1); len(m) != 1 || m[0][1] != "ibscope-probe" {
			t.Errorf("width %d: console messages %q, want the probe's alone (the console check must see it, and nothing else may show)", width, m)
		}
		m := regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("width %d: no measurement in the page chromium rendered", width)
		}
		var got struct {
			Inner, Scroll, Images, Broken int
			Bad                           []string
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
			t.Fatalf("width %d: measurement %q: %v", width, m[1], err)
		}
		if got.Inner != width || got.Scroll > got.Inner || got.Images == 0 || got.Broken > 0 || len(got.Bad) > 0 {
			t.Errorf("%s at %d px: %+v: want the document as wide as the window, every picture decoded, nothing past an edge", page, width, got)
		}
	}
}

// TestCappedText: an analysis's text is kept up to the bound, and the
// page says how much more there was.
func TestCappedText(t *testing.T) {
	c := &cappedText{limit: 10}
	for range 3 {
		if n, err := c.Write([]byte("0123456789abcdef")); n != 16 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	if got := c.String(); !strings.HasPrefix(got, "0123456789\n... 38 B more not shown here") {
		t.Errorf("%q", got)
	}
	if got := (&cappedText{limit: 10}).String(); got != "" {
		t.Errorf("empty: %q", got)
	}
}

// A capture whose name starts with "-" (given after --) is analysed as a
// capture, not taken for a flag of the analyses the report runs.
func TestReportDashName(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "--json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if _, errOut, code := run(t, "report", "-o", "r.html", "--", "--json"); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	page, err := os.ReadFile("r.html")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("no capture files given")) {
		t.Errorf("the capture --json was taken for a flag:\n%s", regexp.MustCompile(`not analysed[^<]*`).FindAll(page, -1))
	}
	if p := parseReport(t, "r.html"); !slices.Contains(p.titles, "flows") {
		t.Errorf("no flows section among %q", p.titles)
	}
}

// A signal that stops an analysis's reading during a report leaves every
// later analysis nothing to read: the report then writes no page (one
// saying that captures full of packets hold none) and fails.
func TestReportInterrupted(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	readingStopped.Store(true) // as the first SIGINT leaves it (stopReading)
	defer readingStopped.Store(false)
	err := runReport([]string{filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap")}, reportOpts{out: page})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("report after a signal stopped the reading: %v, want an error saying it was interrupted", err)
	}
	if _, err := os.Stat(page); err == nil {
		t.Errorf("%s written after the reading was stopped", page)
	}
}

// A signal ends a report at once while it reads (here a FIFO nobody
// writes), and its temporary folder of pictures goes with it.
func TestReportSignalRemovesTemporaries(t *testing.T) {
	tmp := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "capture.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	cmd := exec.Command(ibanalyzeBin, "report", fifo, "-o", filepath.Join(t.TempDir(), "r.html"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(testenv.WaitDeadline, func() { cmd.Process.Kill() })
	defer timer.Stop()
	made := func() []string { m, _ := filepath.Glob(filepath.Join(tmp, "ibanalyze-report-*")); return m }
	testenv.WaitFor(t, 0, "report's temporary folder", func() bool { return len(made()) > 0 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("SIGINT while report reads: exit %d, want 130", code)
	}
	if left := made(); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

// What a signal does is said on stderr during a report too, not into the
// page the signal keeps from being written: here correlate waits on a
// telemetry FIFO nobody writes when the two SIGINTs come.
func TestReportSignalSaysSo(t *testing.T) {
	dir := simPreset(t, "incast-small")
	fifo := filepath.Join(t.TempDir(), "telemetry.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	cmd := exec.Command(ibanalyzeBin, "report", filepath.Join(dir, "s1.pcapng"), "--telemetry", fifo, "-o", filepath.Join(t.TempDir(), "r.html"))
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // nothing left in /tmp if the timer kills it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(testenv.WaitDeadline, func() { cmd.Process.Kill() })
	defer timer.Stop()
	// The writing end opens without waiting once correlate opened the
	// FIFO to read: flows and ipd have run.
	var w *os.File
	testenv.WaitFor(t, 0, "correlate reading the telemetry FIFO", func() bool {
		w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		return err == nil
	})
	defer w.Close()
	line, rest, _ := interruptTwice(t, cmd, stderr)
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(rest, "interrupt: stopped") {
		t.Errorf("two SIGINTs during a report: exit %d, stderr:\n%s%s\nwant 130 and \"interrupt: stopped\"", code, line, rest)
	}
}

// TestReportNoPictureKeepsText: an analysis that reports but has nothing
// to draw (credits on a capture with too few flow-control packets) keeps
// its text and says there is no picture, not that it was not analysed.
func TestReportNoPictureKeepsText(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	if _, errOut, code := run(t, "report", filepath.Join("..", "..", "testdata", "pcaps", "ib_native_erf.pcap"), "-o", page); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, ">credits</h3>")
	if start < 0 {
		t.Fatalf("no credits section in %s", page)
	}
	sec := s[start:]
	if end := strings.Index(sec[1:], "<h"); end >= 0 {
		sec = sec[:end+1]
	}
	if !strings.Contains(sec, "<p>no picture: no direction has both data and flow-control packets</p>") ||
		strings.Contains(sec, "not analysed") || !strings.Contains(sec, "<pre>") || !strings.Contains(sec, "not enough flow-control packets") {
		t.Errorf("credits section: want its text and 'no picture: ...', got\n%s", sec)
	}
}

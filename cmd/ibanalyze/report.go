package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/htmlreport"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/internal/version"
)

type reportOpts struct {
	out       string
	telemetry []string
	receiver  string
	rate      rateFlag
}

// rateArgs are --rate and --width as given, for each analysis run that
// takes a link rate.
func (o *reportOpts) rateArgs() []string {
	if o.rate.rate == "" {
		return nil
	}
	args := []string{"--rate", o.rate.rate}
	if o.rate.flags.Changed("width") {
		args = append(args, "--width", o.rate.width)
	}
	return args
}

func init() {
	var o reportOpts
	cmd := &cobra.Command{
		Use:   "report CAPTURE... -o report.html",
		Short: "One HTML page with the tables and pictures of every analysis that applies to the captures",
		Long: `report reads each capture once to see what it holds, runs on it every
analysis that applies, and writes one self-contained HTML page (-o) with
their text tables and pictures, to hand a colleague or attach to a ticket:

  every capture          a census: frames, IB/RoCE packets, flow-control
                         packets, PFC/PAUSE frames, IFA probes, time span
  IB/RoCE packets        flows and ipd
  PFC or PAUSE frames    pfc
  IFA 2.0 probes         hops
  flow-control packets   credits (with data packets)
  --telemetry            correlate, and tick on native IB captures
  --receiver             buffer, the other captures as its senders

Each capture is analysed on its own (taps at different ports are not
merged). The analyses run with their defaults, as 'ibanalyze ANALYSIS
CAPTURE --plot' would (pfc with --max-pauses 100000, so that its
picture draws every pause). One the packets turn out not to support (ipd
without a flow of two packets, credits on a capture that does not record
direction, tick without a congestion episode) says why in its section,
and the rest goes on. The exit status is 1 when a capture cannot be read
or is damaged, or buffer fails.

The page fetches nothing (no script, no font, no style from elsewhere;
its pictures are PNGs inside it) and fits windows from 800 pixels wide.
It is written by the output-file rule: complete or not at all. Each
capture is read once for the census and once more per analysis. A
SIGINT or SIGTERM stops the analysis running and the report ends
without writing the page (status 1); a second ends it at once.`,
		Example: `  ibanalyze report out.pcap -o report.html       census, flows and ipd; pfc, hops, credits when it holds their packets
  ibanalyze report s1.pcapng s2.pcapng r.pcapng --receiver r.pcapng -o report.html   + buffer at the receiver
  ibanalyze report s2.pcapng --telemetry perfquery.txt --rate 100G -o report.html    + correlate (and tick on IB)
  ibanalyze report out.pcap -o - > report.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = dashIsStdout(o.out)
			return runReport(args, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "the HTML `FILE` to write (required; - for standard output)")
	f.StringSliceVar(&o.telemetry, "telemetry", nil, "telemetry `FILE`s for correlate and tick (repeat or comma-separate)")
	f.StringVar(&o.receiver, "receiver", "", "the receiver's `CAPTURE` (one of the captures): add buffer, the others as senders")
	addRateFlag(f, &o.rate, "for the analyses that take one (flows, ipd, pfc, credits, buffer, tick, correlate)", "each one's own default")
	addJobsFlag(f) // the analyses it runs read with it
	cmd.MarkFlagRequired("output")
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

// census is what one capture holds, counted in one reading. Its row in
// the page names the file without its folder: the section titles give
// the whole path.
type census struct {
	path             string
	port             string // the name the file gives its interface, "" if none
	frames           int
	ib, roce         int // native IB and RoCE transport packets
	link             int // IB link-level flow-control packets
	pause            int // PFC and PAUSE frames
	ifa              int // IFA 2.0 probes with hop metadata
	undecodable      int
	firstNs, lastNs  int64
	fileErr, openErr error
}

func takeCensus(path string) census {
	c := census{path: path, port: recordedPort(path)}
	rd, err := capfile.Open(path)
	if err != nil {
		c.openErr = err
		return c
	}
	defer rd.Close()
	var f decode.Frame
	for {
		err := rd.Next(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		// Next returns a *DecodeError itself, never wrapped: a type
		// assertion, unlike errors.As, does not move it to the heap, an
		// allocation per frame.
		if _, undecodable := err.(*capfile.DecodeError); err != nil && !undecodable {
			c.fileErr = err
			break
		}
		c.frames++
		if !f.NoTs {
			if c.firstNs == 0 || f.TsNs < c.firstNs {
				c.firstNs = f.TsNs
			}
			c.lastNs = max(c.lastNs, f.TsNs)
		}
		if err != nil {
			c.undecodable++
			continue
		}
		switch f.Transport {
		case decode.TransportIB:
			c.ib++
		case decode.TransportRoCEv1, decode.TransportRoCEv2:
			c.roce++
		case decode.TransportLink:
			c.link++
		}
		if f.Has&(decode.HasPFC|decode.HasPause) != 0 {
			c.pause++
		}
		if f.Has&decode.HasIFAMetadata != 0 && len(f.IFAMetadata.Stack) > 0 { // a probe some switch stamped
			c.ifa++
		}
	}
	return c
}

func (c census) row() []string {
	span := "-"
	if c.lastNs > c.firstNs {
		span = units.FormatNs(c.lastNs - c.firstNs)
	}
	n := strconv.Itoa
	return []string{filepath.Base(c.path), cmp.Or(c.port, "-"), n(c.frames), n(c.ib + c.roce), n(c.link), n(c.pause), n(c.ifa), n(c.undecodable), span}
}

// warnSink, when set, collects the warnings warnf would print: the
// report shows each analysis's warnings in its section. warnMu guards it:
// the signal handler warns from its own goroutine.
var (
	warnMu   sync.Mutex
	warnSink *[]string
)

// collectWarning appends the warning to warnSink and reports whether it
// was set.
func collectWarning(w string) bool {
	warnMu.Lock()
	defer warnMu.Unlock()
	if warnSink == nil {
		return false
	}
	*warnSink = append(*warnSink, w)
	return true
}

// setWarnSink sets (or with nil clears) where warnings go.
func setWarnSink(sink *[]string) {
	warnMu.Lock()
	warnSink = sink
	warnMu.Unlock()
}

// runAnalysis runs the ibanalyze subcommand args[0] in this process as
// its command line would, with its flags from their defaults, and returns
// its standard output and warnings.
func runAnalysis(args []string) (out string, warnings []string, err error) {
	cmd, rest, err := rootCmd.Find(args)
	if err != nil {
		return "", nil, err
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else {
			_ = fl.Value.Set(fl.DefValue)
		}
		fl.Changed = false
	})
	if err := cmd.ParseFlags(rest); err != nil {
		return "", nil, err
	}
	buf := &cappedText{limit: maxSectionText}
	cmd.SetOut(buf)
	defer cmd.SetOut(nil)
	setWarnSink(&warnings)
	defer setWarnSink(nil)
	err = cmd.RunE(cmd, cmd.Flags().Args())
	if errors.Is(err, errReported) {
		err = nil // damage the warnings name: the report's census counts it
	}
	return buf.String(), warnings, err
}

// maxSectionText bounds the text an analysis puts in the page: ipd
// prints a histogram for every flow, and a million flows would make a
// page no browser opens.
const maxSectionText = 256 << 10

// cappedText keeps the first limit bytes written to it and counts the
// rest.
type cappedText struct {
	b       strings.Builder
	limit   int
	dropped int64
}

func (c *cappedText) Write(p []byte) (int, error) {
	keep := min(len(p), max(0, c.limit-c.b.Len()))
	c.b.Write(p[:keep])
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}

// String is the text kept, and how much was not.
func (c *cappedText) String() string {
	if c.dropped == 0 {
		return c.b.String()
	}
	return c.b.String() + fmt.Sprintf("\n... %s more not shown here: run the command above for all of it\n", units.FormatBytes(uint64(c.dropped)))
}

// analysisSection runs one analysis with --plot into dir and makes its
// section. The census chose it by what the capture holds, but only the
// analysis can tell whether the packets support it (ipd needs a flow of
// two packets, credits a capture that records direction, tick a
// congestion episode): its error is a note on why it did not apply,
// unless asked says the user asked for it by name (buffer's --receiver),
// when it is the section's error and failed is true.
func analysisSection(title, dir string, asked bool, args []string) (s htmlreport.Section, failed bool) {
	s = htmlreport.Section{Title: title, Level: 3}
	pic := filepath.Join(dir, "picture.png")
	out, warnings, err := runAnalysis(append(args, "--plot", pic))
	s.Text, s.Warnings = out, warnings
	s.Notes = []string{"ibanalyze " + strings.Join(args, " ")}
	switch {
	case errors.Is(err, plots.ErrNothingToPlot):
		// The analysis reported (its text is above); only its picture
		// has nothing to draw.
		s.Notes = append(s.Notes, "no picture: "+strings.TrimPrefix(err.Error(), plots.ErrNothingToPlot.Error()+": "))
	case err != nil && asked:
		s.Error = err.Error()
		failed = true
	case err != nil:
		s.Notes = append(s.Notes, "not analysed: "+err.Error())
	}
	if b, rerr := os.ReadFile(pic); rerr == nil {
		s.Pictures = []htmlreport.Picture{{Alt: title + " picture", PNG: b}}
		os.Remove(pic)
	}
	// The page's temporary folder is gone when it is read: correlate's
	// table is named as a file of the reader's own ("-o joined.parquet"),
	// which the command shown then writes where it is run.
	local := strings.NewReplacer(dir+string(filepath.Separator), "")
	s.Text, s.Error = local.Replace(s.Text), local.Replace(s.Error)
	for i := range s.Notes {
		s.Notes[i] = local.Replace(s.Notes[i])
	}
	for i := range s.Warnings {
		s.Warnings[i] = local.Replace(s.Warnings[i])
	}
	return s, failed
}

func runReport(paths []string, o reportOpts) error {
	if err := checkReportArgs(paths, o); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ibanalyze-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	removeAtExit(dir) // on a signal's exit too, which runs no deferred call

	rep := newReportPage(paths)
	var failed, damaged int
	for _, path := range paths {
		if readingStopped.Load() {
			break // interrupted: the page is not written
		}
		c := takeCensus(path)
		rep.Facts.Rows = append(rep.Facts.Rows, c.row())
		secs, bad, dmg := captureSections(c, dir, &o)
		rep.Sections = append(rep.Sections, secs...)
		failed += bad
		if dmg {
			damaged++
		}
	}
	if o.receiver != "" {
		s, bad := bufferSection(paths, o.receiver, dir, o.rateArgs())
		rep.Sections = append(rep.Sections, s)
		if bad {
			failed++
		}
	}

	if readingStopped.Load() {
		// A signal stopped one analysis's reading, and every one after it
		// read nothing: the page would say so of captures that hold the
		// packets. Complete or not at all.
		return fmt.Errorf("interrupted: %s not written (a report holds every analysis of the whole captures)", o.out)
	}
	if err := writeReportPage(o.out, rep); err != nil {
		return err
	}
	switch {
	case failed > 0:
		return fmt.Errorf("%s written; %d failed: their sections say why", o.out, failed)
	case damaged > 0:
		warnf("%s written; %s frames that could not be decoded (the census counts them)", o.out, units.CountVerb(damaged, "capture", "is damaged or holds", "are damaged or hold"))
		return errReported
	}
	return nil
}

// checkReportArgs refuses, before anything is read, what would only fail
// after minutes of analyses: standard input (each capture is read several
// times), an -o the page could not be written to (outfile.Check), a
// telemetry file that is not there, a --receiver that is not
// one of the captures.
func checkReportArgs(paths []string, o reportOpts) error {
	if err := stdinOnce(paths); err != nil {
		return err
	}
	if err := outfile.Check(o.out); err != nil {
		return err
	}
	for _, p := range paths {
		if p == capfile.Stdin {
			return errors.New("report reads each capture several times, and standard input can be read once: save it to a file first")
		}
	}
	for _, f := range o.telemetry {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("--telemetry: %w", err)
		}
	}
	if _, _, err := o.rate.given(); err != nil {
		return err
	}
	if o.receiver != "" && !containsPath(paths, o.receiver) {
		return fmt.Errorf("--receiver %s: not one of the captures given", o.receiver)
	}
	return nil
}

// newReportPage is the page before any capture is read: its title, what
// made it and when, and the census table's header (a row a capture
// follows).
func newReportPage(paths []string) htmlreport.Report {
	title := fmt.Sprintf("ibscope report: %d captures", len(paths))
	if len(paths) == 1 {
		title = "ibscope report: " + filepath.Base(paths[0])
	}
	return htmlreport.Report{Title: title,
		Subtitle: []string{"made by " + version.Read().String() + " on " + time.Now().UTC().Format("2006-01-02 15:04 UTC"),
			commandMeta()["ibscope.command"]},
		Facts: htmlreport.Table{Header: []string{"capture", "port", "frames", "IB/RoCE packets", "flow control", "pause frames", "IFA probes", "not decoded", "span"}}}
}

// captureSections makes one capture's sections: its own, which carries
// the census's damage and says which analyses did not apply, followed by
// one per analysis that did, run in the page's order. failed counts the
// sections that say something failed (the capture could not be opened:
// no analysis is run); damaged says the capture is damaged or holds
// frames that could not be decoded.
func captureSections(c census, dir string, o *reportOpts) (secs []htmlreport.Section, failed int, damaged bool) {
	sec := htmlreport.Section{Title: "capture " + c.path, Level: 2}
	if c.port != "" {
		sec.Title += " (port " + c.port + ")"
	}
	switch {
	case c.openErr != nil:
		sec.Error = c.openErr.Error()
		return []htmlreport.Section{sec}, 1, false
	case c.fileErr != nil:
		sec.Error = c.fileErr.Error() + " (read up to the damage)"
		damaged = true
	case c.undecodable > 0:
		damaged = true
	}
	runs, skipped := applicableAnalyses(c, dir, o.telemetry, o.rateArgs())
	if len(skipped) > 0 {
		sec.Notes = []string{"not applicable: " + strings.Join(skipped, "; ") + "."}
	}
	secs = append(secs, sec)
	for _, r := range runs {
		s, bad := analysisSection(r.title, dir, false, r.args)
		secs = append(secs, s)
		if bad {
			failed++
		}
	}
	return secs, failed, damaged
}

// reportRun is one analysis the report runs on a capture: its section's
// title and its ibanalyze command line.
type reportRun struct {
	title string
	args  []string
}

// applicableAnalyses chooses, from what the census counted, the analyses
// that apply to a capture, in the page's order, and names each one that
// does not with the reason. Choosing runs nothing: the analyses run
// after, one by one; each that takes a link rate gets rateArgs.
func applicableAnalyses(c census, dir string, telemetry, rateArgs []string) (runs []reportRun, skipped []string) {
	add := func(title string, args ...string) { runs = append(runs, reportRun{title, args}) }
	addRated := func(title string, args ...string) { add(title, append(args, rateArgs...)...) }
	c.path = pathArg(c.path)
	if c.ib+c.roce > 0 {
		addRated("flows", "flows", c.path)
		addRated("inter-packet delay", "ipd", c.path)
	} else {
		skipped = append(skipped, "flows and ipd (no IB or RoCE packets)")
	}
	if c.pause > 0 {
		// Every pause drawn, not the first 1,000 (16 bytes each).
		addRated("PFC pauses", "pfc", c.path, "--max-pauses", "100000")
	} else {
		skipped = append(skipped, "pfc (no PFC or PAUSE frames)")
	}
	if c.ifa > 0 {
		add("hops", "hops", c.path)
	} else {
		skipped = append(skipped, "hops (no IFA 2.0 probes)")
	}
	if c.link > 0 && c.ib > 0 {
		addRated("credits", "credits", c.path)
	} else {
		skipped = append(skipped, "credits (no flow-control packets with data)")
	}
	switch {
	case len(telemetry) > 0 && c.ib+c.roce > 0:
		addRated("correlate", "correlate", c.path, "--telemetry", strings.Join(telemetry, ","), "-o", filepath.Join(dir, "joined.parquet"))
	case len(telemetry) == 0:
		skipped = append(skipped, "correlate and tick (no --telemetry)")
	}
	if len(telemetry) > 0 && c.ib > 0 {
		addRated("PortXmitWait tick", "tick", c.path, "--telemetry", telemetry[0])
	}
	return runs, skipped
}

// bufferSection runs buffer with the receiver's capture last and every
// other capture as its senders. The user asked for it by name, so its
// error is the section's error, and failed says so.
func bufferSection(paths []string, receiver, dir string, rateArgs []string) (s htmlreport.Section, failed bool) {
	args := []string{"buffer"}
	for _, p := range paths {
		if p != receiver {
			args = append(args, pathArg(p))
		}
	}
	s, failed = analysisSection("buffer between the senders and "+receiver, dir, true, append(append(args, pathArg(receiver)), rateArgs...))
	s.Level = 2
	return s, failed
}

// writeReportPage writes the page by the output-file rule: complete or not
// at all.
func writeReportPage(path string, rep htmlreport.Report) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := htmlreport.Write(f, rep); err != nil {
		return err
	}
	return f.Commit()
}

// pathArg is a capture's path as an argument of the analyses' command
// lines: one that starts with "-" (given after report's --) is made
// "./-name", which their flag parsing cannot take for a flag.
func pathArg(p string) string {
	if strings.HasPrefix(p, "-") {
		return "./" + p
	}
	return p
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if q == p {
			return true
		}
	}
	return false
}

package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/telemetry"
)

// These tests hold every analysis to the Analysis contract: a report so
// far changes nothing, so reports on the way (Run with EveryNs) leave the
// final report as it is without them, and a report asked again after the
// last packet is the final one.

// reportJSON is a report and its error as the test compares them.
func reportJSON(t *testing.T, r any, err error) string {
	t.Helper()
	var b bytes.Buffer
	if f, ok := r.(*analyze.FlowsReport); ok && f != nil {
		if werr := f.WriteJSON(&b); werr != nil {
			t.Fatal(werr)
		}
	} else {
		j, jerr := json.Marshal(r)
		if jerr != nil {
			t.Fatal(jerr)
		}
		b.Write(j)
	}
	if err != nil {
		b.WriteString("\nerror: " + err.Error())
	}
	return b.String()
}

// spanNs is the packet time from the first packet of the stream open gives
// to its last.
func spanNs(t *testing.T, open func() *analyze.Stream) int64 {
	s := open()
	var p analyze.Packet
	first, last := int64(-1), int64(0)
	for s.Next(&p) == nil {
		if first < 0 {
			first = p.TsNs
		}
		last = max(last, p.TsNs)
	}
	return last - max(first, 0)
}

// checkReportsSoFar runs a fresh analysis from mk over the stream open
// gives straight through, and again with a report every everyNs of packet
// time, and wants the same final report; and a report after the last
// packet equal to the final one. It returns how many reports were made
// on the way.
func checkReportsSoFar[R any](t *testing.T, open func() *analyze.Stream, mk func() analyze.Analysis[R], everyNs int64) int {
	t.Helper()
	s := open()
	r, err := analyze.Run(s, mk(), analyze.RunOptions[R]{})
	want := reportJSON(t, r, err)

	s = open()
	a := mk()
	reports := 0
	lastUntil := int64(-1)
	r, err = analyze.Run(s, a, analyze.RunOptions[R]{EveryNs: everyNs, OnReport: func(untilNs int64, r R, err error) {
		if untilNs <= lastUntil {
			t.Errorf("report until %d after one until %d", untilNs, lastUntil)
		}
		lastUntil = untilNs
		reportJSON(t, r, err) // a report is used before the next packet
		reports++
	}})
	if got := reportJSON(t, r, err); got != want {
		t.Errorf("final report after %d reports on the way (every %d ns):\n%s\nwant, without them:\n%s", reports, everyNs, got, want)
	}
	r, err = a.Report(s)
	if got := reportJSON(t, r, err); got != want {
		t.Errorf("report after the last packet, asked again:\n%s\nwant the final report:\n%s", got, want)
	}
	return reports
}

// opener opens paths as one stream with opts each time it is called.
func opener(t *testing.T, opts analyze.StreamOptions, paths ...string) func() *analyze.Stream {
	return func() *analyze.Stream {
		s, err := analyze.OpenStream(paths, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func creditsAnalysis(t *testing.T, open func() *analyze.Stream) func() analyze.Analysis[*analyze.CreditReport] {
	nsPerByte, _ := analyze.InferNsPerByte(open()) // 0 when it cannot be inferred: no credit stalls then
	return func() analyze.Analysis[*analyze.CreditReport] {
		a, err := analyze.NewCreditsAnalysis(analyze.CreditOptions{NsPerByte: nsPerByte})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestReportsSoFarCaptures: every capture of testdata/pcaps through ipd
// (by flow, by link with phases and every opcode), flows and credits,
// with a report at every packet time step and at a tenth of the capture.
func TestReportsSoFarCaptures(t *testing.T) {
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures in testdata/pcaps: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			open := opener(t, analyze.StreamOptions{}, path)
			openLink := opener(t, analyze.StreamOptions{LinkPackets: true}, path)
			for _, every := range []int64{1, max(spanNs(t, open)/10, 1)} {
				var s *analyze.Stream
				streamOf := func() *analyze.Stream { s = open(); return s }
				// The IPD analysis takes its resolution from the stream it reads.
				ipd := func(cfg analyze.IPDOptions) func() analyze.Analysis[*analyze.IPDReport] {
					return func() analyze.Analysis[*analyze.IPDReport] {
						a, err := analyze.NewIPDAnalysis(cfg, func() int64 { return s.ResolutionNs() })
						if err != nil {
							t.Fatal(err)
						}
						return a
					}
				}
				checkReportsSoFar(t, streamOf, ipd(analyze.IPDOptions{}), every)
				checkReportsSoFar(t, streamOf, ipd(analyze.IPDOptions{By: analyze.ByLink, Phases: true, Opcodes: allOpcodes(t)}), every)
				checkReportsSoFar(t, open, func() analyze.Analysis[*analyze.FlowsReport] { return analyze.NewFlowsAnalysis(analyze.FlowsOptions{}) }, every)
				checkReportsSoFar(t, openLink, creditsAnalysis(t, openLink), every)
			}
		})
	}
}

// allOpcodes is every opcode, as ipd --opcodes all.
func allOpcodes(t *testing.T) []decode.Opcode {
	ops, err := decode.ParseOpcodes("all")
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestReportsSoFarIncast: a simulated incast (two senders, a switch whose
// buffer fills) through ipd, flows, credits, tick and buffer, with twenty
// reports on the way; buffer reports on the way through both its phases.
// Stamped to the ns and, as ibdump, to the microsecond (buffer and credits
// then centre the timestamps in their steps).
func TestReportsSoFarIncast(t *testing.T) {
	for _, quantumNs := range []int64{0, 1000} {
		t.Run(fmt.Sprintf("step%dns", max(quantumNs, 1)), func(t *testing.T) {
			reportsSoFarIncast(t, sweepCase{rate: "QDR", bufBytes: 32 << 10, mtuBytes: 2048, tickNs: 16, quantumNs: quantumNs})
		})
	}
}

func reportsSoFarIncast(t *testing.T, c sweepCase) {
	dir, _ := c.run(t)
	s1, s2, r := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap")
	for _, path := range []string{s1, s2, r} {
		open := opener(t, analyze.StreamOptions{}, path)
		openLink := opener(t, analyze.StreamOptions{LinkPackets: true}, path)
		every := max(spanNs(t, open)/20, 1)
		var s *analyze.Stream
		streamOf := func() *analyze.Stream { s = open(); return s }
		ipd := func() analyze.Analysis[*analyze.IPDReport] {
			a, err := analyze.NewIPDAnalysis(analyze.IPDOptions{Phases: true}, func() int64 { return s.ResolutionNs() })
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		for name, n := range map[string]int{
			"ipd":     checkReportsSoFar(t, streamOf, ipd, every),
			"flows":   checkReportsSoFar(t, open, func() analyze.Analysis[*analyze.FlowsReport] { return analyze.NewFlowsAnalysis(analyze.FlowsOptions{}) }, every),
			"credits": checkReportsSoFar(t, openLink, creditsAnalysis(t, openLink), every),
		} {
			if n < 10 {
				t.Errorf("%s %s: %d reports on the way, want about 20", name, filepath.Base(path), n)
			}
		}
	}

	series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	open := opener(t, analyze.StreamOptions{}, s1)
	if n := checkReportsSoFar(t, open, func() analyze.Analysis[*analyze.TickReport] {
		a, err := analyze.NewTickAnalysis(series, "perfquery.txt", analyze.TickOptions{Iface: -1})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}, max(spanNs(t, open)/20, 1)); n < 10 {
		t.Errorf("tick: %d reports on the way, want about 20", n)
	}

	// Buffer: the senders' phase, then the receiver's, each with reports
	// on the way, against the two straight through.
	senders, receiver := opener(t, analyze.StreamOptions{}, s1, s2), opener(t, analyze.StreamOptions{}, r)
	buffer := func(everyNs int64) string {
		a, err := analyze.NewBufferAnalysis(analyze.BufferOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reports := 0
		count := func(int64, []analyze.BufferSender, error) { reports++ }
		if _, err := analyze.Run(senders(), a.Sent(), analyze.RunOptions[[]analyze.BufferSender]{EveryNs: everyNs, OnReport: count}); err != nil {
			t.Fatal(err)
		}
		in := receiver()
		rep, err := analyze.Run(in, a, analyze.RunOptions[*analyze.BufferReport]{EveryNs: everyNs, OnReport: func(_ int64, r *analyze.BufferReport, err error) {
			reportJSON(t, r, err)
			reports++
		}})
		if everyNs > 0 && reports < 20 {
			t.Errorf("buffer: %d reports on the way, want about 40", reports)
		}
		got := reportJSON(t, rep, err)
		if rep, err := a.Report(in); reportJSON(t, rep, err) != got {
			t.Errorf("buffer: report after the last packet, asked again, differs from the final report")
		}
		return got
	}
	if got, want := buffer(max(spanNs(t, receiver)/20, 1)), buffer(0); got != want {
		t.Errorf("buffer: final report after reports on the way:\n%s\nwant, without them:\n%s", got, want)
	}
}

// tsProbe is an analysis that keeps the timestamps added, to check when
// Run hands out its reports.
type tsProbe struct{ ts []int64 }

func (a *tsProbe) Add(p *analyze.Packet)                   { a.ts = append(a.ts, p.TsNs) }
func (a *tsProbe) Err() error                              { return nil }
func (a *tsProbe) Report(*analyze.Stream) ([]int64, error) { return a.ts, nil }

// TestRunReportTimes: a report falls before the first packet stamped at or
// after each multiple of EveryNs past the first packet, once however many
// multiples a gap spans, and EveryNs near the end of time does not wrap.
func TestRunReportTimes(t *testing.T) {
	open := opener(t, analyze.StreamOptions{}, "../testdata/pcaps/rocev2_rping.pcap")
	span := spanNs(t, open)
	for _, every := range []int64{1, 1000, span / 7, span + 1, 1<<63 - 1} {
		a := &tsProbe{}
		var until []int64
		var added []int
		all, err := analyze.Run(open(), a, analyze.RunOptions[[]int64]{EveryNs: every, OnReport: func(untilNs int64, ts []int64, err error) {
			until, added = append(until, untilNs), append(added, len(ts))
		}})
		if err != nil {
			t.Fatal(err)
		}
		wantReports := 0
		for i := 1; i < len(all); i++ {
			if (all[i]-all[0])/every > (all[i-1]-all[0])/every {
				wantReports++
			}
		}
		if len(until) != wantReports || every <= span/7 && wantReports == 0 {
			t.Errorf("every %d ns: %d reports, want %d (one per boundary crossed)", every, len(until), wantReports)
		}
		for i, u := range until {
			n := added[i]
			// u is the first boundary past the last packet added, and the
			// next packet is at or past it.
			if (u-all[0])%every != 0 || (u-all[0])/every != (all[n-1]-all[0])/every+1 || all[n] < u {
				t.Errorf("every %d ns: report %d until %d after packet %d (at %d), before one at %d", every, i, u, n, all[n-1], all[n])
			}
		}
	}
}

// stopAt counts the packets added and closes stop at the packet stopAt.
type stopAt struct {
	added, at int
	stop      *atomic.Bool
}

func (a *stopAt) Add(*analyze.Packet) {
	if a.added++; a.added == a.at {
		a.stop.Store(true)
	}
}
func (a *stopAt) Err() error                          { return nil }
func (a *stopAt) Report(*analyze.Stream) (int, error) { return a.added, nil }

// TestRunStop: once RunOptions.Stop is set nothing more is read, and
// the packets already read into the reorder window are still added, so the
// report is on every packet the stream handed out; closed before the run,
// nothing is added.
func TestRunStop(t *testing.T) {
	const window = 4
	open := opener(t, analyze.StreamOptions{WindowPackets: window}, "../testdata/pcaps/rocev2_rping.pcap")
	all, _ := analyze.Run(open(), &stopAt{stop: new(atomic.Bool)}, analyze.RunOptions[int]{})
	for _, at := range []int{1, 10} {
		s := open()
		a := &stopAt{at: at, stop: new(atomic.Bool)}
		n, err := analyze.Run(s, a, analyze.RunOptions[int]{Stop: a.stop})
		// After packet at, the window holds the next window-1 packets read.
		if want := at + window - 1; err != nil || n != want || s.Stats().Packets != n || n >= all {
			t.Errorf("stop at packet %d of %d: %d added (%v), %d handed out; want %d", at, all, n, err, s.Stats().Packets, want)
		}
	}
	stop := new(atomic.Bool)
	stop.Store(true)
	s := open()
	if n, _ := analyze.Run(s, &stopAt{stop: new(atomic.Bool)}, analyze.RunOptions[int]{Stop: stop}); n != 0 || s.Stats().Packets != 0 {
		t.Errorf("stopped before the run: %d added, %d handed out", n, s.Stats().Packets)
	}
}

package sim_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/sim"
	"github.com/ibscope/ibscope/telemetry"
)

// incastReports runs a small congested incast with every tap's snap length
// set to snap and returns the ipd (with phases), credits, buffer and tick
// reports as JSON, the output directory replaced by "DIR".
func incastReports(t *testing.T, snap int) (dir string, reports map[string]string) {
	t.Helper()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 1 << 20, StaggerNs: 100_000, SamplePeriodNs: 20_000, CreditJitterNs: 4})
	for i := range s.Taps {
		s.Taps[i].SnapBytes = snap
	}
	dir = t.TempDir()
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	s1, s2, r := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap")
	reports = map[string]string{}
	add := func(name string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s (snap %d): %v", name, snap, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		reports[name] = strings.ReplaceAll(string(b), dir, "DIR")
	}

	st, err := analyze.OpenStream([]string{s1}, analyze.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ipd, err := runAnalysis(st, func() (analyze.Analysis[*analyze.IPDReport], error) {
		return analyze.NewIPDAnalysis(analyze.IPDOptions{Phases: true}, st.ResolutionNs)
	})
	st.Close()
	add("ipd", ipd, err)
	cr, err := analyze.Credits(files(s1), analyze.CreditOptions{})
	add("credits", cr, err)
	ba, err := analyze.NewBufferAnalysis(analyze.BufferOptions{})
	if err == nil {
		_, err = analyze.Run(openT(t, s1, s2), ba.Sent(), analyze.RunOptions[[]analyze.BufferSender]{})
	}
	var br *analyze.BufferReport
	if err == nil {
		br, err = analyze.Run(openT(t, r), ba, analyze.RunOptions[*analyze.BufferReport]{})
	}
	add("buffer", br, err)
	series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := runAnalysis(openT(t, s1), func() (analyze.Analysis[*analyze.TickReport], error) {
		return analyze.NewTickAnalysis(series, "perfquery.txt", analyze.TickOptions{Iface: -1})
	})
	add("tick", tk, err)
	return dir, reports
}

// TestSnapKeepsAnalyses: taps that keep only each packet's first 128 bytes
// (ERF rlen cut, wlen the wire length) give exactly the same ipd, credits,
// buffer and tick reports as taps that keep whole packets: the analyses take
// sizes from the LRH and the wire length, never from the bytes captured.
func TestSnapKeepsAnalyses(t *testing.T) {
	_, whole := incastReports(t, 0)
	dir, cut := incastReports(t, 128)

	// The snapped capture really is cut: every data packet 128 bytes of its
	// wire length, which the LRH's PktLen agrees with.
	r, err := capfile.Open(filepath.Join(dir, "s1.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f decode.Frame
	data, cutFrames := 0, 0
	for r.Next(&f) == nil {
		if f.Transport != decode.TransportIB {
			continue
		}
		data++
		if f.WireLen != f.IBLen {
			t.Fatalf("frame %d: wire length %d, LRH says %d bytes", f.Number, f.WireLen, f.IBLen)
		}
		if f.WireLen > 128 {
			if f.CapLen != 128 || !f.Truncated() {
				t.Fatalf("frame %d: %d of %d bytes captured, want 128", f.Number, f.CapLen, f.WireLen)
			}
			cutFrames++
		}
	}
	if data == 0 || cutFrames == 0 {
		t.Fatalf("%d IB packets, %d cut: want cut data packets", data, cutFrames)
	}

	for _, name := range []string{"ipd", "credits", "buffer", "tick"} {
		t.Logf("%s: %d bytes of JSON", name, len(whole[name]))
		if whole[name] != cut[name] {
			t.Errorf("%s report differs with --snap 128:\nwhole: %s\nsnap:  %s", name, whole[name], cut[name])
		}
	}
	// The comparison means something: the incast congested sender 1.
	if !strings.Contains(whole["ipd"], `"phases":[{`) || strings.Count(whole["ipd"], `"median_ipd_ns"`) < 2 {
		t.Errorf("ipd report has fewer than two phases: %s", whole["ipd"])
	}
}

// TestSnapValidation: a negative snap length, or one too short for the LRH
// and BTH, is refused naming the key.
func TestSnapValidation(t *testing.T) {
	for _, snap := range []int{-1, 1, sim.MinSnapBytes - 1} {
		s, err := sim.Preset("incast2015")
		if err != nil {
			t.Fatal(err)
		}
		s.Taps[1].SnapBytes = snap
		err = s.Validate()
		if err == nil || !strings.Contains(err.Error(), "taps[1].snap_bytes") {
			t.Errorf("snap_bytes %d: error %v, want one naming taps[1].snap_bytes", snap, err)
		}
	}
	for _, snap := range []int{0, sim.MinSnapBytes, 128} {
		s, _ := sim.Preset("incast2015")
		s.Taps[0].SnapBytes = snap
		if err := s.Validate(); err != nil {
			t.Errorf("snap_bytes %d: %v", snap, err)
		}
	}
}

// openT opens paths as one stream, closed when the test ends.
func openT(t testing.TB, paths ...string) *analyze.Stream {
	t.Helper()
	s, err := analyze.OpenStream(paths, analyze.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// files opens paths for analyze.Credits.
func files(paths ...string) analyze.Opener { return analyze.Files(paths, analyze.StreamOptions{}) }

// runAnalysis runs the analysis newAnalysis makes over s to its end.
func runAnalysis[R any](s *analyze.Stream, newAnalysis func() (analyze.Analysis[R], error)) (R, error) {
	a, err := newAnalysis()
	if err != nil {
		var zero R
		return zero, err
	}
	return analyze.Run(s, a, analyze.RunOptions[R]{})
}

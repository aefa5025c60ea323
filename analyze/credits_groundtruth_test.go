package analyze_test

// These tests run the simulator, whose truth is known, and hold the
// credits, buffer and tick estimates to it (issue #6).

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/protostate"
	"github.com/ibscope/ibscope/sim"
	"github.com/ibscope/ibscope/telemetry"
)

// sweepCase is one simulated incast: two senders, one receiver, one switch.
type sweepCase struct {
	rate      string
	bufBytes  int
	mtuBytes  int
	tickNs    float64
	quantumNs int64
	// recvQuantumNs, if set, is the receiver tap's step instead of
	// quantumNs: ends of different timestamp resolution.
	recvQuantumNs int64
}

func (c sweepCase) String() string {
	return fmt.Sprintf("%s/buf%dK/mtu%d/tick%g", c.rate, c.bufBytes>>10, c.mtuBytes, c.tickNs)
}

// run simulates the case sized so that the buffers fill several times
// over: each sender sends six buffers' worth plus 400 packets, the second
// starting a quarter of the way into the first (credit updates jittered by
// up to 4 ns, as real credit-return pipelines are), so the congestion episode
// lasts about 1.5 times the first sender's alone time and the telemetry
// samples it about 30 times.
func (c sweepCase) run(t *testing.T) (string, *sim.Truth) {
	t.Helper()
	dir := t.TempDir()
	packets := int64(c.bufBytes/c.mtuBytes)*6 + 400
	lr, err := protostate.ParseLinkRate(c.rate)
	if err != nil {
		t.Fatal(err)
	}
	pktNs := float64(c.mtuBytes+26) * 8 / lr.DataGbps(4)
	s := sim.Incast(sim.IncastConfig{Rate: c.rate, Lanes: 4, MTUBytes: c.mtuBytes, VLBufferBytes: c.bufBytes,
		TickNs: c.tickNs, Senders: 2, BytesPerSender: packets * int64(c.mtuBytes),
		SamplePeriodNs: int64(pktNs * float64(packets) / 20), QuantizeNs: c.quantumNs, CreditJitterNs: 4})
	s.Flows[1].StartNs = s.Flows[0].StartNs + int64(pktNs*float64(packets)/4)
	if c.recvQuantumNs != 0 {
		s.Taps[len(s.Taps)-1].QuantizeNs = c.recvQuantumNs // the receiver's tap is the last
	}
	tr, err := sim.Run(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tr
}

func relErr(est, truth float64) float64 { return (est - truth) / truth }

// TestGroundTruthSweep is the sweep: rates SDR, QDR, EDR, HDR; switch
// buffers of 16, 32, 48 and 128 KiB per VL; MTUs 1024, 2048, 4096; ticks
// of 4, 16 and 64 ns in rotation. Every estimate must be within 5% of the
// truth, except that a buffer read by packet counting can only be placed
// within one packet: when the buffer holds fewer than 10 packets (so half a
// packet is more than 5%), the truth must lie in the reported interval.
func TestGroundTruthSweep(t *testing.T) {
	var cases []sweepCase
	ticks := []float64{4, 16, 64}
	for _, rate := range []string{"SDR", "QDR", "EDR", "HDR"} {
		for _, buf := range []int{16 << 10, 32 << 10, 48 << 10, 128 << 10} {
			for _, mtu := range []int{1024, 2048, 4096} {
				cases = append(cases, sweepCase{rate: rate, bufBytes: buf, mtuBytes: mtu, tickNs: ticks[len(cases)%len(ticks)]})
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-26s %9s %9s %7s %9s %15s %7s %8s %8s %7s %8s\n", "case", "truth B", "credits", "err",
		"buffer", "[lo,hi)", "err", "tick", "truth", "err", "stall")
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			dir, tr := c.run(t)
			swIn := tr.Port("sw/1")
			truthBuf := swIn.VLBufferBytes[0]

			cr, err := analyze.Credits(files(filepath.Join(dir, "s1.pcap")), analyze.CreditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var l *analyze.CreditLink
			for i := range cr.Links {
				if cr.Links[i].Iface == sim.IfaceTx && cr.Links[i].VL == 0 {
					l = &cr.Links[i]
				}
			}
			if l == nil {
				t.Fatalf("credits found no data direction in s1.pcap: %+v", cr.Links)
			}
			if l.FCTBSMismatches != 0 || l.FCTBSChecks == 0 {
				t.Errorf("FCTBS check: %d mismatches in %d checks, want 0 in more than 0", l.FCTBSMismatches, l.FCTBSChecks)
			}
			if e := relErr(float64(l.BufferBytes), float64(truthBuf)); math.Abs(e) > 0.05 {
				t.Errorf("credits buffer %d bytes, truth %d (%.1f%%)", l.BufferBytes, truthBuf, 100*e)
			}
			stallTruth := tr.Port("s1/1").XmitWaitNs
			if e := relErr(float64(l.CreditStallNs), float64(stallTruth)); math.Abs(e) > 0.05 {
				t.Errorf("credit stall %d ns, truth %d (%.1f%%)", l.CreditStallNs, stallTruth, 100*e)
			}

			br, err := analyze.RunBuffer(openT(t, filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap")), openT(t, filepath.Join(dir, "r.pcap")), analyze.BufferOptions{})
			if err != nil {
				t.Fatal(err)
			}
			bs := br.Senders[0]
			for _, s := range br.Senders {
				if !s.Congested {
					t.Fatalf("%s: no plateau found", s.File)
				}
				if truthBuf < s.LowBytes || truthBuf >= s.HighBytes {
					t.Errorf("%s: truth %d outside the estimate's interval [%d, %d)", filepath.Base(s.File), truthBuf, s.LowBytes, s.HighBytes)
				}
				halfPacket := float64(s.PacketBlocks*64) / 2
				if e := relErr(float64(s.EstimateBytes), float64(truthBuf)); math.Abs(e) > 0.05 && halfPacket <= 0.05*float64(truthBuf) {
					t.Errorf("%s: buffer estimate %d, truth %d (%.1f%%)", filepath.Base(s.File), s.EstimateBytes, truthBuf, 100*e)
				}
			}

			series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
			if err != nil {
				t.Fatal(err)
			}
			tk, err := analyze.RunTick(openT(t, filepath.Join(dir, "s1.pcap")), series, "perfquery.txt", analyze.TickOptions{Iface: -1})
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr(tk.TickNs, tr.TickNs); math.Abs(e) > 0.05 {
				t.Errorf("tick %.3f ns, truth %g (%.1f%%)", tk.TickNs, tr.TickNs, 100*e)
			}
			// The congestion episode found by phase detection against the
			// simulator's longest episode of waiting on s1's port.
			var episode sim.Interval
			for _, iv := range tr.Port("s1/1").Congestion {
				if iv.EndNs-iv.StartNs > episode.EndNs-episode.StartNs {
					episode = iv
				}
			}
			if e := relErr(float64(tk.CongestionEndNs-tk.CongestionStartNs), float64(episode.EndNs-episode.StartNs)); math.Abs(e) > 0.05 {
				t.Errorf("congestion %d ns long, truth %d (%.1f%%)", tk.CongestionEndNs-tk.CongestionStartNs, episode.EndNs-episode.StartNs, 100*e)
			}
			if e := relErr(tk.TickSymbols, tr.Port("s1/1").TickSymbols); math.Abs(e) > 0.05 {
				t.Errorf("tick %.2f symbols, truth %.2f (%s, inferred %s)", tk.TickSymbols, tr.Port("s1/1").TickSymbols, c.rate, tk.Rate)
			}
			fmt.Fprintf(&table, "%-26s %9d %9d %6.1f%% %9d %15s %6.1f%% %8.3f %8g %6.2f%% %7.2f%%\n", c, truthBuf, l.BufferBytes,
				100*relErr(float64(l.BufferBytes), float64(truthBuf)), bs.EstimateBytes, fmt.Sprintf("[%d,%d)", bs.LowBytes, bs.HighBytes),
				100*relErr(float64(bs.EstimateBytes), float64(truthBuf)), tk.TickNs, tr.TickNs, 100*relErr(tk.TickNs, tr.TickNs),
				100*relErr(float64(l.CreditStallNs), float64(stallTruth)))
		})
	}
	t.Logf("estimates against truth (buffer: sender s1; stall: credit stall against the simulator's waiting time)\n%s", table.String())
}

// TestGroundTruthMicrosecondTimestamps: captures stamped in whole
// microseconds, as ibdump writes them, at SDR where a packet takes 2 us.
// The credit-based buffer is exact whatever the timestamps; the buffer and
// tick estimates hold within 5%; credit stalls cannot be timed and say so.
func TestGroundTruthMicrosecondTimestamps(t *testing.T) {
	for _, c := range []sweepCase{
		{rate: "SDR", bufBytes: 32 << 10, mtuBytes: 2048, tickNs: 16, quantumNs: 1000},
		{rate: "SDR", bufBytes: 128 << 10, mtuBytes: 2048, tickNs: 64, quantumNs: 1000},
		// Senders stamped in microseconds, the receiver in nanoseconds,
		// and the reverse: the buffer estimate must not lean on rounding
		// (it did: a whole packet too many from microsecond senders).
		{rate: "SDR", bufBytes: 32 << 10, mtuBytes: 2048, tickNs: 16, quantumNs: 1000, recvQuantumNs: 1},
		{rate: "QDR", bufBytes: 32 << 10, mtuBytes: 2048, tickNs: 16, quantumNs: 1000, recvQuantumNs: 1},
		{rate: "QDR", bufBytes: 48 << 10, mtuBytes: 2048, tickNs: 16, quantumNs: 1, recvQuantumNs: 1000},
	} {
		name := c.String()
		if c.recvQuantumNs != 0 {
			name += fmt.Sprintf("/send%dns/recv%dns", c.quantumNs, c.recvQuantumNs)
		}
		t.Run(name, func(t *testing.T) {
			dir, tr := c.run(t)
			truthBuf := tr.Port("sw/1").VLBufferBytes[0]
			cr, err := analyze.Credits(files(filepath.Join(dir, "s1.pcap")), analyze.CreditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			l := cr.Links[0]
			if l.BufferBytes != truthBuf || l.FCTBSMismatches != 0 {
				t.Errorf("credits: buffer %d (truth %d), %d FCTBS mismatches", l.BufferBytes, truthBuf, l.FCTBSMismatches)
			}
			if c.quantumNs == 1000 && (cr.TimestampStepNs != 1000 || l.CreditStallNs != -1 || len(cr.Problems) == 0) {
				t.Errorf("credits: step %d ns, stall %d, problems %q: want 1000, -1 and a reason", cr.TimestampStepNs, l.CreditStallNs, cr.Problems)
			}
			lr, err := protostate.ParseLinkRate(c.rate)
			if err != nil {
				t.Fatal(err)
			}
			br, err := analyze.RunBuffer(openT(t, filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap")), openT(t, filepath.Join(dir, "r.pcap")), analyze.BufferOptions{NsPerByte: 8 / lr.DataGbps(4)})
			if err != nil {
				t.Fatal(err)
			}
			// Sender 1, whose packets ran uncongested first: the clock
			// offset is read from those.
			if bs := br.Senders[0]; math.Abs(relErr(float64(bs.EstimateBytes), float64(truthBuf))) > 0.05 || truthBuf < bs.LowBytes || truthBuf >= bs.HighBytes {
				t.Errorf("buffer estimate %d in [%d, %d), truth %d", bs.EstimateBytes, bs.LowBytes, bs.HighBytes, truthBuf)
			}
			series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
			if err != nil {
				t.Fatal(err)
			}
			tk, err := analyze.RunTick(openT(t, filepath.Join(dir, "s1.pcap")), series, "perfquery.txt", analyze.TickOptions{Iface: -1, Rate: lr, Lanes: 4})
			if err != nil {
				t.Fatal(err)
			}
			// Microsecond stamps on packets shorter than a microsecond
			// cannot time the waits: tick must say its figure is rough.
			if coarse := c.quantumNs >= 1000 && c.rate != "SDR"; coarse && len(tk.Warnings) == 0 {
				t.Errorf("tick %.3f ns from microsecond stamps at %s without a warning", tk.TickNs, c.rate)
			} else if e := relErr(tk.TickNs, tr.TickNs); !coarse && math.Abs(e) > 0.05 {
				t.Errorf("tick %.3f ns, truth %g", tk.TickNs, tr.TickNs)
			}
			t.Logf("credits %d B, buffer %d B (truth %d); tick %.3f ns (truth %g)", l.BufferBytes, br.Senders[0].EstimateBytes, truthBuf, tk.TickNs, tr.TickNs)
		})
	}
}

// benchIncast simulates a QDR incast of 2 x 16 MiB (16,384 data packets)
// for the benchmarks.
func benchIncast(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 16 << 20, StaggerNs: 1_000_000, SamplePeriodNs: 100_000, CreditJitterNs: 4})
	if _, err := sim.Run(s, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

func BenchmarkCredits(b *testing.B) {
	dir := benchIncast(b)
	for b.Loop() {
		if _, err := analyze.Credits(files(filepath.Join(dir, "s1.pcap")), analyze.CreditOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuffer(b *testing.B) {
	dir := benchIncast(b)
	for b.Loop() {
		if _, err := analyze.RunBuffer(openT(b, filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap")), openT(b, filepath.Join(dir, "r.pcap")), analyze.BufferOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTick(b *testing.B) {
	dir := benchIncast(b)
	series, err := telemetry.ReadFile(filepath.Join(dir, "perfquery.txt"), nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := analyze.RunTick(openT(b, filepath.Join(dir, "s1.pcap")), series, "perfquery.txt", analyze.TickOptions{Iface: -1}); err != nil {
			b.Fatal(err)
		}
	}
}

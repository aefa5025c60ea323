package analyze_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/sim"
)

// TestBufferWithoutCongestion: one sender alone never fills the buffer;
// the report says so instead of inventing a plateau. And captures that
// share no packet are refused.
func TestBufferWithoutCongestion(t *testing.T) {
	dir := t.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 256 << 10, StaggerNs: 5_000_000, SamplePeriodNs: 100_000})
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	rep, err := analyze.RunBuffer(openT(t, filepath.Join(dir, "s1.pcap")), openT(t, filepath.Join(dir, "r.pcap")), analyze.BufferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bs := rep.Senders[0]; bs.Congested || bs.EstimateBytes != 0 || bs.Matched != 128 {
		t.Errorf("sender alone: congested %v, estimate %d, matched %d; want no estimate from 128 matched packets", bs.Congested, bs.EstimateBytes, bs.Matched)
	}
	_, err = analyze.RunBuffer(openT(t, filepath.Join(dir, "s1.pcap")), openT(t, filepath.Join(dir, "s2.pcap")), analyze.BufferOptions{NsPerByte: 0.25})
	if err == nil || !strings.Contains(err.Error(), "no data packet") {
		t.Errorf("unrelated captures: error %v, want one saying nothing matched", err)
	}
}

// TestBufferCapturesOfDifferentRuns: a sender capture paired with a receiver
// capture of another run (same QPs and PSNs, other timing) shows a peak that
// lasts a few microseconds. That is no buffer: the report refuses to estimate
// and says why, instead of reading megabytes off the blip.
func TestBufferCapturesOfDifferentRuns(t *testing.T) {
	run := func(rate string) string {
		dir := t.TempDir()
		s := sim.Incast(sim.IncastConfig{Rate: rate, Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
			Senders: 2, BytesPerSender: 4 << 20, StaggerNs: 300_000, SamplePeriodNs: 100_000})
		if _, err := sim.Run(s, dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	qdr, sdr := run("QDR"), run("SDR")
	rep, err := analyze.RunBuffer(openT(t, filepath.Join(qdr, "s1.pcap")), openT(t, filepath.Join(sdr, "r.pcap")), analyze.BufferOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bs := rep.Senders[0]; bs.Congested || bs.EstimateBytes != 0 || !strings.Contains(bs.NoEstimate, "no sustained queue") {
		t.Errorf("captures of different runs: congested %v, estimate %d bytes, reason %q; want no estimate, and why",
			bs.Congested, bs.EstimateBytes, bs.NoEstimate)
	}
}

// TestBufferSameFlowTwice: a flow in two sender captures (a copy of the
// capture given with it) is refused, the flow written as the tables write it.
func TestBufferSameFlowTwice(t *testing.T) {
	dir := t.TempDir()
	s := sim.Incast(sim.IncastConfig{Rate: "QDR", Lanes: 4, MTUBytes: 2048, VLBufferBytes: 32 << 10, TickNs: 16,
		Senders: 2, BytesPerSender: 64 << 10, StaggerNs: 5_000_000, SamplePeriodNs: 100_000})
	if _, err := sim.Run(s, dir); err != nil {
		t.Fatal(err)
	}
	s1, cp := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "copy.pcap")
	b, err := os.ReadFile(s1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = analyze.RunBuffer(openT(t, s1, cp), openT(t, filepath.Join(dir, "r.pcap")), analyze.BufferOptions{})
	want := cp + ": flow ib lid 1>3 qp 0x000100 also appears in " + s1 + "; give each sender's capture once"
	if err == nil || err.Error() != want {
		t.Errorf("same capture twice: %v, want %q", err, want)
	}
}

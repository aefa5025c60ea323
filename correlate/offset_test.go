package correlate

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// writeBurstyPair writes a capture of bursty traffic (a random number of
// packets in each ms) and telemetry sampled every ms on a NIC clock that
// runs behindNs behind the capture's, with port_xmit_data following the
// capture. Sampling starts 20 ms before the capture and ends 20 ms after.
//
// With doca the telemetry is a DOCA telemetry_diag CSV (output format 1,
// port_1_tx_bytes by data ID) instead of an ibscope sidecar.
func writeBurstyPair(t *testing.T, dir string, clock telemetry.Clock, behindNs int64, doca bool) (capture, tel string) {
	capture, tel = filepath.Join(dir, "bursty.pcap"), filepath.Join(dir, "bursty.csv")
	rng := rand.New(rand.NewPCG(1, 2))
	c := newTestCapture(t, capture)
	type sent struct {
		ts  int64
		len int
	}
	var pk []sent
	const ms = int64(1_000_000)
	start := t0Ns + 20*ms
	for k := int64(0); k < 200; k++ {
		n := rng.IntN(40)
		if rng.IntN(4) == 0 {
			n = 0 // idle milliseconds make the pattern unmistakable
		}
		for i := 0; i < n; i++ {
			ts := start + k*ms + rng.Int64N(ms)
			pk = append(pk, sent{ts: ts})
		}
	}
	slices.SortFunc(pk, func(a, b sent) int { return cmp.Compare(a.ts, b.ts) })
	for i := range pk {
		pk[i].len = c.add(t, testPacket{tsNs: pk[i].ts, src: hostA, dst: hostB, op: 0x07, qp: 0x11, psn: uint32(i), payload: 1024, srcMACByte: 1})
	}
	c.close(t)

	ctr := telemetry.SysfsCounter("counters", telemetry.PortXmitData)
	if doca {
		id := telemetry.DataID(uint64(telemetry.GroupPortTx)<<48 | 1<<32 | 1) // tx_bytes, port 1
		ctr = telemetry.DiagCounterFor(id, "", 64, false)
	}
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, clock, []telemetry.Counter{ctr})
	var bytes uint64
	j := 0
	for k := int64(0); k <= 240; k++ {
		ts := t0Ns + k*ms
		for j < len(pk) && pk[j].ts < ts {
			bytes += uint64(pk[j].len)
			j++
		}
		v := bytes / 4
		if doca {
			v = bytes
		}
		s.Append(uint64(k), ts-behindNs, ts-behindNs, []uint64{v})
	}
	f, err := os.Create(tel)
	if err != nil {
		t.Fatal(err)
	}
	if doca {
		err = testtel.WriteDiagCSV(f, s, testtel.DiagWriteOptions{})
	} else {
		err = testtel.WriteSidecar(f, s)
	}
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return capture, tel
}

// TestOffsetEstimate recovers known offsets from the byte counters alone:
// a NIC free-running clock ~3 s behind the capture's (sidecar), and a NIC
// real-time clock 3.337 ms behind (DOCA telemetry_diag CSV).
func TestOffsetEstimate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		clock  telemetry.Clock
		behind int64
		doca   bool
	}{
		{"sidecar-frc", telemetry.ClockNICFree, t0Ns - 3_000_000_000 + 337_000, false},
		{"doca-rtc", telemetry.ClockNICRealTime, 3_337_000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			capture, tel := writeBurstyPair(t, dir, tc.clock, tc.behind, tc.doca)
			res, err := Correlate([]string{capture}, []string{tel}, filepath.Join(dir, "j.parquet"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			// A sidecar names its port; a telemetry_diag CSV does not, so its
			// rows are told apart by the file's name.
			if want := map[bool]string{false: "mlx5_0/1", true: "bursty.csv"}[tc.doca]; res.Series[0].Source != want {
				t.Errorf("source %q, want %q", res.Series[0].Source, want)
			}
			e := res.Series[0].Estimate
			if e == nil {
				t.Fatal("no estimate")
			}
			if d := e.OffsetNs - tc.behind; d < -50_000 || d > 50_000 {
				t.Errorf("estimated offset %d ns, true %d ns: off by %d ns", e.OffsetNs, tc.behind, d)
			}
			if e.R < 0.95 || e.NextR > e.R-0.1 {
				t.Errorf("confidence r = %.3f, next best r = %.3f at %d: want a clear peak", e.R, e.NextR, e.NextOffsetNs)
			}
			t.Logf("offset %d (true %d), r %.4f over %d intervals, next %d r %.3f, grid %d ns, counters %v",
				e.OffsetNs, tc.behind, e.R, e.Intervals, e.NextOffsetNs, e.NextR, e.ResolutionNs, e.Counters)
		})
	}
}

// TestNoOverlapRefused: telemetry an hour after the capture, on the same
// epoch clock, is refused naming both time ranges; so is a given offset that
// moves it away.
func TestNoOverlapRefused(t *testing.T) {
	dir := t.TempDir()
	capture, tel := writeBurstyPair(t, dir, telemetry.ClockHost, -3600_000_000_000, false)
	out := filepath.Join(dir, "j.parquet")
	for _, opt := range []Options{{}, {OffsetGiven: true, OffsetNs: 0}} {
		_, err := Correlate([]string{capture}, []string{tel}, out, opt)
		if err == nil {
			t.Fatal("no error for telemetry an hour after the capture")
		}
		for _, want := range []string{tel, "does not overlap the capture", "the capture spans 2025-12-29T09:20:00.02", "the telemetry (clock host) spans 2025-12-29T10:20:00.000000000Z"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists after a refusal: %v", err)
	}
	assertNoTempFiles(t, dir)
}

// assertNoTempFiles fails when a writer's hidden temporary file is left.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(m) > 0 {
		t.Errorf("temporary files left behind: %v", m)
	}
}

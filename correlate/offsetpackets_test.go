package correlate

import (
	"cmp"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// SoftRoCE's telemetry has no byte counters, only sent_pkts and rcvd_pkts
// (rdma_rxe's hw_counters): the offset is estimated by matching the
// capture's frames against them. The capture holds a bursty exchange of
// RDMA WRITEs of random sizes (the NIC's sends) and their ACKs (what it
// receives); the telemetry, sampled every ms from 20 ms before the capture
// to 20 ms after it, runs 1.5 ms behind the capture's clock.
func TestOffsetEstimateFromPacketCounters(t *testing.T) {
	dir := t.TempDir()
	capture, tel := filepath.Join(dir, "rxe.pcap"), filepath.Join(dir, "rxe0.tel")
	const ms = int64(1_000_000)
	const behindNs = 1_500_000
	rng := rand.New(rand.NewPCG(3, 4))
	type sent struct {
		ts int64
		rx bool
	}
	var pk []sent
	start := t0Ns + 20*ms
	for k := int64(0); k < 200; k++ {
		n := rng.IntN(30)
		if rng.IntN(4) == 0 {
			n = 0
		}
		for range n {
			ts := start + k*ms + rng.Int64N(ms-10_000)
			pk = append(pk, sent{ts: ts}, sent{ts: ts + 5_000, rx: true})
		}
	}
	slices.SortFunc(pk, func(a, b sent) int { return cmp.Compare(a.ts, b.ts) })
	c := newTestCapture(t, capture)
	for i, p := range pk {
		tp := testPacket{tsNs: p.ts, src: hostA, dst: hostB, op: 0x0A, qp: 0x11, psn: uint32(i), payload: 64 + rng.IntN(4000), srcMACByte: 1}
		if p.rx {
			tp = testPacket{tsNs: p.ts, src: hostB, dst: hostA, op: 0x11, qp: 0x12, psn: uint32(i), srcMACByte: 2}
		}
		c.add(t, tp)
	}
	c.close(t)

	s := telemetry.NewSeries(telemetry.Source{Device: "rxe0", Port: 1}, telemetry.ClockHost,
		[]telemetry.Counter{telemetry.SysfsCounter("hw_counters", "sent_pkts"), telemetry.SysfsCounter("hw_counters", "rcvd_pkts")})
	var tx, rx uint64
	j := 0
	for k := int64(0); k <= 240; k++ {
		ts := t0Ns + k*ms
		for ; j < len(pk) && pk[j].ts < ts; j++ {
			if pk[j].rx {
				rx++
			} else {
				tx++
			}
		}
		s.Append(uint64(k), ts-behindNs, ts-behindNs, []uint64{tx, rx})
	}
	f, err := os.Create(tel)
	if err != nil {
		t.Fatal(err)
	}
	if err := testtel.WriteSidecar(f, s); err != nil {
		t.Fatal(err)
	}
	f.Close()

	res, err := Correlate([]string{capture}, []string{tel}, filepath.Join(dir, "j.parquet"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Series[0].Estimate
	if e == nil {
		t.Fatal("no estimate")
	}
	if d := e.OffsetNs - behindNs; d < -50_000 || d > 50_000 {
		t.Errorf("estimated offset %d ns, true %d ns: off by %d ns", e.OffsetNs, behindNs, d)
	}
	if !e.Packets || !slices.Equal(e.Counters, []string{"sent_pkts", "rcvd_pkts"}) || e.R < 0.99 {
		t.Errorf("estimate from %v (packets %v), r = %.4f: want sent_pkts and rcvd_pkts, r near 1", e.Counters, e.Packets, e.R)
	}
	t.Logf("offset %d (true %d), r %.4f over %d intervals, next %d r %.3f", e.OffsetNs, int64(behindNs), e.R, e.Intervals, e.NextOffsetNs, e.NextR)
}

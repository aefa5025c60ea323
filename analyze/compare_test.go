package analyze

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/ibscope/ibscope/internal/testcap"
)

// The study's side-by-side view: the sender stamps packets 20 us apart;
// the receiver sees them 1500 ns later, but 5 never arrive and every 100th
// waits 10 us more in a switch.
func TestCompareSenderReceiver(t *testing.T) {
	sent := testcap.Stream(1000, 1, 2, 9, 100, 2048, testcap.BaseNs+7, func(int) int64 { return 20_000 })
	var recv []testcap.Packet
	for i, p := range sent {
		if i%200 == 50 {
			continue // lost
		}
		p.TsNs += 1500
		if i%100 == 99 {
			p.TsNs += 10_000
		}
		recv = append(recv, p)
	}
	pa := testcap.Write(t, "sender.pcap", true, sent)
	pb := testcap.Write(t, "receiver.pcap", true, recv)
	a, err := OpenStream([]string{pa}, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenStream([]string{pb}, StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := RunCompare(a, b, IPDOptions{Hist: HistSpec{Mode: ModeLinear, BinNs: 1000, Bins: 50}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Matched != 995 || r.OnlyA != 5 || r.OnlyB != 0 || r.NumFlows() != 1 {
		t.Fatalf("matched %d only A %d only B %d flows %d", r.Matched, r.OnlyA, r.OnlyB, r.NumFlows())
	}
	f := r.Flow(0)
	if f.OneWayDelayNs.Min != 1500 || f.OneWayDelayNs.P50 != 1500 || f.OneWayDelayNs.Max != 11_500 || math.Abs(float64(f.OneWayDelayNs.P99-11_500)) > 11_500/128 {
		t.Errorf("one-way delay %+v", f.OneWayDelayNs)
	}
	// Receiver: 20 us mostly, 30 us then 10 us around each delayed packet,
	// 40 us across each loss.
	if len(f.HistA.Bins) != 50 || f.HistA.Bins[20].Count != 999 || f.HistB.Bins[30].Count != 10 || f.HistB.Bins[10].Count != 9 || f.HistB.Bins[40].Count != 5 {
		t.Errorf("histograms not aligned: A %+v", f.HistA.Bins[:4])
	}
	for i := range f.HistA.Bins {
		if f.HistA.Bins[i].LoNs != f.HistB.Bins[i].LoNs {
			t.Fatalf("bin %d edges differ", i)
		}
	}
	// The IPDs (10, 20, 30, 40 us) fall in distinct sketch buckets, so the
	// distance is the exact one of the two samples.
	ipds := func(ps []testcap.Packet) []float64 {
		var out []float64
		for i := 1; i < len(ps); i++ {
			out = append(out, float64(ps[i].TsNs-ps[i-1].TsNs))
		}
		slices.Sort(out)
		return out
	}
	exact := stat.KolmogorovSmirnov(ipds(sent), nil, ipds(recv), nil)
	if f.KS == nil || *f.KS <= 0 || math.Abs(*f.KS-exact) > 1e-9 {
		t.Errorf("KS distance %v, want %v", f.KS, exact)
	}
	if f.PacketsA != 1000 || f.PacketsB != 995 {
		t.Errorf("packets %d, %d", f.PacketsA, f.PacketsB)
	}
	// json.Marshal gives the document WriteJSON writes, flows included.
	var doc, compact bytes.Buffer
	if err := r.WriteJSON(&doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&compact, doc.Bytes()); err != nil {
		t.Fatal(err)
	}
	if m, err := json.Marshal(r); err != nil || !bytes.Equal(m, compact.Bytes()) || !bytes.Contains(m, []byte(`"flows":[{`)) {
		t.Errorf("json.Marshal: %v\n%.300s\nWriteJSON:\n%.300s", err, m, compact.Bytes())
	}
}

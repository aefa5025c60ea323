package analyze

import (
	"encoding/json"
	"net/netip"
	"runtime"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// manyFlows feeds an IPD analysis flows RoCEv2 flows of packets packets
// each, 1 us apart within a flow, the flows interleaved.
func manyFlows(t testing.TB, cfg IPDOptions, flows, packets int) *IPDAnalysis {
	a, err := NewIPDAnalysis(cfg, func() int64 { return 1 })
	if err != nil {
		t.Fatal(err)
	}
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	p := Packet{OpCode: 0x0a, WireBytes: 1100}
	for i := range packets {
		for f := range flows {
			p.Key = decode.FlowKey{Transport: decode.TransportRoCEv2, Src: src, Dst: dst, DestQP: uint32(f) + 2} // 0 and 1 take MADs
			p.TsNs = 1e18 + int64(i)*1000 + int64(f%1000)
			a.Add(&p)
		}
	}
	return a
}

func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// peakWriter counts what is written and measures the live heap every 64 MB.
type peakWriter struct {
	n, next, peak uint64
}

func (w *peakWriter) Write(b []byte) (int, error) {
	w.n += uint64(len(b))
	if w.n >= w.next {
		w.peak = max(w.peak, heapBytes())
		w.next = w.n + 64<<20
	}
	return len(b), nil
}

// 500,000 flows of three packets: the per-flow state is small (measured,
// and stated in the README: about IPDGroupBytes, where it was 776 with the
// whole report built besides and 425 with a map of full keys), and the
// JSON report is written flow by flow, never held whole (it is over 300 MB).
func TestIPDMemoryPerFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 500,000 flows take a few seconds")
	}
	const flows = 500_000
	before := heapBytes()
	a := manyFlows(t, IPDOptions{Hist: HistSpec{Mode: ModeLinear, BinNs: 500, Bins: 4}}, flows, 3)
	perFlow := float64(heapBytes()-before) / flows
	t.Logf("IPD state: %.0f bytes per flow (%d flows of 3 packets)", perFlow, flows)
	if perFlow > IPDGroupBytes {
		t.Errorf("%.0f bytes per flow, IPDGroupBytes says %d", perFlow, IPDGroupBytes)
	}
	r, err := a.Result(1)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumFlows() != flows || r.MaxFlows != 0 {
		t.Fatalf("%d flows, max_flows %d", r.NumFlows(), r.MaxFlows)
	}
	base := heapBytes()
	w := &peakWriter{}
	if err := r.WriteJSON(w); err != nil {
		t.Fatal(err)
	}
	grew := int64(w.peak) - int64(base)
	t.Logf("JSON: %d MB written; the live heap grew by at most %d KB while writing", w.n>>20, grew>>10)
	if w.n < 300<<20 || grew > 16<<20 {
		t.Errorf("JSON of %d bytes; the live heap grew by up to %d bytes while writing it", w.n, grew)
	}
	runtime.KeepAlive(a)
}

// Past MaxFlows, packets of new flows are counted in one "other" group,
// without IPDs, and the result says how many.
func TestIPDMaxFlows(t *testing.T) {
	r, err := manyFlows(t, IPDOptions{MaxFlows: 10}, 25, 4).Result(1)
	if err != nil {
		t.Fatal(err)
	}
	if r.NumFlows() != 11 || r.MaxFlows != 10 || r.OtherPackets != 15*4 || r.Counted != 25*4 {
		t.Fatalf("%d groups, max_flows %d, other %d packets, counted %d", r.NumFlows(), r.MaxFlows, r.OtherPackets, r.Counted)
	}
	for i := range 10 {
		if f := r.Flow(i); f.Packets != 4 || f.IPDNs.Count != 3 || *f.Key.DestQP != uint32(i)+2 {
			t.Errorf("flow %d: %+v", i, f)
		}
	}
	other := r.Flow(10)
	if other.Key.String() != "other" || other.Packets != 60 || other.IPDNs.Count != 0 || other.Hist().Total() != 0 {
		t.Errorf("other: %+v", other)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Flows []struct {
			Key map[string]any `json:"key"`
		} `json:"flows"`
		MaxFlows     int `json:"max_flows"`
		OtherPackets int `json:"other_packets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Flows) != 11 || doc.Flows[10].Key["transport"] != "other" || len(doc.Flows[10].Key) != 1 || doc.MaxFlows != 10 || doc.OtherPackets != 60 {
		t.Errorf("JSON: %s", b[:min(len(b), 300)])
	}
	if _, err := NewIPDAnalysis(IPDOptions{MaxFlows: MaxFlowsLimit + 1}, nil); err == nil {
		t.Error("a bound past MaxFlowsLimit accepted")
	}
}

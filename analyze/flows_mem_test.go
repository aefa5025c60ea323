package analyze

import (
	"bytes"
	"encoding/json"
	"io"
	"net/netip"
	"runtime"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/protostate"
)

// oneFlowPacket is packet i of a capture where every packet is its own
// flow (a QP of its own, from an address of its own), one every 5 us, so
// that the last flows start seconds after the capture.
func oneFlowPacket(p *Packet, i int) {
	src := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
	*p = Packet{TsNs: testBaseNs + int64(i)*5000, Key: decode.FlowKey{Transport: decode.TransportRoCEv2, Src: src,
		Dst: netip.AddrFrom4([4]byte{10, 255, 0, 1}), DestQP: uint32(i) & decode.PSNMask},
		OpCode: 0x04, PSN: uint32(i) & decode.PSNMask, AckReq: i%2 == 0, FrameBytes: 76, WireBytes: 100}
}

const testBaseNs = 1_767_000_000_000_000_000

// TestFlowsMemoryPerFlow: a million one-packet flows (half of them asking
// for an ACK that never comes) cost about FlowStateBytes each while the
// capture is read, not a throughput series since the capture's start.
func TestFlowsMemoryPerFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("a million flows: about 270 MB (-short)")
	}
	const flows = 1_000_000
	before := heapBytes()
	a := NewFlowsAnalysis(FlowsOptions{MaxFlows: flows})
	var p Packet
	for i := range flows {
		oneFlowPacket(&p, i)
		a.Add(&p)
	}
	perFlow := (heapBytes() - before) / flows
	t.Logf("%d bytes per flow", perFlow)
	if perFlow > FlowStateBytes {
		t.Errorf("%d bytes per flow, FlowStateBytes says %d", perFlow, FlowStateBytes)
	}
	runtime.KeepAlive(a)
}

// TestFlowsJSONStreams: past the limit, flows go to one "other" flow; the
// JSON document is written flow by flow, so writing it does not hold every
// flow's FlowHealth at once.
func TestFlowsJSONStreams(t *testing.T) {
	const flows, limit = 60_000, 50_000
	a := NewFlowsAnalysis(FlowsOptions{MaxFlows: limit})
	var p Packet
	for i := range flows {
		oneFlowPacket(&p, i)
		a.Add(&p)
	}
	r, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.NumFlows() != limit+1 || r.OtherPackets != flows-limit {
		t.Fatalf("%d flows, %d packets in other; want %d and %d", r.NumFlows(), r.OtherPackets, limit+1, flows-limit)
	}
	if o := r.Flow(0); o.Key.Transport != "other" || o.Packets != flows-limit || o.PSN != (protostate.PSNStats{}) {
		t.Errorf("busiest flow %s: %d packets, PSN %+v", o.Key, o.Packets, o.PSN)
	}
	held := heapBytes()
	w := &peakWriter{}
	if err := r.WriteJSON(w); err != nil {
		t.Fatal(err)
	}
	// A FlowHealth of one packet is about 1 KB in memory: all of them at
	// once would be 100 MB more.
	if grew := int64(w.peak) - int64(held); grew > 16<<20 {
		t.Errorf("writing %d MB of JSON took %d MB of heap beyond the %d MB the analysis holds", w.n>>20, grew>>20, held>>20)
	}
	runtime.KeepAlive(r)
}

// WriteJSON writes the document json.Encoder (two-space indent, as
// writeJSON) would write for the same values: the shape is unchanged.
func TestFlowsWriteJSONShape(t *testing.T) {
	path, _ := healthCapture(t)
	r := runFlowsFiles(t, path)
	var got, want bytes.Buffer
	if err := r.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	doc := struct {
		Flows []*FlowHealth `json:"flows"`
		flowsHead
	}{r.Flows, flowsHead{r.FirstNs, r.ThroughputBinNs, r.PeakPackets, r.LinkGbps, r.Input, r.MaxFlows, r.OtherPackets}}
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("WriteJSON:\n%s\njson.Encoder:\n%s", got.Bytes(), want.Bytes())
	}
	if !json.Valid(got.Bytes()) {
		t.Error("not valid JSON")
	}
	if err := r.WriteJSON(failingWriter{}); err == nil {
		t.Error("a failing writer gave no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

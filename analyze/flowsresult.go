package analyze

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// FlowsReport is the result of a flows analysis: the flows, busiest
// first, each made into a FlowHealth only when asked for (Flow, Top,
// WriteJSON), so that a capture of a million flows is never held as a
// million FlowHealth values.
type FlowsReport struct {
	flows           []*flowState
	keys            flowIndex // the analysis's keys, as far as flows go: the chunks never move, the keys never change
	FirstNs         int64     // first packet of the capture
	ThroughputBinNs int64     // width of each ThroughputGbps bin
	// PeakPackets is the window of PeakGbps, packets; LinkGbps the link
	// rate peaks are capped at (0: not known).
	PeakPackets int
	LinkGbps    float64
	// final says every packet is in: each flow's last partial window then
	// counts, joined to its last whole one (peakWindow.gbps).
	final bool
	Input Input // what the input held
	// MaxFlows is the bound on flows when the capture held more (0 when
	// every flow was kept apart); OtherPackets counts the packets of the
	// flows beyond it, held in the flow keyed {"transport": "other"}.
	MaxFlows     int
	OtherPackets uint64
	conns        map[decode.FlowKey]FlowConnection // flowscm.go
}

// ErrNoPackets is returned when the input held no IB or RoCE transport packet.
var ErrNoPackets = errors.New("no IB or RoCE transport packets")

// Result finishes the analysis: its report with every packet in.
func (a *FlowsAnalysis) Result() (*FlowsReport, error) { return a.result(true) }

// result is the report on the packets added so far; final says no more
// will be.
func (a *FlowsAnalysis) result(final bool) (*FlowsReport, error) {
	if a.index.n == 0 && a.other == nil {
		return nil, ErrNoPackets
	}
	r := &FlowsReport{FirstNs: a.firstNs, ThroughputBinNs: DefaultThroughputBinNs, PeakPackets: PeakWindowPackets, LinkGbps: a.linkGbps,
		keys: flowIndex{keys: a.index.keys, n: a.index.n}, final: final}
	r.flows = make([]*flowState, a.index.n, a.index.n+1)
	for i := range a.index.n {
		r.flows[i] = a.state(i)
	}
	r.conns = a.connections()
	if a.other != nil {
		r.flows = append(r.flows, a.other)
		r.MaxFlows, r.OtherPackets = a.maxFlows, a.other.packets
	}
	for _, f := range r.flows {
		r.ThroughputBinNs = max(r.ThroughputBinNs, f.thr.binNs())
	}
	slices.SortStableFunc(r.flows, func(x, y *flowState) int { return cmp.Compare(y.packets, x.packets) })
	return r, nil
}

// key returns f's key, in the analysis' terms.
func (r *FlowsReport) key(f *flowState) decode.FlowKey { return r.keys.key(f.id).unpack() }

// NumFlows is the number of flows (the "other" flow included).
func (r *FlowsReport) NumFlows() int { return len(r.flows) }

// Top returns the n busiest flows (all for n <= 0).
func (r *FlowsReport) Top(n int) []*FlowHealth {
	if n <= 0 || n > len(r.flows) {
		n = len(r.flows)
	}
	out := make([]*FlowHealth, n)
	for i := range out {
		out[i] = r.Flow(i)
	}
	return out
}

// Flow returns flow i, busiest first.
func (r *FlowsReport) Flow(i int) *FlowHealth {
	f := r.flows[i]
	h := &FlowHealth{Packets: f.packets, FrameBytes: f.frameBytes, WireBytes: f.wireBytes, FirstNs: f.firstNs, LastNs: f.lastNs,
		PSN: f.psn.Requests.Stats(), ResponsePSN: f.psn.Responses.Stats(), Acks: f.acks, Messages: f.messages()}
	if f.id == otherFlow {
		h.Key = GroupKey{Transport: "other"}
	} else {
		h.Key = keyJSON(r.key(f), ByFlow)
	}
	if d := f.lastNs - f.firstNs; d > 0 {
		// The last packet's bytes are left out, as the peak leaves them
		// out: with them two packets sent back to back read twice the
		// link rate, and a flow of fewer than 100 packets a mean above its
		// peak (a SoftRoCE capture: 2.73 against 1.49 Mb/s).
		h.MeanGbps = float64(f.wireBytes-min(uint64(f.lastWire), f.wireBytes)) * 8 / float64(d)
		if r.LinkGbps > 0 {
			h.MeanGbps = min(h.MeanGbps, r.LinkGbps)
		}
	}
	h.ThroughputGbps = f.thr.gbps(r.ThroughputBinNs, f.wireBytes, r.LinkGbps)
	h.PeakGbps = f.peak.gbps(f.lastNs, uint32(f.lastWire), r.LinkGbps, r.final)
	h.Opcodes = f.opcodeCounts()
	if m := f.marks; m != nil {
		h.CNPs, h.ECNCE, h.FECN, h.BECN, h.ICRCBad, h.VCRCBad, h.Late = m.cnps, m.ecnCE, m.fecn, m.becn, m.icrcBad, m.vcrcBad, m.late
		naks := slices.Clone(m.naks)
		slices.SortFunc(naks, func(a, b nakCount) int { return cmp.Compare(a.value, b.value) })
		for _, n := range naks {
			if n.rnr {
				aeth := decode.AETH{Syndrome: n.value}
				h.RNRNAKs = append(h.RNRNAKs, RNRCount{Timer: n.value, DelayNs: aeth.RNRDelayNs(), Count: n.n})
			} else {
				h.NAKs = append(h.NAKs, NAKCount{Code: n.value, Name: decode.NAKName(n.value), Count: n.n})
			}
		}
	}
	if t := f.timing; t != nil {
		if t.ackLat != nil && t.ackLat.Count() > 0 {
			st := statsOf(t.ackLat)
			h.AckLatencyNs = &st
		}
		if t.answered != nil {
			k := keyJSON(r.key(t.answered), ByFlow)
			h.AckPeer = &k
		}
	}
	if r.conns != nil && f.id != otherFlow {
		if c, ok := r.conns[r.key(f)]; ok {
			h.Connection = &c
		}
	}
	return h
}

// flowsHead is the JSON document's fields after "flows", in the order
// writeJSON (json.Encoder with two-space indent) would write them.
type flowsHead struct {
	FirstNs         int64   `json:"first_ns"`
	ThroughputBinNs int64   `json:"throughput_bin_ns"`
	PeakPackets     int     `json:"peak_packets"`
	LinkGbps        float64 `json:"link_gbps,omitempty"`
	Input           Input   `json:"input"`
	MaxFlows        int     `json:"max_flows,omitempty"`
	OtherPackets    uint64  `json:"other_packets,omitempty"`
}

// WriteJSON writes the `ibanalyze flows --json` document, indented by two
// spaces: {"flows": [FlowHealth...], "first_ns", "throughput_bin_ns",
// "input", "max_flows" and "other_packets" when flows were merged}. The
// flows are encoded one at a time, so memory does not grow with their
// number.
func (r *FlowsReport) WriteJSON(out io.Writer) error {
	w := bufio.NewWriterSize(out, 1<<16)
	w.WriteString("{\n  \"flows\": [")
	for i := range r.flows {
		b, err := json.MarshalIndent(r.Flow(i), "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode flow %d: %w", i, err)
		}
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		w.Write(b)
	}
	if len(r.flows) > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("],\n  ")
	b, err := json.MarshalIndent(flowsHead{r.FirstNs, r.ThroughputBinNs, r.PeakPackets, r.LinkGbps, r.Input, r.MaxFlows, r.OtherPackets}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode flows summary: %w", err)
	}
	w.Write(b[len("{\n  "):]) // the head's fields continue the document's object
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// Err is always nil: a flows analysis takes any input.
func (a *FlowsAnalysis) Err() error { return nil }

// Report is the report on the packets of s so far, or finishes the
// analysis once Run has handed out the last.
func (a *FlowsAnalysis) Report(s *Stream) (*FlowsReport, error) {
	r, err := a.result(s.final)
	if r != nil {
		r.Input = s.Input()
	}
	return r, err
}

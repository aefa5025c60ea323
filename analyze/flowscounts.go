package analyze

// FlowCounts is what a live view of the flows ranks and adds up: flow i's
// counts as Flow(i) has them, without the rest of its FlowHealth (no
// strings, series or lists made), so that they can be taken for every
// flow on each scrape.
type FlowCounts struct {
	Packets   uint64 // FlowHealth.Packets
	WireBytes uint64 // FlowHealth.WireBytes
	CNPs      uint64 // FlowHealth.CNPs
	ECNCE     uint64 // FlowHealth.ECNCE
	NAKs      uint64 // FlowHealth.NAKs and RNRNAKs, every code
	Retrans   uint64 // FlowHealth.PSN.Duplicates
	PSNGaps   uint64 // FlowHealth.PSN.Gaps
	Other     bool   // the flow of the flows past FlowsOptions.MaxFlows
}

// Counts returns flow i's counts, busiest first as Flow. Like Flow, it
// reads the analysis' state: not while packets are added.
func (r *FlowsReport) Counts(i int) FlowCounts {
	f := r.flows[i]
	psn := f.psn.Requests.Stats()
	c := FlowCounts{Packets: f.packets, WireBytes: f.wireBytes, Retrans: psn.Duplicates, PSNGaps: psn.Gaps, Other: f.id == otherFlow}
	if m := f.marks; m != nil {
		c.CNPs, c.ECNCE = m.cnps, m.ecnCE
		for _, n := range m.naks {
			c.NAKs += n.n
		}
	}
	return c
}

// Key returns flow i's key, as Flow(i).Key. A flow's key never changes
// once the flow is made, so Key may be called while packets are added.
func (r *FlowsReport) Key(i int) GroupKey {
	if f := r.flows[i]; f.id != otherFlow {
		return keyJSON(r.key(f), ByFlow)
	}
	return GroupKey{Transport: "other"}
}

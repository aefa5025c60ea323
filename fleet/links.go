package fleet

import (
	"cmp"
	"context"
	"slices"
)

// Endpoint is one end of a link: the host and NIC of the agent that owns
// the address, or the address itself when none does (or several do).
type Endpoint struct {
	Host    string `json:"host,omitempty"`
	NIC     string `json:"nic,omitempty"`
	Address string `json:"address,omitempty"` // only when the address maps to no single agent
}

// String is "host/nic", or the bare address.
func (e Endpoint) String() string {
	if e.Address != "" {
		return e.Address
	}
	return e.Host + "/" + e.NIC
}

// OtherFlows is the Endpoint of the flows an agent adds up in flow="other"
// (past its --metrics-flows): their ends are not known.
var OtherFlows = Endpoint{Address: "other"}

// Link is the traffic from Src to Dst over the range.
type Link struct {
	Src         Endpoint `json:"src"`
	Dst         Endpoint `json:"dst"`
	PacketsPerS float64  `json:"packets_per_s"`
	BytesPerS   float64  `json:"bytes_per_s"` // wire bytes
	// Counts over the range (increase(): extrapolated, so not whole).
	Bytes           float64 `json:"bytes"`
	CNPs            float64 `json:"cnps"`
	ECNCE           float64 `json:"ecn_ce"`
	NAKs            float64 `json:"naks"`
	Retransmissions float64 `json:"retransmissions"`
	PSNGaps         float64 `json:"psn_gaps"`
	// ObservedBy names the agents (host/device) that saw the link; with
	// more than one, each figure is the largest any one of them measured.
	ObservedBy []string `json:"observed_by"`
}

// Links is the directed traffic matrix.
type Links struct {
	RangeSeconds float64 `json:"range_s"`
	Links        []Link  `json:"links"`
}

// owner is an agent that lists an address in ibscope_address_info.
type owner struct {
	key       agentKey
	host, nic string
}

// linkFields are the flow series a link adds up, with where each goes.
var linkFields = []struct {
	fn, metric string
	set        func(l *Link, v float64)
	get        func(l *Link) float64
}{
	{"rate", "ibscope_flow_packets_total", func(l *Link, v float64) { l.PacketsPerS += v }, func(l *Link) float64 { return l.PacketsPerS }},
	{"rate", "ibscope_flow_bytes_total", func(l *Link, v float64) { l.BytesPerS += v }, func(l *Link) float64 { return l.BytesPerS }},
	{"increase", "ibscope_flow_bytes_total", func(l *Link, v float64) { l.Bytes += v }, func(l *Link) float64 { return l.Bytes }},
	{"increase", "ibscope_flow_cnps_total", func(l *Link, v float64) { l.CNPs += v }, func(l *Link) float64 { return l.CNPs }},
	{"increase", "ibscope_flow_ecn_ce_total", func(l *Link, v float64) { l.ECNCE += v }, func(l *Link) float64 { return l.ECNCE }},
	{"increase", "ibscope_flow_naks_total", func(l *Link, v float64) { l.NAKs += v }, func(l *Link) float64 { return l.NAKs }},
	{"increase", "ibscope_flow_retransmissions_total", func(l *Link, v float64) { l.Retransmissions += v }, func(l *Link) float64 { return l.Retransmissions }},
	{"increase", "ibscope_flow_psn_gaps_total", func(l *Link, v float64) { l.PSNGaps += v }, func(l *Link) float64 { return l.PSNGaps }},
}

// Links returns the traffic matrix over the range: every flow series
// whose src and dst map to endpoints, added up per agent and link, then
// merged across the agents that saw the same link.
func (c *Client) Links(ctx context.Context, o Options) (*Links, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	agents, err := c.agents(ctx, o)
	if err != nil {
		return nil, err
	}
	names := map[agentKey]string{}
	for i := range agents {
		names[agentKey{agents[i].Job, agents[i].Instance}] = agents[i].Name()
	}
	addrs, err := c.vector(ctx, "last_over_time(ibscope_address_info"+rng(o.Lookback)+")", o.At)
	if err != nil {
		return nil, err
	}
	owners := map[string][]owner{}
	for _, s := range addrs {
		a := string(s.Metric["address"])
		owners[a] = append(owners[a], owner{key: keyOf(s.Metric), host: string(s.Metric["host"]), nic: string(s.Metric["device"])})
	}
	perAgent := map[agentView]*Link{}
	for _, f := range linkFields {
		vec, err := c.vector(ctx, "sum by (job, instance, src, dst) ("+f.fn+"("+f.metric+rng(o.Range)+"))", o.At)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			k := keyOf(s.Metric)
			src, dst := string(s.Metric["src"]), string(s.Metric["dst"])
			sn := agentView{observer: k, src: OtherFlows, dst: OtherFlows}
			if src != "" || dst != "" {
				sn.src, sn.dst = endpoint(owners, k, src), endpoint(owners, k, dst)
			}
			l := perAgent[sn]
			if l == nil {
				l = &Link{Src: sn.src, Dst: sn.dst}
				perAgent[sn] = l
			}
			f.set(l, float64(s.Value))
		}
	}
	return &Links{RangeSeconds: o.Range.Seconds(), Links: mergeViews(perAgent, names)}, nil
}

// agentView is a link as one agent (observer) saw it.
type agentView struct {
	observer agentKey
	src, dst Endpoint
}

// mergeViews merges the agents' views of each link, keeping the largest
// figure any one of them measured, and orders the links busiest first.
// names gives an agent's host/device, for ObservedBy.
func mergeViews(perAgent map[agentView]*Link, names map[agentKey]string) []Link {
	type linkKey struct {
		src, dst Endpoint
		observer agentKey // only for OtherFlows, which are not one link
	}
	merged := map[linkKey]*Link{}
	for sn, l := range perAgent {
		lk := linkKey{src: sn.src, dst: sn.dst}
		if sn.src == OtherFlows {
			lk.observer = sn.observer
		}
		name := names[sn.observer]
		if name == "" {
			name = sn.observer.instance
		}
		m := merged[lk]
		if m == nil {
			m = &Link{Src: sn.src, Dst: sn.dst}
			merged[lk] = m
		}
		for _, f := range linkFields {
			if v := f.get(l); v > f.get(m) {
				f.set(m, v-f.get(m))
			}
		}
		m.ObservedBy = append(m.ObservedBy, name)
	}
	links := make([]Link, 0, len(merged))
	for _, l := range merged {
		slices.Sort(l.ObservedBy)
		links = append(links, *l)
	}
	slices.SortFunc(links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(b.BytesPerS, a.BytesPerS), cmp.Compare(a.Src.String(), b.Src.String()),
			cmp.Compare(a.Dst.String(), b.Dst.String()), slices.Compare(a.ObservedBy, b.ObservedBy))
	})
	return links
}

// endpoint maps an address seen by observer to the agent that owns it: the
// only owner (host and NIC: a restarted agent may list it twice), or the
// observer when it is one of several; else the address.
func endpoint(owners map[string][]owner, observer agentKey, address string) Endpoint {
	var found []Endpoint
	for _, o := range owners[address] {
		e := Endpoint{Host: o.host, NIC: o.nic}
		if o.key == observer {
			return e
		}
		if !slices.Contains(found, e) {
			found = append(found, e)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return Endpoint{Address: address}
}

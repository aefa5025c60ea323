package fleet

import (
	"context"
	"fmt"
	"strings"
)

// NIC is one agent's capture over the range: its port's traffic and
// what went wrong.
type NIC struct {
	Agent
	PacketsPerS float64 `json:"packets_per_s"` // RoCE/IB packets analysed
	BytesPerS   float64 `json:"bytes_per_s"`   // their wire bytes
	CNPsPerS    float64 `json:"cnps_per_s"`
	ECNCEPerS   float64 `json:"ecn_ce_per_s"`
	// Counts over the range (increase(): extrapolated, so not whole).
	KernelDrops      float64 `json:"kernel_drops"`
	DeviceDrops      float64 `json:"device_drops"`
	CompletionErrors float64 `json:"completion_errors"`
	NAKs             float64 `json:"naks"`
	Retransmissions  float64 `json:"retransmissions"`
	PSNGaps          float64 `json:"psn_gaps"`
	PortErrors       float64 `json:"port_errors"` // the RDMA port's error counters, added up
	NotAnalyzed      float64 `json:"not_analyzed"`
	Undecoded        float64 `json:"undecoded"`
	Unwritten        float64 `json:"unwritten"`
	NICReadErrors    float64 `json:"nic_read_errors"`
	// The port's own byte counters, when the capture has an RDMA port.
	PortRxBytesPerS *float64 `json:"port_rx_bytes_per_s,omitempty"`
	PortTxBytesPerS *float64 `json:"port_tx_bytes_per_s,omitempty"`
	// RingUsedMax is the fullest the capture's receive ring was at a
	// scrape in the range, 0 to 1, when its ring is counted in buffers.
	RingUsedMax *float64 `json:"ring_used_max,omitempty"`
	// Health is the capture's problems over the range (empty: none):
	// stale, stopped, kernel drops, device drops, completion errors, not
	// analyzed, undecoded, unwritten, nic read errors, ring nearly full.
	Health []string `json:"health"`
}

// Drops is every packet lost before ibcap took it.
func (n *NIC) Drops() float64 { return n.KernelDrops + n.DeviceDrops + n.CompletionErrors }

// Errors adds up the transport's errors and the port's.
func (n *NIC) Errors() float64 { return n.NAKs + n.Retransmissions + n.PSNGaps + n.PortErrors }

// PortErrorSeries are the node_infiniband_* counters of the RDMA port's
// errors and discards, which NIC.PortErrors adds up (and the dashboard).
var PortErrorSeries = []string{
	"node_infiniband_port_errors_received_total", "node_infiniband_port_constraint_errors_received_total",
	"node_infiniband_port_constraint_errors_transmitted_total", "node_infiniband_port_discards_received_total",
	"node_infiniband_port_discards_transmitted_total", "node_infiniband_symbol_error_total", "node_infiniband_link_downed_total",
	"node_infiniband_link_error_recovery_total", "node_infiniband_local_link_integrity_errors_total",
	"node_infiniband_excessive_buffer_overrun_errors_total", "node_infiniband_port_receive_remote_physical_errors_total",
	"node_infiniband_port_receive_switch_relay_errors_total", "node_infiniband_vl15_dropped_total",
}

// over is fn of series over rng.
func over(series string) func(fn, rng string) string {
	return func(fn, rng string) string { return fn + "(" + series + rng + ")" }
}

// PortErrors is fn (rate or increase) of each of PortErrorSeries over rng,
// each its own series, its counter label the sysfs counter's name in
// node_exporter's words ("symbol_error"): rate and increase drop a series'
// name, and the counters of one port, all else alike, would collide
// ("vector cannot contain metrics with the same labelset", as Prometheus
// answered a selector of them all by name).
func PortErrors(fn, rng string) string {
	parts := make([]string, len(PortErrorSeries))
	for i, s := range PortErrorSeries {
		counter := strings.TrimSuffix(strings.TrimPrefix(s, "node_infiniband_"), "_total")
		parts[i] = "label_replace(" + fn + "(" + s + rng + `), "counter", "` + counter + `", "", "")`
	}
	return strings.Join(parts, " or ")
}

// nicFields are the series a NIC adds up, summed per agent, with where
// each goes.
var nicFields = []struct {
	fn   string                      // rate, increase or max_over_time
	expr func(fn, rng string) string // fn of its series over rng ("[5m]")
	set  func(*NIC, float64)
}{
	{"rate", over("ibscope_metrics_packets_analyzed_total"), func(n *NIC, v float64) { n.PacketsPerS = v }},
	{"rate", over("ibscope_metrics_wire_bytes_analyzed_total"), func(n *NIC, v float64) { n.BytesPerS = v }},
	{"rate", over("ibscope_flow_cnps_total"), func(n *NIC, v float64) { n.CNPsPerS = v }},
	{"rate", over("ibscope_flow_ecn_ce_total"), func(n *NIC, v float64) { n.ECNCEPerS = v }},
	{"increase", over("ibscope_capture_packets_dropped_kernel_total"), func(n *NIC, v float64) { n.KernelDrops = v }},
	{"increase", over("ibscope_capture_packets_dropped_device_total"), func(n *NIC, v float64) { n.DeviceDrops = v }},
	{"increase", over("ibscope_capture_completion_errors_total"), func(n *NIC, v float64) { n.CompletionErrors = v }},
	{"increase", over("ibscope_flow_naks_total"), func(n *NIC, v float64) { n.NAKs = v }},
	{"increase", over("ibscope_flow_retransmissions_total"), func(n *NIC, v float64) { n.Retransmissions = v }},
	{"increase", over("ibscope_flow_psn_gaps_total"), func(n *NIC, v float64) { n.PSNGaps = v }},
	{"increase", PortErrors, func(n *NIC, v float64) { n.PortErrors = v }},
	{"increase", over("ibscope_metrics_packets_not_analyzed_total"), func(n *NIC, v float64) { n.NotAnalyzed = v }},
	{"increase", over("ibscope_metrics_packets_undecoded_total"), func(n *NIC, v float64) { n.Undecoded = v }},
	{"increase", over("ibscope_capture_packets_unwritten_total"), func(n *NIC, v float64) { n.Unwritten = v }},
	{"increase", over("ibscope_metrics_nic_read_errors_total"), func(n *NIC, v float64) { n.NICReadErrors = v }},
	{"rate", over("node_infiniband_port_data_received_bytes_total"), func(n *NIC, v float64) { n.PortRxBytesPerS = &v }},
	{"rate", over("node_infiniband_port_data_transmitted_bytes_total"), func(n *NIC, v float64) { n.PortTxBytesPerS = &v }},
	{"max_over_time", over("ibscope_capture_ring_used_ratio"), func(n *NIC, v float64) { n.RingUsedMax = &v }},
}

// NICs returns every agent seen within the lookback with its port's rates
// and counts over the range.
func (c *Client) NICs(ctx context.Context, o Options) ([]NIC, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	agents, err := c.agents(ctx, o)
	if err != nil {
		return nil, err
	}
	nics := make([]NIC, len(agents))
	for i, a := range agents {
		nics[i].Agent = a
	}
	for _, f := range nicFields {
		agg := "sum"
		if f.fn == "max_over_time" {
			agg = "max"
		}
		q := agg + " by (job, instance) (" + f.expr(f.fn, rng(o.Range)) + ")"
		vals, err := c.byAgent(ctx, q, o.At)
		if err != nil {
			return nil, err
		}
		for i := range nics {
			if v, ok := vals[agentKey{nics[i].Job, nics[i].Instance}]; ok {
				f.set(&nics[i], v)
			}
		}
	}
	for i := range nics {
		nics[i].Health = health(&nics[i])
	}
	return nics, nil
}

// RingNearlyFull is the ring's share filled from which a NIC's health
// says "ring nearly full": the next burst may be dropped.
const RingNearlyFull = 0.9

// health names what went wrong with n's capture over the range.
func health(n *NIC) []string {
	h := []string{}
	if n.State != Alive {
		h = append(h, string(n.State))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"kernel drops", n.KernelDrops}, {"device drops", n.DeviceDrops}, {"completion errors", n.CompletionErrors},
		{"not analyzed", n.NotAnalyzed}, {"undecoded", n.Undecoded}, {"unwritten", n.Unwritten}, {"nic read errors", n.NICReadErrors}} {
		if p.v > 0 {
			h = append(h, p.name)
		}
	}
	if n.RingUsedMax != nil && *n.RingUsedMax >= RingNearlyFull {
		h = append(h, "ring nearly full")
	}
	return h
}

// Status is the fleet at a glance: how many agents are in each state and
// the sums of their NICs over the range.
type Status struct {
	RangeSeconds float64 `json:"range_s"`
	Alive        int     `json:"alive"`
	Stale        int     `json:"stale"`
	Stopped      int     `json:"stopped"`
	PacketsPerS  float64 `json:"packets_per_s"`
	BytesPerS    float64 `json:"bytes_per_s"`
	CNPsPerS     float64 `json:"cnps_per_s"`
	ECNCEPerS    float64 `json:"ecn_ce_per_s"`
	Drops        float64 `json:"drops"`  // NIC.Drops added up
	Errors       float64 `json:"errors"` // NIC.Errors added up
	Agents       []Agent `json:"agents"`
}

// Status counts the agents by state and adds up their NICs.
func (c *Client) Status(ctx context.Context, o Options) (*Status, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	nics, err := c.NICs(ctx, o)
	if err != nil {
		return nil, err
	}
	s := &Status{RangeSeconds: o.Range.Seconds(), Agents: []Agent{}}
	for i := range nics {
		n := &nics[i]
		switch n.State {
		case Alive:
			s.Alive++
		case Stale:
			s.Stale++
		case Stopped:
			s.Stopped++
		default:
			return nil, fmt.Errorf("agent %s: state %q", n.Instance, n.State)
		}
		s.PacketsPerS += n.PacketsPerS
		s.BytesPerS += n.BytesPerS
		s.CNPsPerS += n.CNPsPerS
		s.ECNCEPerS += n.ECNCEPerS
		s.Drops += n.Drops()
		s.Errors += n.Errors()
		s.Agents = append(s.Agents, n.Agent)
	}
	return s, nil
}

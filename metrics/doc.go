// Package metrics owns what a live capture serves to Prometheus: the
// capture's own counters (from capture.Report), the RDMA port's NIC
// counters under node_exporter's infiniband names, per-flow health of the
// top flows by bytes (counted in the capture loop as analyze's flows
// analysis counts them), the inter-packet delay histogram, and the
// addresses the captured port owns. cmd/ibcap wires it; package fleet
// reads it back from Prometheus.
//
// The series and their labels (collect.go, nic.go, addresses.go):
//
//   - ibscope_capture_*_total, ibscope_capture_elapsed_seconds,
//     ibscope_capture_files, ibscope_capture_ring_filled_packets,
//     ibscope_capture_ring_used_ratio (rings counted in buffers only),
//     ibscope_metrics_*_total: {device}, one series each. ibscope_metrics_packets_analyzed_total and
//     ibscope_metrics_wire_bytes_analyzed_total add up every flow and
//     move with each packet: rates of the device taken from them do not
//     jump when a flow enters or leaves the top flows (which moves its
//     counts out of or into flow="other"). While sampling they and the
//     flow series are estimates (ibscope_metrics_sampling_rate).
//   - ibscope_capture_info{host,device,port,version}: one series, 1.
//   - ibscope_capture_stopped{device}: 0 while capturing, 1 once stopped
//     gracefully (the final values; ibcap serves them for
//     --metrics-linger).
//   - node_infiniband_*_total{device,port}: the RDMA port's counters, one
//     series each (none without an RDMA port).
//   - ibscope_address_info{host,device,address}: 1 per address the port
//     owns (AddressLabel: the netdev's IPs, the port's GIDs, its LID as
//     lid:N), at most 256.
//   - ibscope_flow_{bytes,packets,cnps,ecn_ce,naks,retransmissions,psn_gaps}_total{device,flow,src,dst}:
//     the Config.TopFlows busiest flows by bytes (default 100, at most
//     10,000) and flow="other" for the rest, so at most TopFlows+1 series
//     each however many flows come. src and dst are the flow's ends as
//     AddressLabel writes them (empty for "other"); they follow from flow
//     and add no series.
//   - ibscope_flow_ipd_seconds: one histogram, its buckets from Config.IPD
//     (at most 200).
//   - ibscope_flows{device}: the distinct flows seen, up to the analysis
//     bound (maxAnalyzedFlows); those past it count as one.
//   - ibscope_metrics_sampling_rate{device}: N, the flow metrics analyse 1
//     packet in N and count each N times (sampler.go): 1 up to
//     Config.SamplePps packets a second, above it one 10 ms window in N.
package metrics

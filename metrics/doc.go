// Package metrics owns what a live capture serves to Prometheus: the
// capture's own counters (from capture.Report), the RDMA port's NIC
// counters under node_exporter's infiniband names, per-flow health of the
// top flows by bytes (analyze's flows analysis, fed from the captured
// frames off the capture loop) and the inter-packet delay histogram. The
// metric names and labels are listed in names.go; cmd/ibcap wires it.
package metrics

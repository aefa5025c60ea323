// Package fleet owns the cluster view of ibcap agents that Prometheus
// scrapes (ibcap --metrics, package metrics): the PromQL queries, which
// agents are alive, stale or stopped, their NICs' rates and problems, and
// the directed traffic matrix between hosts. It talks to Prometheus' HTTP
// API only; cmd/ibanalyze's status, nics and links print what it returns.
//
// An agent is one scraped target (job, instance) that served
// ibscope_capture_info within Options.Lookback. Its state, the staleness
// rule:
//
//   - stopped: the newest ibscope_capture_stopped within the lookback is 1
//     (the agent stopped gracefully and Prometheus scraped its final
//     values; ibcap serves them for --metrics-linger);
//   - alive: not stopped, and ibscope_capture_info has a current sample
//     (Prometheus marks a target's series stale as soon as a scrape
//     fails, so this is "the last scrape succeeded");
//   - stale: neither: its series stopped without the agent saying so
//     (killed, crashed, unreachable, or dropped from the scrape config).
//
// Rates and counts are over Options.Range (rate() and increase()), so a
// range needs at least two scrapes in it. A NIC's packet and byte rates
// come from ibscope_metrics_packets_analyzed_total and
// _wire_bytes_analyzed_total (every packet of every flow, counted as it
// is analysed); the capture's own counters are refreshed once a second
// and serve the drop counts. CNP, ECN and transport error counts add up
// the flow series.
//
// A link is a (source, destination) pair of endpoints: the host and NIC
// whose ibscope_address_info lists the flow's src or dst address (IP,
// GID or lid:N), or the bare address when no agent owns it (or more than
// one does and the observing agent is not among them). One agent sums the
// flows of a link; when several agents see the same link (its two ends
// both capture), the link shows the largest of their measures, not the
// sum, so traffic is not counted twice.
package fleet

package metrics

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibscope/ibscope/analyze"
)

func counterDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"device"}, nil)
}

// The capture's own counts (capture.Report), by device.
var (
	descCaptured    = counterDesc("ibscope_capture_packets_captured_total", "Packets taken from the capture ring (written + filtered + unwritten).")
	descCapBytes    = counterDesc("ibscope_capture_bytes_captured_total", "Bytes of the frames taken from the ring (after the snap length).")
	descWritten     = counterDesc("ibscope_capture_packets_written_total", "Packets written to the capture file (or kept, without -w).")
	descWrittenB    = counterDesc("ibscope_capture_bytes_written_total", "Captured bytes of the packets written.")
	descFiltered    = counterDesc("ibscope_capture_packets_filtered_total", "Packets taken from the ring but not written because of the filters (and non-RoCE frames); frames a kernel filter kept out of the ring are not counted.")
	descUnwritten   = counterDesc("ibscope_capture_packets_unwritten_total", "Packets taken but lost to a write error.")
	descKernelDrops = counterDesc("ibscope_capture_packets_dropped_kernel_total", "Packets the kernel dropped because the ring was full (AF_PACKET).")
	descDevDrops    = counterDesc("ibscope_capture_packets_dropped_device_total", "Packets the RDMA device dropped for lack of a posted buffer (out_of_buffer, whole port).")
	descCompErrs    = counterDesc("ibscope_capture_completion_errors_total", "Packets the verbs backend lost to receive completion errors.")
	descRingEmptied = counterDesc("ibscope_capture_ring_emptied_total", "Times the verbs receive ring ran out of posted buffers.")
	descRingFilled  = prometheus.NewDesc("ibscope_capture_ring_filled_packets", "Packets waiting in the receive ring, not yet taken, at the last report (about once a second).", []string{"device"}, nil)
	descRingUsed    = prometheus.NewDesc("ibscope_capture_ring_used_ratio", "The receive ring's share of buffers filled and not yet taken, 0 to 1, at the last report (rings counted in buffers: verbs).", []string{"device"}, nil)
	descElapsed     = prometheus.NewDesc("ibscope_capture_elapsed_seconds", "How long the capture has run.", []string{"device"}, nil)
	descNotAnalyzed = counterDesc("ibscope_metrics_packets_not_analyzed_total", "Packets missing from the flow metrics because the analysis could not keep up: always 0, the capture loop counts each packet itself (kept for the dashboards and ibanalyze nics that read it).")
	descAnalyzed    = counterDesc("ibscope_metrics_packets_analyzed_total", "Packets in the flow metrics (all flows, flow=\"other\" included): the device's RoCE/IB packet count, updated with every packet.")
	descAnalyzedB   = counterDesc("ibscope_metrics_wire_bytes_analyzed_total", "Wire bytes of the packets in the flow metrics (RoCE: frame plus FCS, preamble and gap).")
	descUndecoded   = counterDesc("ibscope_metrics_packets_undecoded_total", "Packets whose headers did not decode: not in the flow metrics.")
	descNICErrors   = counterDesc("ibscope_metrics_nic_read_errors_total", "Scrapes on which a NIC counter file, or the port's addresses, could not be read.")
	descFiles       = prometheus.NewDesc("ibscope_capture_files", "Capture files opened so far (-C/-G rotations are this minus 1).", []string{"device"}, nil)
	descInfo        = prometheus.NewDesc("ibscope_capture_info", "The capture: always 1.", []string{"host", "device", "port", "version"}, nil)
	descStopped     = prometheus.NewDesc("ibscope_capture_stopped", "1 once the capture has stopped (SIGINT, SIGTERM, -c or --duration): the last values are final.", []string{"device"}, nil)
)

// Per-flow series: the TopFlows busiest flows by bytes, then flow="other".
// src and dst are the flow's ends (AddressLabel, LIDLabel; empty for
// "other"): functions of flow, so they add no series.
var (
	flowLabels       = []string{"device", "flow", "src", "dst"}
	descFlowBytes    = prometheus.NewDesc("ibscope_flow_bytes_total", "Wire bytes of the flow's packets.", flowLabels, nil)
	descFlowPackets  = prometheus.NewDesc("ibscope_flow_packets_total", "Packets of the flow.", flowLabels, nil)
	descFlowCNPs     = prometheus.NewDesc("ibscope_flow_cnps_total", "RoCE congestion notification packets (CNPs) of the flow.", flowLabels, nil)
	descFlowECNCE    = prometheus.NewDesc("ibscope_flow_ecn_ce_total", "Packets of the flow marked ECN Congestion Experienced.", flowLabels, nil)
	descFlowNAKs     = prometheus.NewDesc("ibscope_flow_naks_total", "NAKs the flow carried (all codes, RNR NAKs included).", flowLabels, nil)
	descFlowRetrans  = prometheus.NewDesc("ibscope_flow_retransmissions_total", "Requests whose PSN was seen before (retransmissions).", flowLabels, nil)
	descFlowPSNGaps  = prometheus.NewDesc("ibscope_flow_psn_gaps_total", "Times the flow's request PSN jumped ahead.", flowLabels, nil)
	descFlowsTracked = prometheus.NewDesc("ibscope_flows", "Distinct flows seen (those past the analysis bound count as one).", []string{"device"}, nil)
)

// Describe sends nothing: the flow series come and go, so the collector is
// unchecked.
func (l *Live) Describe(chan<- *prometheus.Desc) {}

// Collect reads every counter now: the capture loop pays nothing per scrape.
func (l *Live) Collect(ch chan<- prometheus.Metric) {
	l.mu.Lock()
	r := l.rep
	l.mu.Unlock()
	dev := l.cfg.Device
	c := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), dev)
	}
	c(descCaptured, r.Captured)
	c(descWritten, r.Written)
	c(descWrittenB, r.Bytes)
	c(descFiltered, r.Filtered)
	c(descUnwritten, r.Unwritten)
	c(descKernelDrops, r.KernelDrops)
	if r.DeviceDropsKnown {
		c(descDevDrops, r.DeviceDrops)
	}
	c(descCompErrs, r.CompletionErrors)
	c(descRingEmptied, r.RingEmptied)
	ch <- prometheus.MustNewConstMetric(descElapsed, prometheus.GaugeValue, r.Elapsed.Seconds(), dev)
	ch <- prometheus.MustNewConstMetric(descRingFilled, prometheus.GaugeValue, float64(r.RingFilled), dev)
	if r.RingSlots > 0 {
		ch <- prometheus.MustNewConstMetric(descRingUsed, prometheus.GaugeValue, min(1, float64(r.RingFilled)/float64(r.RingSlots)), dev)
	}
	c(descNotAnalyzed, 0)
	c(descNICErrors, l.nicErrors.Load())
	if l.cfg.Files != nil {
		ch <- prometheus.MustNewConstMetric(descFiles, prometheus.GaugeValue, float64(l.cfg.Files()), dev)
	}
	port := ""
	if l.cfg.PortDevice != "" {
		port = l.cfg.PortDevice + ":" + itoa(l.cfg.Port)
	}
	ch <- prometheus.MustNewConstMetric(descInfo, prometheus.GaugeValue, 1, l.cfg.Host, dev, port, l.cfg.Version)
	stopped := 0.0
	if l.stopped.Load() {
		stopped = 1
	}
	ch <- prometheus.MustNewConstMetric(descStopped, prometheus.GaugeValue, stopped, dev)
	l.collectNIC(ch)
	l.collectAddresses(ch)
	l.collectFlows(ch)
}

// otherFlow is the flow="other" series' flow label.
const otherFlow = "other"

// collectFlows sends the top flows by bytes and the rest as flow="other",
// and the IPD histogram. Only the counts are copied under the lock, which
// the capture loop takes for each packet; the flows are ranked without it,
// and only those served are named (their keys never change once written).
func (l *Live) collectFlows(ch chan<- prometheus.Metric) {
	l.flowMu.Lock()
	undecoded, capBytes := l.undecoded, l.capBytes
	analyzed, wireBytes := l.analyzed, l.wireBytes
	t := l.flows
	names := t.names[:len(t.flows)]
	all := make([]flowCounts, len(t.flows), len(t.flows)+1)
	for i := range t.flows {
		all[i] = t.flows[i].counts
	}
	if t.other.counts.Packets > 0 {
		all = append(all, t.other.counts)
	}
	ipdCount, ipdSum, ipdBuckets := l.ipd.snapshot()
	l.flowMu.Unlock()
	dev := l.cfg.Device
	ch <- prometheus.MustNewConstMetric(descUndecoded, prometheus.CounterValue, float64(undecoded), dev)
	ch <- prometheus.MustNewConstMetric(descCapBytes, prometheus.CounterValue, float64(capBytes), dev)
	ch <- prometheus.MustNewConstMetric(descAnalyzed, prometheus.CounterValue, float64(analyzed), dev)
	ch <- prometheus.MustNewConstMetric(descAnalyzedB, prometheus.CounterValue, float64(wireBytes), dev)
	ch <- prometheus.MustNewConstMetric(descFlowsTracked, prometheus.GaugeValue, float64(len(all)), dev)
	ch <- prometheus.MustNewConstHistogram(descIPD, ipdCount, ipdSum, ipdBuckets)
	// A stable sort of the flows' places in all, by bytes. The table's own
	// "other" flow (past its bound, last in all) ranks like any flow and
	// joins flow="other".
	rank := make([]int32, len(all))
	for i := range rank {
		rank[i] = int32(i)
	}
	slices.SortStableFunc(rank, func(a, b int32) int { return cmp.Compare(all[b].WireBytes, all[a].WireBytes) })
	devLabel := labelPair("device", dev)
	var top []servedFlow
	var other flowCounts
	for _, i := range rank {
		f := &all[i]
		if len(top) < l.cfg.TopFlows && int(i) < len(names) {
			key := analyze.FlowGroupKey(names[i])
			src, dst := keyAddresses(&key)
			top = append(top, servedFlow{f, []*dto.LabelPair{devLabel, labelPair("dst", dst), labelPair("flow", key.String()), labelPair("src", src)}})
			continue
		}
		other.add(f)
	}
	// Sent in the order the registry sorts each family's series in (by
	// label values: device is the same for all, src follows from flow,
	// flow="other" has dst ""), its sort finds them in order: one sort of
	// the flows served, not seven of their series (a fifth of a scrape of
	// 1,000 flows).
	if len(all) > len(top) {
		sendFlow(ch, &other, []*dto.LabelPair{devLabel, labelPair("dst", ""), labelPair("flow", otherFlow), labelPair("src", "")})
	}
	slices.SortFunc(top, func(a, b servedFlow) int {
		return cmp.Or(cmp.Compare(a.label(1), b.label(1)), cmp.Compare(a.label(2), b.label(2)))
	})
	for _, t := range top {
		sendFlow(ch, t.counts, t.labels)
	}
}

// servedFlow is a flow with series of its own: its counts and label pairs
// (device, dst, flow, src).
type servedFlow struct {
	counts *flowCounts
	labels []*dto.LabelPair
}

func (s *servedFlow) label(i int) string { return s.labels[i].GetValue() }

func labelPair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// sendFlow sends f's seven series; labels are flowLabels' pairs sorted by
// name (as the registry wants them), shared by the seven: a label set is
// made once a flow, not once a series as prometheus.MustNewConstMetric would.
func sendFlow(ch chan<- prometheus.Metric, f *flowCounts, labels []*dto.LabelPair) {
	for _, m := range [...]struct {
		d *prometheus.Desc
		v uint64
	}{{descFlowBytes, f.WireBytes}, {descFlowPackets, f.Packets}, {descFlowCNPs, f.CNPs}, {descFlowECNCE, f.ECNCE},
		{descFlowNAKs, f.NAKs}, {descFlowRetrans, f.Retrans}, {descFlowPSNGaps, f.PSNGaps}} {
		ch <- &counterSeries{desc: m.d, labels: labels, value: float64(m.v)}
	}
}

// counterSeries is one counter sample with label pairs made by the caller
// (sorted by name, valid UTF-8, never changed after: the registry may
// read them while it encodes).
type counterSeries struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
}

func (c *counterSeries) Desc() *prometheus.Desc { return c.desc }

func (c *counterSeries) Write(m *dto.Metric) error {
	m.Label = c.labels
	m.Counter = &dto.Counter{Value: &c.value}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

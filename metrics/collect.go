package metrics

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
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
	descSampling    = prometheus.NewDesc("ibscope_metrics_sampling_rate", "The flow metrics analyse 1 packet in this many, each counted this many times: 1 up to --metrics-sample-pps packets a second, above it one 10 ms window of every packet in N.", []string{"device"}, nil)
	descFiles       = prometheus.NewDesc("ibscope_capture_files", "Capture files opened so far (-C/-G rotations are this minus 1).", []string{"device"}, nil)
	descInfo        = prometheus.NewDesc("ibscope_capture_info", "The capture: always 1.", []string{"host", "device", "port", "version"}, nil)
	descStopped     = prometheus.NewDesc("ibscope_capture_stopped", "1 once the capture has stopped (SIGINT, SIGTERM, -c or --duration): the last values are final.", []string{"device"}, nil)
)

// Per-flow series: the TopFlows busiest flows by bytes, then flow="other".
// src and dst are the flow's ends (AddressLabel, LIDLabel; empty for
// "other"): functions of flow, so they add no series.
var flowLabels = []string{"device", "flow", "src", "dst"}

// flowFamily is one per-flow counter: its name, help and the count it
// serves.
type flowFamily struct {
	name, help string
	count      func(*flowCounts) uint64
	desc       *prometheus.Desc
}

var flowFamilies = func() []flowFamily {
	fs := []flowFamily{
		{name: "ibscope_flow_bytes_total", help: "Wire bytes of the flow's packets.", count: func(c *flowCounts) uint64 { return c.WireBytes }},
		{name: "ibscope_flow_packets_total", help: "Packets of the flow.", count: func(c *flowCounts) uint64 { return c.Packets }},
		{name: "ibscope_flow_cnps_total", help: "RoCE congestion notification packets (CNPs) of the flow.", count: func(c *flowCounts) uint64 { return c.CNPs }},
		{name: "ibscope_flow_ecn_ce_total", help: "Packets of the flow marked ECN Congestion Experienced.", count: func(c *flowCounts) uint64 { return c.ECNCE }},
		{name: "ibscope_flow_naks_total", help: "NAKs the flow carried (all codes, RNR NAKs included).", count: func(c *flowCounts) uint64 { return c.NAKs }},
		{name: "ibscope_flow_retransmissions_total", help: "Requests whose PSN was seen before (retransmissions).", count: func(c *flowCounts) uint64 { return c.Retrans }},
		{name: "ibscope_flow_psn_gaps_total", help: "Times the flow's request PSN jumped ahead.", count: func(c *flowCounts) uint64 { return c.PSNGaps }},
	}
	for i := range fs {
		fs[i].desc = prometheus.NewDesc(fs[i].name, fs[i].help, flowLabels, nil)
	}
	return fs
}()

var descFlowsTracked = prometheus.NewDesc("ibscope_flows", "Distinct flows seen (those past the analysis bound count as one).", []string{"device"}, nil)

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
	l.collectTotals(ch)
}

// otherFlow is the flow="other" series' flow label.
const otherFlow = "other"

// collectTotals sends the device's totals of the flow metrics and the IPD
// histogram.
func (l *Live) collectTotals(ch chan<- prometheus.Metric) {
	l.flowMu.Lock()
	undecoded, capBytes := l.undecoded, l.capBytes
	analyzed, wireBytes, sampleEvery := l.analyzed, l.wireBytes, l.sampleEvery
	flows := len(l.flows.flows)
	if l.flows.other.counts.Packets > 0 {
		flows++
	}
	ipdCount, ipdSum, ipdBuckets := l.ipd.snapshot()
	l.flowMu.Unlock()
	dev := l.cfg.Device
	ch <- prometheus.MustNewConstMetric(descUndecoded, prometheus.CounterValue, float64(undecoded), dev)
	ch <- prometheus.MustNewConstMetric(descCapBytes, prometheus.CounterValue, float64(capBytes), dev)
	ch <- prometheus.MustNewConstMetric(descAnalyzed, prometheus.CounterValue, float64(analyzed), dev)
	ch <- prometheus.MustNewConstMetric(descAnalyzedB, prometheus.CounterValue, float64(wireBytes), dev)
	ch <- prometheus.MustNewConstMetric(descFlowsTracked, prometheus.GaugeValue, float64(flows), dev)
	ch <- prometheus.MustNewConstMetric(descSampling, prometheus.GaugeValue, float64(sampleEvery), dev)
	ch <- prometheus.MustNewConstHistogram(descIPD, ipdCount, ipdSum, ipdBuckets)
}

// servedFlows returns the flows with series of their own, the top flows by
// bytes, and flow="other" for the rest (when there is any), in the order
// the registry sorts each family's series in (by label values: device is
// the same for all, src follows from flow, flow="other" has dst "", so it
// comes first). Only the counts are copied under the lock, which the
// capture loop takes for each packet; the flows are ranked without it,
// and only those served are named (their keys never change once written).
func (l *Live) servedFlows() []servedFlow {
	l.flowMu.Lock()
	t := l.flows
	names := t.names[:len(t.flows)]
	all := make([]flowCounts, len(t.flows), len(t.flows)+1)
	for i := range t.flows {
		all[i] = t.flows[i].counts
	}
	if t.other.counts.Packets > 0 {
		all = append(all, t.other.counts)
	}
	l.flowMu.Unlock()
	// A stable sort of the flows' places in all, by bytes. The table's own
	// "other" flow (past its bound, last in all) ranks like any flow and
	// joins flow="other".
	rank := make([]int32, len(all))
	for i := range rank {
		rank[i] = int32(i)
	}
	slices.SortStableFunc(rank, func(a, b int32) int { return cmp.Compare(all[b].WireBytes, all[a].WireBytes) })
	top := make([]servedFlow, 1, min(len(all), l.cfg.TopFlows)+1) // top[0]: other
	var other flowCounts
	l.labelMu.Lock()
	for _, i := range rank {
		f := &all[i]
		if len(top) <= l.cfg.TopFlows && int(i) < len(names) {
			top = append(top, servedFlow{f, l.labelsOf(int(i), &names[i])})
			continue
		}
		other.add(f)
	}
	l.labelMu.Unlock()
	slices.SortFunc(top[1:], func(a, b servedFlow) int {
		return cmp.Or(cmp.Compare(a.label(1), b.label(1)), cmp.Compare(a.label(2), b.label(2)))
	})
	if len(all) == len(top)-1 {
		return top[1:]
	}
	top[0] = servedFlow{&other, l.otherLabels}
	return top
}

// labelsOf returns flow i's labels, made the first time it is served and
// kept (a flow's key never changes): a scrape names a flow without
// allocating. The caller holds labelMu.
func (l *Live) labelsOf(i int, name *decode.FlowKey) *labelSet {
	if i >= len(l.labels) {
		l.labels = append(l.labels, make([]*labelSet, i+1-len(l.labels))...)
	}
	if l.labels[i] == nil {
		key := analyze.FlowGroupKey(*name)
		src, dst := keyAddresses(&key)
		l.labels[i] = newLabelSet(l.cfg.Device, dst, key.String(), src)
	}
	return l.labels[i]
}

// flowSeries is the collector of the per-flow series (the rest are Live's).
type flowSeries struct{ l *Live }

// Describe sends nothing: the flow series come and go.
func (flowSeries) Describe(chan<- *prometheus.Desc) {}

func (s flowSeries) Collect(ch chan<- prometheus.Metric) {
	served := s.l.servedFlows()
	for i := range flowFamilies {
		fam := &flowFamilies[i]
		for j := range served {
			f := &served[j]
			ch <- &counterSeries{desc: fam.desc, labels: f.labels.pairs, value: float64(fam.count(f.counts))}
		}
	}
}

// servedFlow is a flow with series of its own: its counts and labels.
type servedFlow struct {
	counts *flowCounts
	labels *labelSet
}

func (s *servedFlow) label(i int) string { return s.labels.pairs[i].GetValue() }

// labelSet is a flow's labels (device, dst, flow, src: sorted by name, as
// the registry wants them, shared by its seven series, never changed once
// made: the registry may read them while it encodes), and the same as
// exposition text.
type labelSet struct {
	pairs []*dto.LabelPair
	text  []byte // device="...",dst="...",flow="...",src="..."
}

func newLabelSet(device, dst, flow, src string) *labelSet {
	ls := &labelSet{pairs: []*dto.LabelPair{labelPair("device", device), labelPair("dst", dst), labelPair("flow", flow), labelPair("src", src)}}
	for i, lp := range ls.pairs {
		if i > 0 {
			ls.text = append(ls.text, ',')
		}
		ls.text = append(ls.text, lp.GetName()...)
		ls.text = append(ls.text, '=', '"')
		ls.text = appendLabelValue(ls.text, lp.GetValue())
		ls.text = append(ls.text, '"')
	}
	return ls
}

func labelPair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

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

package telemetry

import (
	"fmt"
	"strconv"
	"strings"
)

// DataID is a DOCA telemetry_diag data ID. Its 64 bits are
//
//	63..48 group    the block of the device that counts (0x1020 port receive, ...)
//	47..32 counter  the counter within the group
//	31..0  index    which instance: for port counters bits 7..0 are the local
//	                port and bits 11..8 the priority; for PCIe link counters
//	                bits 7..0, 15..8 and 23..16 are node, pcie_index and depth
//
// The type of a data ID (group and counter, index zero) selects its
// DiagCounter in DiagCatalog. The port and priority bits follow NVIDIA's own
// DOCA samples; the order of the three PCIe bytes (node, pcie_index, depth)
// follows one published example ID and is the least certain part.
type DataID uint64

// Group is bits 63..48.
func (id DataID) Group() uint16 { return uint16(id >> 48) }

// CounterNum is bits 47..32.
func (id DataID) CounterNum() uint16 { return uint16(id >> 32) }

// Index is bits 31..0.
func (id DataID) Index() uint32 { return uint32(id) }

// Type is the ID with its index cleared.
func (id DataID) Type() DataID { return id &^ 0xFFFFFFFF }

// Port is the local port of a port counter (bits 7..0).
func (id DataID) Port() int { return int(id & 0xFF) }

// Priority is the priority of a per-priority counter (bits 11..8).
func (id DataID) Priority() int { return int(id>>8) & 0xF }

// PCIe returns the node, pcie_index and depth of a PCIe link counter
// (bytes 0, 1 and 2 of the index).
func (id DataID) PCIe() (node, pcieIndex, depth int) {
	return int(id & 0xFF), int(id>>8) & 0xFF, int(id>>16) & 0xFF
}

// String gives the form DOCA prints: 0x followed by 16 hex digits.
func (id DataID) String() string { return fmt.Sprintf("0x%016x", uint64(id)) }

// ParseDataID reads a data ID written in hex, with or without 0x.
func ParseDataID(s string) (DataID, error) {
	t := strings.TrimSpace(s)
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	if t == "" || len(t) > 16 {
		return 0, fmt.Errorf("data ID %s: want 0x and up to 16 hex digits", quoted(s))
	}
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("data ID %s: want 0x and up to 16 hex digits", quoted(s))
	}
	return DataID(v), nil
}

// IndexKind says what the index bits of a data ID select.
type IndexKind uint8

const (
	IndexNone         IndexKind = iota // device-wide; index 0
	IndexPort                          // bits 7..0: local port
	IndexPortPriority                  // bits 7..0: local port, bits 11..8: priority
	IndexPCIe                          // bytes 0..2: node, pcie_index, depth
)

// DiagCounter describes one documented telemetry_diag data ID type.
type DiagCounter struct {
	Type  DataID // group and counter; index bits zero
	Name  string // base name; DataID.Name adds port, priority or PCIe link
	Index IndexKind
	Unit  Unit
	Kind  Kind
	Desc  string
}

// Data ID groups.
const (
	GroupPortRx       = 0x1020
	GroupHostRxBuffer = 0x1040
	GroupRxTransport  = 0x1080
	GroupCompletion   = 0x10c0
	GroupTxTransport  = 0x1100
	GroupPortTx       = 0x1140
	GroupPCIeLink     = 0x1160
	GroupICMC         = 0x1180
)

var diagGroupNames = map[uint16]string{
	GroupPortRx: "port_rx", GroupHostRxBuffer: "host_rx_buffer", GroupRxTransport: "rx_transport",
	GroupCompletion: "completion", GroupTxTransport: "tx_transport", GroupPortTx: "port_tx",
	GroupPCIeLink: "pcie_link", GroupICMC: "icmc",
}

func dt(group, counter uint16) DataID { return DataID(group)<<48 | DataID(counter)<<32 }

// DiagCatalog lists the documented telemetry_diag data ID types: the names,
// the index meaning, unit and counter/statistic kind. Names follow the DOCA
// telemetry_diag samples (port_0_rx_bytes, global_icmc_hit, ...). The port,
// transport and ICMC entries come from NVIDIA's sample sources; the
// completion-engine, host-receive-buffer and PCIe link entries from a
// reading of the guide's "Supported Data IDs" appendix. The PCIe latency
// histogram bins are not listed (their IDs could not be confirmed): such an
// ID still decodes to a name like "pcie_link_counter_0x10".
var DiagCatalog = []DiagCounter{
	{dt(GroupPortRx, 0x1), "rx_bytes", IndexPort, UnitBytes, KindCounter, "bytes received on the physical port"},
	{dt(GroupPortRx, 0x2), "rx_bytes", IndexPortPriority, UnitBytes, KindCounter, "bytes received on the physical port and priority"},
	{dt(GroupPortRx, 0x3), "rx_packets", IndexPort, UnitCount, KindCounter, "packets received on the physical port"},
	{dt(GroupPortRx, 0x4), "rx_packets", IndexPortPriority, UnitCount, KindCounter, "packets received on the physical port and priority"},
	{dt(GroupPortRx, 0x5), "rx_discard_buf_packets", IndexPort, UnitCount, KindCounter, "received packets dropped for lack of receive buffers"},
	{dt(GroupPortRx, 0x6), "rx_pause_packets", IndexPortPriority, UnitCount, KindCounter, "link-layer pause frames received on the port and priority"},
	{dt(GroupHostRxBuffer, 0x1), "host_rx_buffer_discards", IndexNone, UnitCount, KindCounter, "packets discarded in the host receive buffer"},
	{dt(GroupRxTransport, 0x4), "rx_transport_ecn_packets", IndexPort, UnitCount, KindCounter, "RoCEv2 packets received ECN-marked (congestion experienced) at the notification point"},
	{dt(GroupRxTransport, 0x5), "rx_transport_cnp_handled_packets", IndexPort, UnitCount, KindCounter, "CNPs received and handled by the reaction point"},
	{dt(GroupCompletion, 0x1), "global_rx_cqes", IndexNone, UnitCount, KindCounter, "receive CQEs written, device-wide"},
	{dt(GroupCompletion, 0x2), "function_rx_cqes", IndexNone, UnitCount, KindCounter, "receive CQEs written, this function"},
	{dt(GroupCompletion, 0x4), "global_tx_cqes", IndexNone, UnitCount, KindCounter, "send CQEs written, device-wide"},
	{dt(GroupCompletion, 0x5), "function_tx_cqes", IndexNone, UnitCount, KindCounter, "send CQEs written, this function"},
	{dt(GroupTxTransport, 0x1), "tx_transport_cnp_sent_packets", IndexPort, UnitCount, KindCounter, "CNPs sent by the notification point"},
	{dt(GroupTxTransport, 0x2), "tx_transport_done_due_to_cc_deschedule_events", IndexNone, UnitCount, KindCounter, "QPs descheduled for congestion-control rate limiting"},
	{dt(GroupPortTx, 0x1), "tx_bytes", IndexPort, UnitBytes, KindCounter, "bytes transmitted on the physical port (no loopback)"},
	{dt(GroupPortTx, 0x2), "tx_bytes", IndexPortPriority, UnitBytes, KindCounter, "bytes transmitted on the physical port and priority"},
	{dt(GroupPortTx, 0x3), "tx_packets", IndexPort, UnitCount, KindCounter, "packets transmitted on the physical port (no loopback)"},
	{dt(GroupPortTx, 0x4), "tx_packets", IndexPortPriority, UnitCount, KindCounter, "packets transmitted on the physical port and priority"},
	{dt(GroupPortTx, 0x5), "tx_pause_packets", IndexPortPriority, UnitCount, KindCounter, "link-layer pause frames transmitted on the port and priority"},
	{dt(GroupPCIeLink, 0x1), "pcie_link_inbound_bytes", IndexPCIe, UnitBytes, KindCounter, "bytes received from PCIe"},
	{dt(GroupPCIeLink, 0x2), "pcie_link_outbound_bytes", IndexPCIe, UnitBytes, KindCounter, "bytes sent to PCIe"},
	{dt(GroupPCIeLink, 0x3), "pcie_link_inbound_data_bytes", IndexPCIe, UnitBytes, KindCounter, "payload bytes received from PCIe"},
	{dt(GroupPCIeLink, 0x4), "pcie_link_outbound_data_bytes", IndexPCIe, UnitBytes, KindCounter, "payload bytes sent to PCIe"},
	{dt(GroupPCIeLink, 0x5), "pcie_link_write_stall_no_posted_data_credits_ns", IndexPCIe, UnitNs, KindCounter, "time writes stalled for lack of posted data credits"},
	{dt(GroupPCIeLink, 0x6), "pcie_link_write_stall_no_posted_header_credits_ns", IndexPCIe, UnitNs, KindCounter, "time writes stalled for lack of posted header credits"},
	{dt(GroupPCIeLink, 0x7), "pcie_link_read_stall_no_non_posted_data_credits_ns", IndexPCIe, UnitNs, KindCounter, "time reads stalled for lack of non-posted data credits"},
	{dt(GroupPCIeLink, 0x8), "pcie_link_read_stall_no_non_posted_header_credits_ns", IndexPCIe, UnitNs, KindCounter, "time reads stalled for lack of non-posted header credits"},
	{dt(GroupPCIeLink, 0x9), "pcie_link_read_stall_no_completion_buffers_ns", IndexPCIe, UnitNs, KindCounter, "time reads stalled for lack of completion buffers"},
	{dt(GroupPCIeLink, 0xa), "pcie_link_read_stall_ordering_ns", IndexPCIe, UnitNs, KindCounter, "time reads stalled by ordering rules"},
	{dt(GroupPCIeLink, 0xb), "pcie_link_read_latency_total_ns", IndexPCIe, UnitNs, KindCounter, "sum of PCIe read latencies (divide by read_latency_packets for the mean)"},
	{dt(GroupPCIeLink, 0xc), "pcie_link_read_latency_packets", IndexPCIe, UnitCount, KindCounter, "PCIe reads whose latency was measured"},
	{dt(GroupPCIeLink, 0xd), "pcie_link_read_latency_max_ns", IndexPCIe, UnitNs, KindGauge, "maximum PCIe read latency (statistic)"},
	{dt(GroupPCIeLink, 0xe), "pcie_link_read_latency_min_ns", IndexPCIe, UnitNs, KindGauge, "minimum PCIe read latency (statistic)"},
	{dt(GroupICMC, 0x1), "global_icmc_request", IndexNone, UnitCount, KindCounter, "ICM cache accesses"},
	{dt(GroupICMC, 0x2), "global_icmc_hit", IndexNone, UnitCount, KindCounter, "ICM cache hits"},
	{dt(GroupICMC, 0x3), "global_icmc_miss", IndexNone, UnitCount, KindCounter, "ICM cache misses"},
}

var diagByType = func() map[DataID]int {
	m := make(map[DataID]int, len(DiagCatalog))
	for i, c := range DiagCatalog {
		m[c.Type] = i
	}
	return m
}()

// LookupDataID finds the catalogue entry of an ID's type.
func LookupDataID(id DataID) (DiagCounter, bool) {
	i, ok := diagByType[id.Type()]
	if !ok {
		return DiagCounter{}, false
	}
	return DiagCatalog[i], true
}

// Name gives a meaningful column name for the ID: "port_1_rx_bytes",
// "port_0_priority_3_tx_pause_packets", "pcie_link_outbound_bytes_node1_pcie2_depth0",
// "global_icmc_hit"; for an ID outside the catalogue, "port_rx_counter_0x7_idx_0x1"
// when the group is known and "data_id_0x..." otherwise.
func (id DataID) Name() string {
	c, ok := LookupDataID(id)
	if !ok {
		g, gok := diagGroupNames[id.Group()]
		if !gok {
			return "data_id_" + id.String()
		}
		n := fmt.Sprintf("%s_counter_0x%x", g, id.CounterNum())
		if id.Index() != 0 {
			n += fmt.Sprintf("_idx_0x%x", id.Index())
		}
		return n
	}
	var name string
	var used uint32
	switch c.Index {
	case IndexPort:
		name, used = "port_"+strconv.Itoa(id.Port())+"_"+c.Name, 0xFF
	case IndexPortPriority:
		name, used = "port_"+strconv.Itoa(id.Port())+"_priority_"+strconv.Itoa(id.Priority())+"_"+c.Name, 0xFFF
	case IndexPCIe:
		name, used = c.Name, 0xFFFFFF
		if id.Index() != 0 {
			n, p, d := id.PCIe()
			name = fmt.Sprintf("%s_node%d_pcie%d_depth%d", c.Name, n, p, d)
		}
	default:
		name = c.Name
	}
	if rest := id.Index() &^ used; rest != 0 {
		// Index bits the documented layout does not explain: keep them visible.
		name += fmt.Sprintf("_idx_0x%x", rest)
	}
	return name
}

// DiagCounterFor builds column metadata for a data ID as telemetry_diag
// reports it: width 64 for output formats 0 and 1, 32 for format 2. An ID
// outside the catalogue is taken as a 64-bit count.
func DiagCounterFor(id DataID, name string, width uint8, clearOnSample bool) Counter {
	c := Counter{Name: name, Unit: UnitCount, Kind: KindCounter, Width: width, ClearOnSample: clearOnSample, DataID: id}
	if d, ok := LookupDataID(id); ok {
		c.Unit, c.Kind = d.Unit, d.Kind
	} else {
		c.Unit = unitFromName(name)
	}
	if c.Name == "" {
		c.Name = id.Name()
	}
	if c.Kind == KindGauge {
		c.ClearOnSample = false
	}
	return c
}

// unitFromName guesses a unit from a column name's suffix.
func unitFromName(name string) Unit {
	switch {
	case strings.HasSuffix(name, "_bytes"):
		return UnitBytes
	case strings.HasSuffix(name, "_ns"):
		return UnitNs
	}
	return UnitCount
}

// Canonical names of the counters ibscope's analyses use. Port counters use
// the sysfs spelling for every source: perfquery's PortXmitWait becomes
// port_xmit_wait.
const (
	PortXmitData            = "port_xmit_data" // 4-byte words
	PortRcvData             = "port_rcv_data"  // 4-byte words
	PortXmitPackets         = "port_xmit_packets"
	PortRcvPackets          = "port_rcv_packets"
	PortXmitWait            = "port_xmit_wait" // ticks in which the port had data but could not send
	PortXmitDiscards        = "port_xmit_discards"
	NpCNPSent               = "np_cnp_sent"
	RpCNPHandled            = "rp_cnp_handled"
	NpECNMarkedRoCEPackets  = "np_ecn_marked_roce_packets"
	OutOfSequence           = "out_of_sequence"
	PacketSeqErr            = "packet_seq_err"
	OutOfBuffer             = "out_of_buffer"
	LocalAckTimeoutErr      = "local_ack_timeout_err"
	ImpliedNakSeqErr        = "implied_nak_seq_err"
	RnrNakRetryErr          = "rnr_nak_retry_err"
	DuplicateRequest        = "duplicate_request"
	RpCNPIgnored            = "rp_cnp_ignored"
	RoceAdpRetrans          = "roce_adp_retrans"
	RoceSlowRestart         = "roce_slow_restart"
	RoceAdpRetransTimeout   = "roce_adp_retrans_to"
	RoceSlowRestartCNPs     = "roce_slow_restart_cnps"
	RoceSlowRestartTransfer = "roce_slow_restart_trans"
)

// ibPortCounter is one IBA PortCounters / PortCountersExtended field, with
// its sysfs and perfquery spellings.
type ibPortCounter struct {
	sysfs, perfquery string
	unit             Unit
	width            uint8 // width in PortCounters (saturating); 0 when only in PortCountersExtended
	sysfsWidth       uint8 // width as sysfs exposes it (64 where the kernel uses the extended counter)
}

// ibPortCounters: IBA PortCounters widths; perfquery -x (PortCountersExtended)
// and the kernel's extended-width sysfs attributes are 64 bits.
var ibPortCounters = []ibPortCounter{
	{"symbol_error", "SymbolErrorCounter", UnitCount, 16, 16},
	{"link_error_recovery", "LinkErrorRecoveryCounter", UnitCount, 8, 8},
	{"link_downed", "LinkDownedCounter", UnitCount, 8, 8},
	{"port_rcv_errors", "PortRcvErrors", UnitCount, 16, 16},
	{"port_rcv_remote_physical_errors", "PortRcvRemotePhysicalErrors", UnitCount, 16, 16},
	{"port_rcv_switch_relay_errors", "PortRcvSwitchRelayErrors", UnitCount, 16, 16},
	{PortXmitDiscards, "PortXmitDiscards", UnitCount, 16, 16},
	{"port_xmit_constraint_errors", "PortXmitConstraintErrors", UnitCount, 8, 8},
	{"port_rcv_constraint_errors", "PortRcvConstraintErrors", UnitCount, 8, 8},
	{"local_link_integrity_errors", "LocalLinkIntegrityErrors", UnitCount, 4, 4},
	{"excessive_buffer_overrun_errors", "ExcessiveBufferOverrunErrors", UnitCount, 4, 4},
	{"VL15_dropped", "VL15Dropped", UnitCount, 16, 16},
	{"qp1_dropped", "QP1Dropped", UnitCount, 16, 16},
	{PortXmitData, "PortXmitData", UnitWords, 32, 64},
	{PortRcvData, "PortRcvData", UnitWords, 32, 64},
	{PortXmitPackets, "PortXmitPkts", UnitCount, 32, 64},
	{PortRcvPackets, "PortRcvPkts", UnitCount, 32, 64},
	{PortXmitWait, "PortXmitWait", UnitTicks, 32, 32},
	{"unicast_xmit_packets", "PortUnicastXmitPkts", UnitCount, 0, 64},
	{"unicast_rcv_packets", "PortUnicastRcvPkts", UnitCount, 0, 64},
	{"multicast_xmit_packets", "PortMulticastXmitPkts", UnitCount, 0, 64},
	{"multicast_rcv_packets", "PortMulticastRcvPkts", UnitCount, 0, 64},
}

var ibBySysfs, ibByPerfquery = func() (map[string]int, map[string]int) {
	a, b := map[string]int{}, map[string]int{}
	for i, c := range ibPortCounters {
		a[c.sysfs] = i
		b[c.perfquery] = i
	}
	return a, b
}()

// hwCounterGauges are hw_counters entries that are settings or levels, not
// counts (unit in the map).
var hwCounterGauges = map[string]Unit{"lifespan": UnitMs}

// hwCounters64 are hw_counters the driver reads from 64-bit fields: mlx5's
// congestion counters (QUERY_CONG_STATISTICS gives each as a high and a
// low 32-bit word). mlx5's other hw_counters are its 32-bit Q counters.
var hwCounters64 = map[string]bool{RpCNPIgnored: true, RpCNPHandled: true, NpECNMarkedRoCEPackets: true, NpCNPSent: true}

// SysfsCounter gives the metadata of a sysfs counter file of a hardware
// RDMA device: dir is "counters" or "hw_counters". IBA port counters follow
// the kernel's widths (64-bit data and packet counters, saturating
// 4..32-bit error counters and port_xmit_wait); hw_counters are 32-bit
// hardware counters that wrap, except those the driver reads as 64-bit
// (hwCounters64). A software device's counters are wider: see
// openSysfsPort, which also widens any counter whose file shows a value its
// width cannot hold.
func SysfsCounter(dir, name string) Counter {
	if dir == "counters" {
		if i, ok := ibBySysfs[name]; ok {
			p := ibPortCounters[i]
			w := p.sysfsWidth
			return Counter{Name: name, Unit: p.unit, Kind: KindCounter, Width: w, Saturating: w < 64}
		}
		return Counter{Name: name, Unit: unitFromName(name), Kind: KindCounter, Width: 64}
	}
	if u, ok := hwCounterGauges[name]; ok {
		return Counter{Name: name, Unit: u, Kind: KindGauge, Width: 64}
	}
	if hwCounters64[name] {
		return Counter{Name: name, Unit: unitFromName(name), Kind: KindCounter, Width: 64}
	}
	return Counter{Name: name, Unit: unitFromName(name), Kind: KindCounter, Width: 32}
}

// widenTo64 makes c a 64-bit wrapping counter when value, a reading of it,
// is more than its width holds: the file says the counter is wider than
// the catalogue thought. A saturating counter is left alone (its maximum
// is its meaning); so is a gauge.
func widenTo64(c *Counter, value uint64) {
	if c.Kind == KindCounter && !c.Saturating && c.Width < 64 && value > c.Max() {
		c.Width = 64
	}
}

// PerfqueryCounter maps a perfquery field name to its canonical name and
// metadata. extended is true for `perfquery -x` output (64-bit, wrapping).
// Unknown fields get a snake_case name and 64-bit counter metadata.
func PerfqueryCounter(field string, extended bool) Counter {
	if i, ok := ibByPerfquery[field]; ok {
		p := ibPortCounters[i]
		if extended || p.width == 0 {
			return Counter{Name: p.sysfs, Unit: p.unit, Kind: KindCounter, Width: 64}
		}
		return Counter{Name: p.sysfs, Unit: p.unit, Kind: KindCounter, Width: p.width, Saturating: true}
	}
	return Counter{Name: snakeCase(field), Unit: UnitCount, Kind: KindCounter, Width: 64}
}

// snakeCase turns "PortXmitWait" into "port_xmit_wait".
func snakeCase(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if i > 0 && (s[i-1] < 'A' || s[i-1] > 'Z' || (i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z')) && s[i-1] != '_' {
				b.WriteByte('_')
			}
			b.WriteByte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			if b.Len() > 0 {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

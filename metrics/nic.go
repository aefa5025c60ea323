package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscope/ibscope/telemetry"
)

// nicCounters maps the RDMA port's sysfs counters (counters/NAME) to the
// names node_exporter's infiniband collector serves them under, so that
// dashboards built on node_exporter work on ibcap's agent unchanged. The
// values go through telemetry's catalog (Counter.ToBase), which turns
// port_xmit_data and port_rcv_data from 4-byte words into bytes.
var nicCounters = map[string]string{
	"excessive_buffer_overrun_errors": "excessive_buffer_overrun_errors_total",
	"link_downed":                     "link_downed_total",
	"link_error_recovery":             "link_error_recovery_total",
	"local_link_integrity_errors":     "local_link_integrity_errors_total",
	"multicast_rcv_packets":           "multicast_packets_received_total",
	"multicast_xmit_packets":          "multicast_packets_transmitted_total",
	"port_rcv_constraint_errors":      "port_constraint_errors_received_total",
	"port_xmit_constraint_errors":     "port_constraint_errors_transmitted_total",
	"port_rcv_data":                   "port_data_received_bytes_total",
	"port_xmit_data":                  "port_data_transmitted_bytes_total",
	"port_rcv_discards":               "port_discards_received_total",
	"port_xmit_discards":              "port_discards_transmitted_total",
	"port_rcv_errors":                 "port_errors_received_total",
	"port_rcv_packets":                "port_packets_received_total",
	"port_xmit_packets":               "port_packets_transmitted_total",
	"port_xmit_wait":                  "port_transmit_wait_total",
	"unicast_rcv_packets":             "unicast_packets_received_total",
	"unicast_xmit_packets":            "unicast_packets_transmitted_total",
	"port_rcv_remote_physical_errors": "port_receive_remote_physical_errors_total",
	"port_rcv_switch_relay_errors":    "port_receive_switch_relay_errors_total",
	"symbol_error":                    "symbol_error_total",
	"VL15_dropped":                    "vl15_dropped_total",
}

// nicSeries is the series a sysfs counter is served as.
func nicSeries(sysfs string) string { return "node_infiniband_" + nicCounters[sysfs] }

// nicDescs are the node_infiniband_* descriptions, by sysfs name.
var nicDescs = func() map[string]*prometheus.Desc {
	m := make(map[string]*prometheus.Desc, len(nicCounters))
	for sysfs := range nicCounters {
		m[sysfs] = prometheus.NewDesc(nicSeries(sysfs),
			"The RDMA port's counters/"+sysfs+" (node_exporter's name and units).", []string{"device", "port"}, nil)
	}
	return m
}()

// collectNIC reads the port's counters once and sends the ones
// node_exporter names. A counter file that cannot be read is left out of
// this scrape (and counted in ibscope_metrics_nic_read_errors_total).
func (l *Live) collectNIC(ch chan<- prometheus.Metric) {
	if l.cfg.PortDevice == "" {
		return
	}
	s, err := telemetry.ReadSysfs(l.cfg.SysfsRoot, l.cfg.PortDevice, l.cfg.Port)
	if err != nil {
		l.nicErrors.Add(1)
	}
	if s == nil || s.Len() == 0 {
		return
	}
	port := strconv.Itoa(l.cfg.Port)
	for col, c := range s.Counters {
		d, ok := nicDescs[c.Name]
		if !ok || !s.Valid(0, col) {
			continue
		}
		v, _ := c.ToBase(s.Value(0, col))
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), l.cfg.PortDevice, port)
	}
}

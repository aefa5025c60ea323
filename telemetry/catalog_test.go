package telemetry

import "testing"

func TestDataIDDecode(t *testing.T) {
	for _, tc := range []struct {
		id   DataID
		name string
	}{
		{0x1020000100000000, "port_0_rx_bytes"},
		{0x1140000100000001, "port_1_tx_bytes"},
		{0x1020000200000302, "port_2_priority_3_rx_bytes"},
		{0x1140000500000700, "port_0_priority_7_tx_pause_packets"},
		{0x1020000500000000, "port_0_rx_discard_buf_packets"},
		{0x1080000400000001, "port_1_rx_transport_ecn_packets"},
		{0x1080000500000000, "port_0_rx_transport_cnp_handled_packets"},
		{0x1100000100000000, "port_0_tx_transport_cnp_sent_packets"},
		{0x1100000200000000, "tx_transport_done_due_to_cc_deschedule_events"},
		{0x10c0000100000000, "global_rx_cqes"},
		{0x10c0000400000000, "global_tx_cqes"},
		{0x1160000200000000, "pcie_link_outbound_bytes"},
		{0x1160000600030201, "pcie_link_write_stall_no_posted_header_credits_ns_node1_pcie2_depth3"},
		{0x1180000300000000, "global_icmc_miss"},
		{0x1160002000000000, "pcie_link_counter_0x20"},
		{0x1160002000000004, "pcie_link_counter_0x20_idx_0x4"},
		{0x7777000100000000, "data_id_0x7777000100000000"},
	} {
		if got := tc.id.Name(); got != tc.name {
			t.Errorf("%s: name %q, want %q", tc.id, got, tc.name)
		}
	}
	id := DataID(0x1020000200000302)
	if id.Group() != GroupPortRx || id.CounterNum() != 2 || id.Port() != 2 || id.Priority() != 3 || id.Index() != 0x302 {
		t.Errorf("fields of %s", id)
	}
	if n, p, d := DataID(0x1160000600030201).PCIe(); n != 1 || p != 2 || d != 3 {
		t.Errorf("pcie %d %d %d", n, p, d)
	}
	if c, ok := LookupDataID(0x1160000d00000000); !ok || c.Kind != KindGauge || c.Unit != UnitNs {
		t.Errorf("latency max is a statistic in ns: %+v", c)
	}
	if c, ok := LookupDataID(0x1160000b00000000); !ok || c.Kind != KindCounter {
		t.Errorf("latency total is a counter: %+v", c)
	}
	for _, s := range []string{"0x1020000100000000", "1020000100000000", "0X1"} {
		if _, err := ParseDataID(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "0x", "0x12345678901234567", "0xg", "-1"} {
		if _, err := ParseDataID(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// Every catalogue entry's generated name leads back to its ID.
func TestCatalogNamesRoundTrip(t *testing.T) {
	seen := map[DataID]bool{}
	for _, c := range DiagCatalog {
		if seen[c.Type] {
			t.Errorf("duplicate catalogue type %s", c.Type)
		}
		seen[c.Type] = true
		if c.Type.Index() != 0 {
			t.Errorf("%s: type has index bits", c.Type)
		}
		for _, idx := range []DataID{0, 1, 0x301} {
			id := c.Type
			switch c.Index {
			case IndexPort:
				id |= idx & 0xFF
			case IndexPortPriority:
				id |= idx
			}
			back, ok := dataIDFromName(id.Name())
			if !ok || back != id {
				t.Errorf("%s: name %q gives back %s %v", id, id.Name(), back, ok)
			}
		}
	}
	for _, bad := range []string{"port_x_rx_bytes", "port_0", "port_0_priority_99_rx_bytes", "port_0_global_icmc_hit", "rx_bytes", "nothing"} {
		if id, ok := dataIDFromName(bad); ok {
			t.Errorf("%q recognised as %s", bad, id)
		}
	}
}

func TestPortCounterTables(t *testing.T) {
	c := PerfqueryCounter("PortXmitWait", false)
	if c.Name != PortXmitWait || c.Width != 32 || !c.Saturating || c.Unit != UnitTicks {
		t.Errorf("PortXmitWait %+v", c)
	}
	c = PerfqueryCounter("PortXmitWait", true)
	if c.Width != 64 || c.Saturating {
		t.Errorf("PortXmitWait -x %+v", c)
	}
	c = PerfqueryCounter("LocalLinkIntegrityErrors", false)
	if c.Width != 4 || c.Max() != 15 {
		t.Errorf("4-bit counter %+v", c)
	}
	c = PerfqueryCounter("PortUnicastXmitPkts", false)
	if c.Name != "unicast_xmit_packets" || c.Width != 64 {
		t.Errorf("extended-only %+v", c)
	}
	c = PerfqueryCounter("PortVLXmitWait", false)
	if c.Name != "port_vl_xmit_wait" {
		t.Errorf("unknown field name %q", c.Name)
	}
	c = SysfsCounter("counters", PortXmitData)
	if c.Width != 64 || c.Unit != UnitWords || c.Saturating {
		t.Errorf("sysfs port_xmit_data %+v", c)
	}
	c = SysfsCounter("hw_counters", OutOfSequence)
	if c.Width != 32 || c.Saturating || c.Kind != KindCounter {
		t.Errorf("out_of_sequence %+v", c)
	}
	c = SysfsCounter("hw_counters", NpCNPSent)
	if c.Width != 64 || c.Saturating || c.Kind != KindCounter {
		t.Errorf("np_cnp_sent %+v", c)
	}
	for in, want := range map[string]string{"PortXmitData": "port_xmit_data", "VL15Dropped": "vl15_dropped",
		"QP1Dropped": "qp1_dropped", "PortRcvPkts": "port_rcv_pkts", "a b": "a_b", "XMLHttp": "xml_http"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

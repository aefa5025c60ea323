package decode

// Performance management (IBA 16.1): QP1 MADs of class 0x04. The
// attribute starts at byte 64, after 40 reserved bytes.

const perfDataOff = 64

var portCountersLayout = madLayout{key: "port_counters", fields: []madField{
	fu("port_select", 1, 1, "infiniband.portcounters.portselect"),
	fu("counter_select", 2, 2, "infiniband.portcounters.counterselect"),
	fu("symbol_error_counter", 4, 2, "infiniband.portcounters.symbolerrorcounter"),
	fu("link_error_recovery_counter", 6, 1, "infiniband.portcounters.linkerrorrecoverycounter"),
	fu("link_downed_counter", 7, 1, "infiniband.portcounters.linkdownedcounter"),
	fu("port_rcv_errors", 8, 2, "infiniband.portcounters.portrcverrors"),
	fu("port_rcv_remote_physical_errors", 10, 2, "infiniband.portcounters.portrcvremotephysicalerrors"),
	fu("port_rcv_switch_relay_errors", 12, 2, "infiniband.portcounters.portrcvswitchrelayerrors"),
	fu("port_xmit_discards", 14, 2, "infiniband.portcounters.portxmitdiscards"),
	fu("port_xmit_constraint_errors", 16, 1, "infiniband.portcounters.portxmitconstrainterrors"),
	fu("port_rcv_constraint_errors", 17, 1, "infiniband.portcounters.portrcvconstrainterrors"),
	fb("local_link_integrity_errors", 19, 0, 4, "infiniband.portcounters.locallinkintegrityerrors"),
	fb("excessive_buffer_overrun_errors", 19, 4, 4, "infiniband.portcounters.excessivebufferoverrunerrors"),
	fu("vl15_dropped", 22, 2, "infiniband.portcounters.vl15dropped"),
	fu("port_xmit_data", 24, 4, "infiniband.portcounters.portxmitdata"),
	fu("port_rcv_data", 28, 4, "infiniband.portcounters.portrcvdata"),
	fu("port_xmit_pkts", 32, 4, "infiniband.portcounters.portxmitpkts"),
	fu("port_rcv_pkts", 36, 4, "infiniband.portcounters.portrcvpkts"),
	fu("port_xmit_wait", 40, 4, ""),
}}

var portCountersExtendedLayout = madLayout{key: "port_counters_extended", fields: []madField{
	fu("port_select", 1, 1, "infiniband.portcounters_ext.portselect"),
	fu("counter_select", 2, 2, "infiniband.portcounters_ext.counterselect"),
	fu("port_xmit_data", 8, 8, "infiniband.portcounters_ext.portxmitdata"),
	fu("port_rcv_data", 16, 8, "infiniband.portcounters_ext.portrcvdata"),
	fu("port_xmit_pkts", 24, 8, "infiniband.portcounters_ext.portxmitpkts"),
	fu("port_rcv_pkts", 32, 8, "infiniband.portcounters_ext.portrcvpkts"),
	fu("port_unicast_xmit_pkts", 40, 8, "infiniband.portcounters_ext.portunicastxmitpkts"),
	fu("port_unicast_rcv_pkts", 48, 8, "infiniband.portcounters_ext.portunicastrcvpkts"),
	fu("port_multicast_xmit_pkts", 56, 8, "infiniband.portcounters_ext.portmulticastxmitpkts"),
	fu("port_multicast_rcv_pkts", 64, 8, "infiniband.portcounters_ext.portmulticastrcvpkts"),
}}

var perfClass = madClass{name: "PerfMgt", dataOff: perfDataOff, attrs: []madAttr{
	{0x0012, "PortCounters", &portCountersLayout},
	{0x001D, "PortCountersExtended", &portCountersExtendedLayout},
}}

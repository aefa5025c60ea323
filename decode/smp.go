package decode

import "strconv"

// Subnet management packets (IBA 14.2.1): QP0 MADs, LID routed (class 0x01)
// or directed route (0x81), and the SMP attributes people debug with
// (14.2.5). Offsets are relative to each layout's start; the classes say
// where in the MAD each layout sits.

// smpLIDLayout is what follows the common header of a LID-routed SMP.
var smpLIDLayout = madLayout{key: "smp", fields: []madField{
	fu("m_key", 0, 8, "infiniband.smplid.mkey"),
}}

// smpDirectedLayout is a directed-route SMP's own fields: the D bit,
// status, hop pointer and hop count sit in the common header's Status and
// ClassSpecific (offset 4); M_Key, DrSLID and DrDLID after it (24); the
// initial and return paths after the SMP data (128, 192).
var smpDirectedLayout = madLayout{key: "smp", fields: []madField{
	// Wireshark 4.0's D bit masks one byte with 0x8000 (always 0): not compared.
	fb("direction", 4, 0, 1, ""),
	fb("smp_status", 4, 1, 15, ""),
	fu("hop_pointer", 6, 1, "infiniband.smpdirected.hoppointer"),
	fu("hop_count", 7, 1, "infiniband.smpdirected.hopcount"),
	fu("m_key", 24, 8, "infiniband.smplid.mkey"),
	fu("dr_slid", 32, 2, "infiniband.smpdirected.drslid"),
	fu("dr_dlid", 34, 2, "infiniband.smpdirected.drdlid"),
	fraw("initial_path", 128, 64, "infiniband.smpdirected.initialpath"),
	fraw("return_path", 192, 64, "infiniband.smpdirected.returnpath"),
}}

// smpDataOff is where an SMP's attribute (SMP data, 64 bytes) starts.
const smpDataOff = 64

var nodeInfoFields = []madField{
	fu("base_version", 0, 1, "infiniband.nodeinfo.baseversion"),
	fu("class_version", 1, 1, "infiniband.nodeinfo.classversion"),
	fu("node_type", 2, 1, "infiniband.nodeinfo.nodetype"),
	fu("num_ports", 3, 1, "infiniband.nodeinfo.numports"),
	fu("system_image_guid", 4, 8, "infiniband.nodeinfo.systemimageguid"),
	fu("node_guid", 12, 8, "infiniband.nodeinfo.nodeguid"),
	fu("port_guid", 20, 8, "infiniband.nodeinfo.portguid"),
	fu("partition_cap", 28, 2, "infiniband.nodeinfo.partitioncap"),
	fu("device_id", 30, 2, "infiniband.nodeinfo.deviceid"),
	fu("revision", 32, 4, "infiniband.nodeinfo.revision"),
	fu("local_port_num", 36, 1, "infiniband.nodeinfo.localportnum"),
	fu("vendor_id", 37, 3, "infiniband.nodeinfo.vendorid"),
}

var nodeInfoLayout = madLayout{key: "node_info", fields: nodeInfoFields}

var nodeDescriptionLayout = madLayout{key: "node_description", fields: []madField{
	fstr("node_string", 0, 64, "infiniband.nodedescription.nodestring"),
}}

var switchInfoLayout = madLayout{key: "switch_info", fields: []madField{
	fu("linear_fdb_cap", 0, 2, "infiniband.switchinfo.linearfdbcap"),
	fu("random_fdb_cap", 2, 2, "infiniband.switchinfo.randomfdbcap"),
	fu("multicast_fdb_cap", 4, 2, "infiniband.switchinfo.multicastfdbcap"),
	fu("linear_fdb_top", 6, 2, "infiniband.switchinfo.linearfdbtop"),
	fu("default_port", 8, 1, "infiniband.switchinfo.defaultport"),
	fu("default_multicast_primary_port", 9, 1, "infiniband.switchinfo.defaultmulticastprimaryport"),
	fu("default_multicast_not_primary_port", 10, 1, "infiniband.switchinfo.defaultmulticastnotprimaryport"),
	fb("life_time_value", 11, 0, 5, "infiniband.switchinfo.lifetimevalue"),
	fb("port_state_change", 11, 5, 1, "infiniband.switchinfo.portstatechange"),
	fb("optimized_sl_to_vl_mapping_programming", 11, 6, 2, "infiniband.switchinfo.optimizedsltovlmappingprogramming"),
	fu("lids_per_port", 12, 2, "infiniband.switchinfo.lidsperport"),
	fu("partition_enforcement_cap", 14, 2, "infiniband.switchinfo.partitionenforcementcap"),
	fb("inbound_enforcement_cap", 16, 0, 1, "infiniband.switchinfo.inboundenforcementcap"),
	fb("outbound_enforcement_cap", 16, 1, 1, "infiniband.switchinfo.outboundenforcementcap"),
	fb("filter_raw_inbound_cap", 16, 2, 1, "infiniband.switchinfo.filterrawinboundcap"),
	fb("filter_raw_outbound_cap", 16, 3, 1, "infiniband.switchinfo.filterrawoutboundcap"),
	fb("enhanced_port0", 16, 4, 1, "infiniband.switchinfo.enhancedportzero"),
}}

// guidInfoLayout: a block of eight GUIDs (Wireshark 4.0 shows none of them).
var guidInfoLayout = madLayout{key: "guid_info", fields: []madField{
	fu("guid_0", 0, 8, ""), fu("guid_1", 8, 8, ""), fu("guid_2", 16, 8, ""), fu("guid_3", 24, 8, ""),
	fu("guid_4", 32, 8, ""), fu("guid_5", 40, 8, ""), fu("guid_6", 48, 8, ""), fu("guid_7", 56, 8, ""),
}}

var portInfoFields = []madField{
	fu("m_key", 0, 8, "infiniband.portinfo.m_key"),
	fu("gid_prefix", 8, 8, "infiniband.portinfo.guid"),
	fu("lid", 16, 2, "infiniband.portinfo.lid"),
	fu("master_sm_lid", 18, 2, "infiniband.portinfo.mastersmlid"),
	fu("capability_mask", 20, 4, "infiniband.portinfo.capabilitymask"),
	fu("diag_code", 24, 2, "infiniband.portinfo.diagcode"),
	fu("m_key_lease_period", 26, 2, "infiniband.portinfo.m_keyleaseperiod"),
	fu("local_port_num", 28, 1, "infiniband.portinfo.localportnum"),
	fu("link_width_enabled", 29, 1, "infiniband.portinfo.linkwidthenabled"),
	fu("link_width_supported", 30, 1, "infiniband.portinfo.linkwidthsupported"),
	fu("link_width_active", 31, 1, "infiniband.portinfo.linkwidthactive"),
	fb("link_speed_supported", 32, 0, 4, "infiniband.portinfo.linkspeedsupported"),
	fb("port_state", 32, 4, 4, "infiniband.portinfo.portstate"),
	fb("port_physical_state", 33, 0, 4, "infiniband.portinfo.portphysicalstate"),
	fb("link_down_default_state", 33, 4, 4, "infiniband.portinfo.linkdowndefaultstate"),
	fb("m_key_protect_bits", 34, 0, 2, "infiniband.portinfo.m_keyprotectbits"),
	fb("lmc", 34, 5, 3, "infiniband.portinfo.lmc"),
	fb("link_speed_active", 35, 0, 4, "infiniband.portinfo.linkspeedactive"),
	fb("link_speed_enabled", 35, 4, 4, "infiniband.portinfo.linkspeedenabled"),
	fb("neighbor_mtu", 36, 0, 4, "infiniband.portinfo.neighbormtu"),
	fb("master_sm_sl", 36, 4, 4, "infiniband.portinfo.mastersmsl"),
	fb("vl_cap", 37, 0, 4, "infiniband.portinfo.vlcap"),
	fb("init_type", 37, 4, 4, "infiniband.portinfo.inittype"),
	fu("vl_high_limit", 38, 1, "infiniband.portinfo.vlhighlimit"),
	fu("vl_arbitration_high_cap", 39, 1, "infiniband.portinfo.vlarbitrationhighcap"),
	fu("vl_arbitration_low_cap", 40, 1, "infiniband.portinfo.vlarbitrationlowcap"),
	fb("init_type_reply", 41, 0, 4, "infiniband.portinfo.inittypereply"),
	fb("mtu_cap", 41, 4, 4, "infiniband.portinfo.mtucap"),
	fb("vl_stall_count", 42, 0, 3, "infiniband.portinfo.vlstallcount"),
	fb("hoq_life", 42, 3, 5, "infiniband.portinfo.hoqlife"),
	fb("operational_vls", 43, 0, 4, "infiniband.portinfo.operationalvls"),
	fb("partition_enforcement_inbound", 43, 4, 1, "infiniband.portinfo.partitionenforcementinbound"),
	fb("partition_enforcement_outbound", 43, 5, 1, "infiniband.portinfo.partitionenforcementoutbound"),
	fb("filter_raw_inbound", 43, 6, 1, "infiniband.portinfo.filterrawinbound"),
	fb("filter_raw_outbound", 43, 7, 1, "infiniband.portinfo.filterrawoutbound"),
	fu("m_key_violations", 44, 2, "infiniband.portinfo.m_keyviolations"),
	fu("p_key_violations", 46, 2, "infiniband.portinfo.p_keyviolations"),
	fu("q_key_violations", 48, 2, "infiniband.portinfo.q_keyviolations"),
	fu("guid_cap", 50, 1, "infiniband.portinfo.guidcap"),
	fb("client_reregister", 51, 0, 1, "infiniband.portinfo.clientreregister"),
	fb("subnet_timeout", 51, 3, 5, "infiniband.portinfo.subnettimeout"),
	fb("resp_time_value", 52, 3, 5, "infiniband.portinfo.resptimevalue"),
	fb("local_phy_errors", 53, 0, 4, "infiniband.portinfo.localphyerrors"),
	fb("overrun_errors", 53, 4, 4, "infiniband.portinfo.overrunerrors"),
	fu("max_credit_hint", 54, 2, "infiniband.portinfo.maxcredithint"),
	fb("link_round_trip_latency", 57, 0, 24, "infiniband.portinfo.linkroundtriplatency"),
}

var portInfoLayout = madLayout{key: "port_info", fields: portInfoFields}

// pKeyTableLayout: a block of 32 P_Keys, each a membership bit (1 = full)
// and a 15-bit base.
var pKeyTableLayout = madLayout{key: "p_key_table", fields: func() []madField {
	f := make([]madField, 32)
	for i := range f {
		f[i] = fu("p_key_"+strconv.Itoa(i), 2*i, 2, "")
	}
	return f
}()}

var smpAttrs = []madAttr{
	{0x0010, "NodeDescription", &nodeDescriptionLayout},
	{0x0011, "NodeInfo", &nodeInfoLayout},
	{0x0012, "SwitchInfo", &switchInfoLayout},
	{0x0014, "GUIDInfo", &guidInfoLayout},
	{0x0015, "PortInfo", &portInfoLayout},
	{0x0016, "P_KeyTable", &pKeyTableLayout},
}

var smpLIDClass = madClass{name: "SubnMgmt", headers: []madPart{{MADHeaderLen, &smpLIDLayout}},
	dataOff: smpDataOff, attrs: smpAttrs}

var smpDirectedClass = madClass{name: "SubnMgmtDirectedRoute", headers: []madPart{{0, &smpDirectedLayout}},
	dataOff: smpDataOff, attrs: smpAttrs}

package decode

// Subnet administration (IBA 15.2): QP1 MADs of class 0x03, each an RMPP
// header (13.6.2.1, at byte 24), the SA header (SM_Key, AttributeOffset,
// ComponentMask, at byte 36) and a record from byte 56.

var rmppLayout = madLayout{key: "rmpp", fields: []madField{
	fu("version", 0, 1, "infiniband.rmpp.rmppversion"),
	fu("type", 1, 1, "infiniband.rmpp.rmpptype"),
	fb("r_resp_time", 2, 0, 5, "infiniband.rmpp.rresptime"),
	fb("flags", 2, 5, 3, "infiniband.rmpp.rmppflags"),
	fu("status", 3, 1, "infiniband.rmpp.rmppstatus"),
	// Data1 and Data2 are a DATA segment's SegmentNumber and PayloadLength
	// (13.6.2.3), as Wireshark names them.
	fu("data1", 4, 4, "infiniband.rmpp.segmentnumber"),
	fu("data2", 8, 4, "infiniband.rmpp.payloadlength"),
}}

var saHeaderLayout = madLayout{key: "sa", fields: []madField{
	fu("sm_key", 0, 8, "infiniband.sa.smkey"),
	fu("attribute_offset", 8, 2, "infiniband.sa.attributeoffset"),
	fu("component_mask", 12, 8, "infiniband.sa.componentmask"),
}}

const (
	rmppOff   = MADHeaderLen
	saHdrOff  = rmppOff + 12
	saDataOff = saHdrOff + 20
)

var pathRecordLayout = madLayout{key: "path_record", fields: []madField{
	fu("service_id", 0, 8, ""),
	fgid("dgid", 8, "infiniband.pathrecord.dgid"),
	fgid("sgid", 24, "infiniband.pathrecord.sgid"),
	fu("dlid", 40, 2, "infiniband.pathrecord.dlid"),
	fu("slid", 42, 2, "infiniband.pathrecord.slid"),
	fb("raw_traffic", 44, 0, 1, "infiniband.pathrecord.rawtraffic"),
	fb("flow_label", 44, 4, 20, "infiniband.pathrecord.flowlabel"),
	fu("hop_limit", 47, 1, "infiniband.pathrecord.hoplimit"),
	fu("tclass", 48, 1, "infiniband.pathrecord.tclass"),
	fb("reversible", 49, 0, 1, "infiniband.pathrecord.reversible"),
	fb("numb_path", 49, 1, 7, "infiniband.pathrecord.numbpath"),
	fu("p_key", 50, 2, "infiniband.pathrecord.p_key"),
	fb("qos_class", 52, 0, 12, ""),
	fb("sl", 53, 4, 4, "infiniband.pathrecord.sl"),
	fb("mtu_selector", 54, 0, 2, "infiniband.pathrecord.mtuselector"),
	fb("mtu", 54, 2, 6, "infiniband.pathrecord.mtu"),
	fb("rate_selector", 55, 0, 2, "infiniband.pathrecord.rateselector"),
	fb("rate", 55, 2, 6, "infiniband.pathrecord.rate"),
	fb("packet_life_time_selector", 56, 0, 2, "infiniband.pathrecord.packetlifetimeselector"),
	fb("packet_life_time", 56, 2, 6, "infiniband.pathrecord.packetlifetime"),
	fu("preference", 57, 1, "infiniband.pathrecord.preference"),
}}

// nodeRecordLayout: LID, then NodeInfo (at 4) and NodeDescription (at 44).
var nodeRecordLayout = madLayout{key: "node_record", fields: append([]madField{
	fu("lid", 0, 2, "infiniband.sa.lid"),
}, append(shifted(nodeInfoFields, 4, "node_info_"),
	fstr("node_description", 44, 64, "infiniband.nodedescription.nodestring"))...)}

// portInfoRecordLayout: EndportLID, PortNum, then PortInfo (at 4).
var portInfoRecordLayout = madLayout{key: "port_info_record", fields: append([]madField{
	fu("endport_lid", 0, 2, "infiniband.sa.endportlid"),
	fu("port_num", 2, 1, "infiniband.sa.portnum"),
}, shifted(portInfoFields, 4, "")...)}

var mcMemberRecordLayout = madLayout{key: "mc_member_record", fields: []madField{
	fgid("mgid", 0, "infiniband.mcmemberrecord.mgid"),
	fgid("port_gid", 16, "infiniband.mcmemberrecord.portgid"),
	fu("q_key", 32, 4, "infiniband.mcmemberrecord.q_key"),
	fu("mlid", 36, 2, "infiniband.mcmemberrecord.mlid"),
	fb("mtu_selector", 38, 0, 2, "infiniband.mcmemberrecord.mtuselector"),
	fb("mtu", 38, 2, 6, "infiniband.mcmemberrecord.mtu"),
	fu("tclass", 39, 1, "infiniband.mcmemberrecord.tclass"),
	fu("p_key", 40, 2, "infiniband.mcmemberrecord.p_key"),
	fb("rate_selector", 42, 0, 2, "infiniband.mcmemberrecord.rateselector"),
	fb("rate", 42, 2, 6, "infiniband.mcmemberrecord.rate"),
	fb("packet_life_time_selector", 43, 0, 2, "infiniband.mcmemberrecord.packetlifetimeselector"),
	fb("packet_life_time", 43, 2, 6, "infiniband.mcmemberrecord.packetlifetime"),
	fb("sl", 44, 0, 4, "infiniband.mcmemberrecord.sl"),
	fb("flow_label", 44, 4, 20, "infiniband.mcmemberrecord.flowlabel"),
	fu("hop_limit", 47, 1, "infiniband.mcmemberrecord.hoplimit"),
	fb("scope", 48, 0, 4, "infiniband.mcmemberrecord.scope"),
	fb("join_state", 48, 4, 4, "infiniband.mcmemberrecord.joinstate"),
	fb("proxy_join", 49, 0, 1, "infiniband.mcmemberrecord.proxyjoin"),
}}

var serviceRecordLayout = madLayout{key: "service_record", fields: []madField{
	fu("service_id", 0, 8, "infiniband.linkrecord.serviceid"),
	fgid("service_gid", 8, "infiniband.linkrecord.servicegid"),
	fu("service_p_key", 24, 2, "infiniband.linkrecord.servicep_key"),
	fu("service_lease", 28, 4, "infiniband.linkrecord.servicelease"),
	fraw("service_key", 32, 16, "infiniband.linkrecord.servicekey"),
	fstr("service_name", 48, 64, ""),
	fraw("service_data8", 112, 16, "infiniband.linkrecord.servicedata"),
	fraw("service_data16", 128, 16, ""),
	fraw("service_data32", 144, 16, ""),
	fraw("service_data64", 160, 16, ""),
}}

var informInfoLayout = madLayout{key: "inform_info", fields: []madField{
	fgid("gid", 0, "infiniband.informinfo.gid"),
	fu("lid_range_begin", 16, 2, "infiniband.informinfo.lidrangebegin"),
	fu("lid_range_end", 18, 2, "infiniband.informinfo.lidrangeend"),
	fu("is_generic", 22, 1, "infiniband.informinfo.isgeneric"),
	fu("subscribe", 23, 1, "infiniband.informinfo.subscribe"),
	fu("type", 24, 2, "infiniband.informinfo.type"),
	fu("trap_number_device_id", 26, 2, "infiniband.informinfo.trapnumberdeviceid"),
	fb("qpn", 28, 0, 24, "infiniband.informinfo.qpn"),
	fb("resp_time_value", 31, 3, 5, "infiniband.informinfo.resptimevalue"),
	fb("producer_type_vendor_id", 33, 0, 24, "infiniband.informinfo.producertypevendorid"),
}}

var saClass = madClass{name: "SubnAdm",
	headers: []madPart{{rmppOff, &rmppLayout}, {saHdrOff, &saHeaderLayout}},
	dataOff: saDataOff,
	attrs: []madAttr{
		{0x0003, "InformInfo", &informInfoLayout},
		{0x0011, "NodeRecord", &nodeRecordLayout},
		{0x0012, "PortInfoRecord", &portInfoRecordLayout},
		{0x0031, "ServiceRecord", &serviceRecordLayout},
		{0x0035, "PathRecord", &pathRecordLayout},
		{0x0038, "MCMemberRecord", &mcMemberRecordLayout},
	}}

// shifted returns fields moved by off bytes, their keys prefixed.
func shifted(fields []madField, off int, prefix string) []madField {
	out := make([]madField, len(fields))
	for i, f := range fields {
		f.off += off
		f.key = prefix + f.key
		out[i] = f
	}
	return out
}

package decode

import "net/netip"

// Communication management (IBA chapter 12): QP1 MADs of class 0x07 whose
// attribute is the message; the message starts at byte 24. rdma_cm's
// connections carry, in a REQ whose service ID is 0x0000000001PPDDDD (IBA
// annex A11: port space PP, destination port DDDD), the IP addresses and
// source port in the private data's first 36 bytes.

// CM message attribute IDs (IBA table 103).
const (
	CMRequest           = 0x0010 // REQ
	CMMessageRcptAck    = 0x0011 // MRA
	CMReject            = 0x0012 // REJ
	CMReply             = 0x0013 // REP
	CMReadyToUse        = 0x0014 // RTU
	CMDisconnectRequest = 0x0015 // DREQ
	CMDisconnectReply   = 0x0016 // DREP
	CMSIDRRequest       = 0x0017 // SIDR_REQ
	CMSIDRReply         = 0x0018 // SIDR_REP
	CMLoadAltPath       = 0x0019 // LAP
	CMAltPathResponse   = 0x001A // APR
)

const cmDataOff = MADHeaderLen

// cmReqPrivateOff is where a REQ's private data starts, in the message.
const cmReqPrivateOff = 140

var cmReqLayout = madLayout{key: "cm_req", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.req"),
	fu("service_id", 8, 8, "infiniband.cm.req.serviceid"),
	fu("local_ca_guid", 16, 8, "infiniband.cm.req.localcaguid"),
	fu("local_q_key", 28, 4, "infiniband.cm.req.localqkey"),
	fb("local_qpn", 32, 0, 24, "infiniband.cm.req.localqpn"),
	fu("responder_resources", 35, 1, "infiniband.cm.req.responderres"),
	fb("local_eecn", 36, 0, 24, "infiniband.cm.req.localeecn"),
	fu("initiator_depth", 39, 1, "infiniband.cm.req.initdepth"),
	fb("remote_eecn", 40, 0, 24, "infiniband.cm.req.remoteeecn"),
	fb("remote_cm_response_timeout", 43, 0, 5, "infiniband.cm.req.remoteresptout"),
	fb("transport_service_type", 43, 5, 2, "infiniband.cm.req.transpsvctype"),
	fb("end_to_end_flow_control", 43, 7, 1, "infiniband.cm.req.e2eflowctrl"),
	fb("starting_psn", 44, 0, 24, "infiniband.cm.req.startpsn"),
	fb("local_cm_response_timeout", 47, 0, 5, "infiniband.cm.req.localresptout"),
	fb("retry_count", 47, 5, 3, "infiniband.cm.req.retrcount"),
	fu("p_key", 48, 2, "infiniband.cm.req.pkey"),
	fb("path_mtu", 50, 0, 4, "infiniband.cm.req.pppmtu"),
	fb("rdc_exists", 50, 4, 1, "infiniband.cm.req.rdcexist"),
	fb("rnr_retry_count", 50, 5, 3, "infiniband.cm.req.rnrretrcount"),
	fb("max_cm_retries", 51, 0, 4, "infiniband.cm.req.maxcmretr"),
	fb("srq", 51, 4, 1, "infiniband.cm.req.srq"),
	fb("extended_transport_type", 51, 5, 3, "infiniband.cm.req.ext_transport"),
	fu("primary_local_lid", 52, 2, "infiniband.cm.req.prim_locallid"),
	fu("primary_remote_lid", 54, 2, "infiniband.cm.req.prim_remotelid"),
	fgid("primary_local_gid", 56, "infiniband.cm.req.prim_localgid"),
	fgid("primary_remote_gid", 72, "infiniband.cm.req.prim_remotegid"),
	// Wireshark 4.0 reads the flow labels and packet rates from 3 bytes
	// (the flow label's top 12 bits, the rate from the third byte): not
	// compared with it.
	fb("primary_flow_label", 88, 0, 20, ""),
	fb("primary_packet_rate", 91, 2, 6, ""),
	fu("primary_traffic_class", 92, 1, "infiniband.cm.req.prim_tfcclass"),
	fu("primary_hop_limit", 93, 1, "infiniband.cm.req.prim_hoplim"),
	fb("primary_sl", 94, 0, 4, "infiniband.cm.req.prim_sl"),
	fb("primary_subnet_local", 94, 4, 1, "infiniband.cm.req.prim_subnetlocal"),
	fb("primary_local_ack_timeout", 95, 0, 5, "infiniband.cm.req.prim_localacktout"),
	fu("alternate_local_lid", 96, 2, "infiniband.cm.req.alt_locallid"),
	fu("alternate_remote_lid", 98, 2, "infiniband.cm.req.alt_remotelid"),
	fgid("alternate_local_gid", 100, ""),
	fgid("alternate_remote_gid", 116, ""),
	fb("alternate_flow_label", 132, 0, 20, ""),
	fb("alternate_packet_rate", 135, 2, 6, ""),
	fu("alternate_traffic_class", 136, 1, "infiniband.cm.req.alt_tfcclass"),
	fu("alternate_hop_limit", 137, 1, "infiniband.cm.req.alt_hoplim"),
	fb("alternate_sl", 138, 0, 4, "infiniband.cm.req.alt_sl"),
	fb("alternate_subnet_local", 138, 4, 1, "infiniband.cm.req.alt_subnetlocal"),
	fb("alternate_local_ack_timeout", 139, 0, 5, "infiniband.cm.req.alt_localacktout"),
}}

// ipCMLayout is rdma_cm's header at the start of a REQ's private data,
// nested in the REQ's JSON as "ip_cm" (ip_cm4 or ip_cm6 by its version).
var ipCM4Layout = madLayout{key: "ip_cm", fields: []madField{
	fb("major_version", 0, 0, 4, "infiniband.cm.req.ip_cm.majv"),
	fb("minor_version", 0, 4, 4, "infiniband.cm.req.ip_cm.minv"),
	fb("ip_version", 1, 0, 4, "infiniband.cm.req.ip_cm.ipv"),
	fu("src_port", 2, 2, "infiniband.cm.req.ip_cm.sport"),
	{key: "src_ip", off: 4, kind: kindIPv4, size: 16, ws: "infiniband.cm.req.ip_cm.sip4"},
	{key: "dst_ip", off: 20, kind: kindIPv4, size: 16, ws: "infiniband.cm.req.ip_cm.dip4"},
}}

var ipCM6Layout = madLayout{key: "ip_cm", fields: []madField{
	fb("major_version", 0, 0, 4, "infiniband.cm.req.ip_cm.majv"),
	fb("minor_version", 0, 4, 4, "infiniband.cm.req.ip_cm.minv"),
	fb("ip_version", 1, 0, 4, "infiniband.cm.req.ip_cm.ipv"),
	fu("src_port", 2, 2, "infiniband.cm.req.ip_cm.sport"),
	fgid("src_ip", 4, "infiniband.cm.req.ip_cm.sip6"),
	fgid("dst_ip", 20, "infiniband.cm.req.ip_cm.dip6"),
}}

// ipCMServiceLayout splits an IP CM service ID (at REQ byte 8).
var ipCMServiceLayout = madLayout{key: "ip_cm_service", fields: []madField{
	fu("port_space", 5, 1, "infiniband.cm.req.serviceid.protocol"),
	fu("dst_port", 6, 2, "infiniband.cm.req.serviceid.dport"),
}}

var cmMRALayout = madLayout{key: "cm_mra", fields: []madField{
	fu("local_comm_id", 0, 4, ""),
	fu("remote_comm_id", 4, 4, ""),
	fb("message_mraed", 8, 0, 2, ""),
	fb("service_timeout", 9, 0, 5, ""),
}}

var cmRejLayout = madLayout{key: "cm_rej", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.rej.localcommid"),
	fu("remote_comm_id", 4, 4, "infiniband.cm.rej.remotecommid"),
	fb("message_rejected", 8, 0, 2, "infiniband.cm.rej.msgrej"),
	fb("reject_info_length", 9, 0, 7, "infiniband.cm.rej.rejinfolen"),
	fu("reason", 10, 2, "infiniband.cm.rej.reason"),
	fraw("ari", 12, 72, "infiniband.cm.rej.ari"),
}}

var cmRepLayout = madLayout{key: "cm_rep", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.rep"),
	fu("remote_comm_id", 4, 4, "infiniband.cm.rep.remotecommid"),
	fu("local_q_key", 8, 4, "infiniband.cm.rep.localqkey"),
	fb("local_qpn", 12, 0, 24, "infiniband.cm.rep.localqpn"),
	fb("local_eecn", 16, 0, 24, "infiniband.cm.rep.localeecn"),
	fb("starting_psn", 20, 0, 24, "infiniband.cm.rep.startpsn"),
	fu("responder_resources", 24, 1, "infiniband.cm.rep.respres"),
	fu("initiator_depth", 25, 1, "infiniband.cm.rep.initdepth"),
	fb("target_ack_delay", 26, 0, 5, "infiniband.cm.rep.tgtackdelay"),
	fb("failover_accepted", 26, 5, 2, "infiniband.cm.rep.failoveracc"),
	fb("end_to_end_flow_control", 26, 7, 1, "infiniband.cm.rep.e2eflowctrl"),
	fb("rnr_retry_count", 27, 0, 3, "infiniband.cm.rep.rnrretrcount"),
	fb("srq", 27, 3, 1, "infiniband.cm.rep.srq"),
	fu("local_ca_guid", 28, 8, "infiniband.cm.rep.localcaguid"),
}}

var cmRTULayout = madLayout{key: "cm_rtu", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.rtu.localcommid"),
	fu("remote_comm_id", 4, 4, "infiniband.cm.rtu.remotecommid"),
}}

var cmDREQLayout = madLayout{key: "cm_dreq", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.dreq.localcommid"),
	fu("remote_comm_id", 4, 4, "infiniband.cm.dreq.remotecommid"),
	fb("remote_qpn", 8, 0, 24, "infiniband.cm.req.remoteqpneecn"),
}}

var cmDREPLayout = madLayout{key: "cm_drep", fields: []madField{
	fu("local_comm_id", 0, 4, "infiniband.cm.drsp.localcommid"),
	fu("remote_comm_id", 4, 4, "infiniband.cm.drsp.remotecommid"),
}}

var cmSIDRReqLayout = madLayout{key: "cm_sidr_req", fields: []madField{
	fu("request_id", 0, 4, ""),
	fu("p_key", 4, 2, ""),
	fu("service_id", 8, 8, ""),
}}

var cmSIDRRepLayout = madLayout{key: "cm_sidr_rep", fields: []madField{
	fu("request_id", 0, 4, ""),
	fu("status", 4, 1, ""),
	fu("additional_info_length", 5, 1, ""),
	fb("qpn", 8, 0, 24, ""),
	fu("service_id", 12, 8, ""),
	fu("q_key", 20, 4, ""),
}}

var cmLAPLayout = madLayout{key: "cm_lap", fields: []madField{
	fu("local_comm_id", 0, 4, ""),
	fu("remote_comm_id", 4, 4, ""),
	fb("remote_qpn", 12, 0, 24, ""),
	fb("remote_cm_response_timeout", 15, 0, 5, ""),
	fu("alternate_local_lid", 20, 2, ""),
	fu("alternate_remote_lid", 22, 2, ""),
	fgid("alternate_local_gid", 24, ""),
	fgid("alternate_remote_gid", 40, ""),
	fb("alternate_flow_label", 56, 0, 20, ""),
	fu("alternate_traffic_class", 59, 1, ""),
	fu("alternate_hop_limit", 60, 1, ""),
	fb("alternate_packet_rate", 61, 2, 6, ""),
	fb("alternate_sl", 62, 0, 4, ""),
	fb("alternate_subnet_local", 62, 4, 1, ""),
	fb("alternate_local_ack_timeout", 63, 0, 5, ""),
}}

var cmAPRLayout = madLayout{key: "cm_apr", fields: []madField{
	fu("local_comm_id", 0, 4, ""),
	fu("remote_comm_id", 4, 4, ""),
	fu("additional_info_length", 8, 1, ""),
	fu("ap_status", 9, 1, ""),
}}

var cmClass = madClass{name: "CM", dataOff: cmDataOff, attrs: []madAttr{
	{CMRequest, "ConnectRequest", &cmReqLayout},
	{CMMessageRcptAck, "MsgRcptAck", &cmMRALayout},
	{CMReject, "ConnectReject", &cmRejLayout},
	{CMReply, "ConnectReply", &cmRepLayout},
	{CMReadyToUse, "ReadyToUse", &cmRTULayout},
	{CMDisconnectRequest, "DisconnectRequest", &cmDREQLayout},
	{CMDisconnectReply, "DisconnectReply", &cmDREPLayout},
	{CMSIDRRequest, "ServiceIDResReq", &cmSIDRReqLayout},
	{CMSIDRReply, "ServiceIDResReqResp", &cmSIDRRepLayout},
	{CMLoadAltPath, "LoadAlternatePath", &cmLAPLayout},
	{CMAltPathResponse, "AlternatePathResponse", &cmAPRLayout},
}}

// IsIPCMServiceID reports an rdma_cm service ID: 0x0000000001 then the
// port space and the destination port (IBA annex A11.2).
func IsIPCMServiceID(sid uint64) bool { return sid>>24 == 1 }

// cmNested calls fn with the layouts nested in a CM message: an IP CM
// REQ's service ID parts and private-data header.
func cmNested(m *MAD, fn func(off int, l *madLayout)) {
	if m.AttributeID != CMRequest {
		return
	}
	msg := m.Data[min(cmDataOff, len(m.Data)):]
	if !IsIPCMServiceID(be64(msg, 8)) || len(msg) < 10 {
		return
	}
	fn(cmDataOff+8, &ipCMServiceLayout)
	priv := cmDataOff + cmReqPrivateOff
	if len(m.Data) > priv+1 && m.Data[priv+1]>>4 == 6 {
		fn(priv, &ipCM6Layout)
	} else {
		fn(priv, &ipCM4Layout)
	}
}

// CMMessage is what the CM analysis needs of a CM MAD: the identifiers,
// queue pairs and PSNs that set up and tear down a connection. Fields a
// message does not carry are 0.
type CMMessage struct {
	Message      uint16 // attribute ID: CMRequest, CMReply, ...
	LocalCommID  uint32
	RemoteCommID uint32
	ServiceID    uint64 // REQ, SIDR_REQ, SIDR_REP
	QPN          uint32 // REQ, REP, SIDR_REP: the sender's QP (DREQ, LAP: the remote QP)
	// StartingPSN (REQ, REP) is the PSN the *other* end starts its
	// requests at: a REQ's is the passive end's first request PSN (the
	// active QP's expected receive PSN), a REP's the active end's (Linux's
	// ib_cm sets the passive QP's send PSN from the REQ's, as captures show).
	StartingPSN   uint32
	RejectReason  uint16 // REJ
	MessageTarget uint8  // REJ: message rejected; MRA: message MRAed (0 REQ, 1 REP, 2 LAP)
	// rdma_cm's private data of an IP CM REQ: the connecting end's and the
	// listening end's address and port.
	SrcIP, DstIP     netip.Addr
	SrcPort, DstPort uint16
}

// CM returns the CM message of a communication management MAD; ok is
// false for other classes, for attributes that are not messages, and when
// the capture ends before the identifiers.
func (m *MAD) CM() (c CMMessage, ok bool) {
	if m.MgmtClass != MgmtClassCM || m.AttributeID < CMRequest || m.AttributeID > CMAltPathResponse {
		return c, false
	}
	b := m.Data[min(cmDataOff, len(m.Data)):]
	if len(b) < 8 {
		return c, false
	}
	c.Message = m.AttributeID
	c.LocalCommID, c.RemoteCommID = be32(b, 0), be32(b, 4)
	switch m.AttributeID {
	case CMRequest:
		c.RemoteCommID = 0
		c.ServiceID = be64(b, 8)
		c.QPN = be24(b, 32)
		c.StartingPSN = be24(b, 44)
		if IsIPCMServiceID(c.ServiceID) && len(b) >= cmReqPrivateOff+36 {
			p := b[cmReqPrivateOff:]
			c.DstPort = uint16(c.ServiceID)
			switch p[1] >> 4 { // rdma_cm's header: IP version 4 or 6, else not its header
			case 6:
				c.SrcIP, c.DstIP = netip.AddrFrom16([16]byte(p[4:20])), netip.AddrFrom16([16]byte(p[20:36]))
				c.SrcPort = be16(p, 2)
			case 4:
				c.SrcIP, c.DstIP = netip.AddrFrom4([4]byte(p[16:20])), netip.AddrFrom4([4]byte(p[32:36]))
				c.SrcPort = be16(p, 2)
			}
		}
	case CMReply:
		c.QPN = be24(b, 12)
		c.StartingPSN = be24(b, 20)
	case CMReject:
		c.MessageTarget = byteAt(b, 8) >> 6
		c.RejectReason = be16(b, 10)
	case CMMessageRcptAck:
		c.MessageTarget = byteAt(b, 8) >> 6
	case CMDisconnectRequest:
		c.QPN = be24(b, 8)
	case CMLoadAltPath:
		c.QPN = be24(b, 12)
	case CMSIDRRequest:
		c.LocalCommID, c.RemoteCommID = be32(b, 0), 0
		c.ServiceID = be64(b, 8)
	case CMSIDRReply:
		c.LocalCommID, c.RemoteCommID = 0, be32(b, 0)
		c.QPN = be24(b, 8)
		c.ServiceID = be64(b, 12)
	}
	return c, true
}

// CMMessageName is the short name of a CM message: "REQ", "REP", ...
func CMMessageName(id uint16) string {
	if id >= CMRequest && id <= CMAltPathResponse {
		return cmShortNames[id-CMRequest]
	}
	return "UNKNOWN"
}

var cmShortNames = [...]string{"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"}

// rejectReasons is IBA table 112 (with the codes Linux's ib_cm.h adds).
var rejectReasons = map[uint16]string{
	1: "NO_QP", 2: "NO_EEC", 3: "NO_RESOURCES", 4: "TIMEOUT", 5: "UNSUPPORTED_REQ",
	6: "INVALID_COMM_ID", 7: "INVALID_COMM_INSTANCE", 8: "INVALID_SERVICE_ID",
	9: "INVALID_TRANSPORT_TYPE", 10: "STALE_CONN", 11: "RDC_NOT_EXIST",
	12: "INVALID_GID", 13: "INVALID_LID", 14: "INVALID_SL", 15: "INVALID_TRAFFIC_CLASS",
	16: "INVALID_HOP_LIMIT", 17: "INVALID_PACKET_RATE", 18: "INVALID_ALT_GID",
	19: "INVALID_ALT_LID", 20: "INVALID_ALT_SL", 21: "INVALID_ALT_TRAFFIC_CLASS",
	22: "INVALID_ALT_HOP_LIMIT", 23: "INVALID_ALT_PACKET_RATE", 24: "PORT_CM_REDIRECT",
	25: "PORT_REDIRECT", 26: "INVALID_MTU", 27: "INSUFFICIENT_RESP_RESOURCES",
	28: "CONSUMER_DEFINED", 29: "INVALID_RNR_RETRY", 30: "DUPLICATE_LOCAL_COMM_ID",
	31: "INVALID_CLASS_VERSION", 32: "INVALID_FLOW_LABEL", 33: "INVALID_ALT_FLOW_LABEL",
	35: "VENDOR_OPTION_NOT_SUPPORTED",
}

// RejectReasonName names a REJ reason code, "RESERVED" for an unknown one.
func RejectReasonName(r uint16) string {
	if s, ok := rejectReasons[r]; ok {
		return s
	}
	return "RESERVED"
}

package correlate

import (
	"net/netip"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ibscope/ibscope/decode"
)

// madFields are the export columns of management datagrams and DC: the
// common MAD header, a CM message's identifiers (decode.CMMessage) and
// the DC header, null on rows without them. The attributes' fields stay
// in the decode JSON (a column per field of 22 layouts would be ~500
// mostly empty columns).
var madFields = []arrow.Field{
	{Name: "dc_header", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "mad_base_version", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "mad_mgmt_class", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "mad_class_version", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "mad_method", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "mad_status", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "mad_class_specific", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "mad_transaction_id", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "mad_attribute_id", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "mad_attribute_modifier", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cm_local_comm_id", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cm_remote_comm_id", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cm_qpn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cm_starting_psn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cm_service_id", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "cm_reject_reason", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "cm_src_ip", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "cm_dst_ip", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "cm_src_port", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "cm_dst_port", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
}

// madDescriptions describe madFields for the Arrow field metadata.
var madDescriptions = map[string]string{
	"dc_header":              "the 8 bytes after a DC packet's BTH (the RD opcodes, read as Mellanox DC), big-endian",
	"mad_base_version":       "MAD common header: BaseVersion",
	"mad_mgmt_class":         "MAD common header: management class (1 SMP LID routed, 0x81 directed route, 3 SA, 4 PerfMgt, 7 CM)",
	"mad_class_version":      "MAD common header: ClassVersion",
	"mad_method":             "MAD common header: Method (0x80 = response)",
	"mad_status":             "MAD common header: Status (a directed-route SMP: D bit and status)",
	"mad_class_specific":     "MAD common header: ClassSpecific (a directed-route SMP: hop pointer and hop count)",
	"mad_transaction_id":     "MAD common header: TransactionID",
	"mad_attribute_id":       "MAD common header: AttributeID (for CM, the message: 0x10 REQ .. 0x1A APR)",
	"mad_attribute_modifier": "MAD common header: AttributeModifier",
	"cm_local_comm_id":       "CM: the sender's communication ID (SIDR_REQ: the request ID)",
	"cm_remote_comm_id":      "CM: the receiver's communication ID (SIDR_REP: the request ID)",
	"cm_qpn":                 "CM: REQ, REP, SIDR_REP the sender's QP; DREQ, LAP the remote QP",
	"cm_starting_psn":        "CM: REQ, REP the starting PSN of the sender's QP",
	"cm_service_id":          "CM: REQ, SIDR_REQ, SIDR_REP service ID",
	"cm_reject_reason":       "CM: REJ reason (IBA table 112)",
	"cm_src_ip":              "CM: rdma_cm REQ private data, the connecting end's IP",
	"cm_dst_ip":              "CM: rdma_cm REQ private data, the listening end's IP",
	"cm_src_port":            "CM: rdma_cm REQ private data, the connecting end's port",
	"cm_dst_port":            "CM: rdma_cm service ID, the listening port",
}

// madCols holds madFields' values for a batch. Few rows have them: a row
// without costs a few null counts, and values are cleared at reset only
// when a row had one.
type madCols struct {
	used bool

	dcHeader []uint64
	dcV      bitmap

	u8    [4][]uint8 // base_version, mgmt_class, class_version, method
	u16   [3][]uint16
	tid   []uint64
	mod   []uint32
	madV  bitmap
	cm32  [4][]uint32 // local, remote comm ID, QPN, starting PSN
	sid   []uint64
	rej   []uint16
	ip    [2]addrCol
	port  [2][]uint16
	ipV   bitmap
	rejV  bitmap
	sidV  bitmap
	qpnV  bitmap
	psnV  bitmap
	remV  bitmap
	local bitmap
}

func (c *madCols) bitmaps() []*bitmap {
	return []*bitmap{&c.dcV, &c.madV, &c.ipV, &c.rejV, &c.sidV, &c.qpnV, &c.psnV, &c.remV, &c.local}
}

func (c *madCols) make(n int) {
	c.dcHeader, c.tid, c.mod, c.sid = make([]uint64, n), make([]uint64, n), make([]uint32, n), make([]uint64, n)
	for k := range c.u8 {
		c.u8[k] = make([]uint8, n)
	}
	for k := range c.u16 {
		c.u16[k] = make([]uint16, n)
	}
	for k := range c.cm32 {
		c.cm32[k] = make([]uint32, n)
	}
	c.rej = make([]uint16, n)
	for k := range c.ip {
		c.ip[k].idx = make([]int32, n)
		c.ip[k].index = make(map[netip.Addr]int32)
		c.port[k] = make([]uint16, n)
	}
}

func (c *madCols) reset(n int) {
	for k := range c.ip {
		c.ip[k].reset()
	}
	if !c.used {
		return
	}
	clear(c.dcHeader[:n])
	clear(c.tid[:n])
	clear(c.mod[:n])
	clear(c.sid[:n])
	clear(c.rej[:n])
	for k := range c.u8 {
		clear(c.u8[k][:n])
	}
	for k := range c.u16 {
		clear(c.u16[k][:n])
	}
	for k := range c.cm32 {
		clear(c.cm32[k][:n])
	}
	for k := range c.ip {
		clear(c.ip[k].idx[:n])
		clear(c.port[k][:n])
	}
	c.used = false
}

// nulls counts row i null in every column: a row without DC or MAD.
func (c *madCols) nulls() {
	for _, m := range c.bitmaps() {
		m.nulls++
	}
}

// add fills row i from f.
func (c *madCols) add(f *decode.Frame, i int) {
	if f.Has&(decode.HasDCHeader|decode.HasMAD) == 0 {
		c.nulls()
		return
	}
	c.used = true
	if present(f.Has&decode.HasDCHeader, &c.dcV, i) != 0 {
		c.dcHeader[i] = f.DCHeader.Bytes
	}
	m := &f.MAD
	if present(f.Has&decode.HasMAD, &c.madV, i) != 0 {
		for k, v := range [...]uint8{m.BaseVersion, m.MgmtClass, m.ClassVersion, m.Method} {
			c.u8[k][i] = v
		}
		for k, v := range [...]uint16{m.Status, m.ClassSpecific, m.AttributeID} {
			c.u16[k][i] = v
		}
		c.tid[i], c.mod[i] = m.TransactionID, m.AttributeModifier
	}
	cm, ok := decode.CMMessage{}, false
	if f.Has&decode.HasMAD != 0 {
		cm, ok = m.CM()
	}
	if present(b2u(ok && cm.Message != decode.CMSIDRReply), &c.local, i) != 0 {
		c.cm32[0][i] = cm.LocalCommID
	}
	if present(b2u(ok && cm.Message != decode.CMRequest && cm.Message != decode.CMSIDRRequest), &c.remV, i) != 0 {
		c.cm32[1][i] = cm.RemoteCommID
	}
	hasQP := ok && (cm.Message == decode.CMRequest || cm.Message == decode.CMReply || cm.Message == decode.CMSIDRReply ||
		cm.Message == decode.CMDisconnectRequest || cm.Message == decode.CMLoadAltPath)
	if present(b2u(hasQP), &c.qpnV, i) != 0 {
		c.cm32[2][i] = cm.QPN
	}
	if present(b2u(ok && (cm.Message == decode.CMRequest || cm.Message == decode.CMReply)), &c.psnV, i) != 0 {
		c.cm32[3][i] = cm.StartingPSN
	}
	if present(b2u(ok && (cm.Message == decode.CMRequest || cm.Message == decode.CMSIDRRequest || cm.Message == decode.CMSIDRReply)), &c.sidV, i) != 0 {
		c.sid[i] = cm.ServiceID
	}
	if present(b2u(ok && cm.Message == decode.CMReject), &c.rejV, i) != 0 {
		c.rej[i] = cm.RejectReason
	}
	if present(b2u(ok && cm.SrcIP.IsValid()), &c.ipV, i) != 0 {
		c.ip[0].put(i, cm.SrcIP)
		c.ip[1].put(i, cm.DstIP)
		c.port[0][i], c.port[1][i] = cm.SrcPort, cm.DstPort
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// arrays appends the columns of the first n rows, in madFields' order.
func (c *madCols) arrays(cols []arrow.Array, n int) []arrow.Array {
	u8, u16, u32, u64 := arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64
	cols = append(cols, fixed(u64, c.dcHeader, n, &c.dcV))
	for _, v := range c.u8 {
		cols = append(cols, fixed(u8, v, n, &c.madV))
	}
	cols = append(cols, fixed(u16, c.u16[0], n, &c.madV), fixed(u16, c.u16[1], n, &c.madV),
		fixed(u64, c.tid, n, &c.madV), fixed(u16, c.u16[2], n, &c.madV), fixed(u32, c.mod, n, &c.madV),
		fixed(u32, c.cm32[0], n, &c.local), fixed(u32, c.cm32[1], n, &c.remV),
		fixed(u32, c.cm32[2], n, &c.qpnV), fixed(u32, c.cm32[3], n, &c.psnV),
		fixed(u64, c.sid, n, &c.sidV), fixed(u16, c.rej, n, &c.rejV),
		c.ip[0].array(n, &c.ipV), c.ip[1].array(n, &c.ipV),
		fixed(u16, c.port[0], n, &c.ipV), fixed(u16, c.port[1], n, &c.ipV))
	return cols
}

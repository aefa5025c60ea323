package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// MADHeaderLen is the common MAD header's size; a MAD is MADLen bytes.
const (
	MADHeaderLen = 24
	MADLen       = 256
)

// Management classes (IBA table 120).
const (
	MgmtClassSubnLID      = 0x01 // subnet management, LID routed
	MgmtClassSubnAdm      = 0x03
	MgmtClassPerf         = 0x04
	MgmtClassBM           = 0x05
	MgmtClassDevMgt       = 0x06
	MgmtClassCM           = 0x07
	MgmtClassSNMP         = 0x08
	MgmtClassSubnDirect   = 0x81 // subnet management, directed route
	MethodResponseBit     = 0x80 // the R bit of Method
	madQPSubnetManagement = 0
	madQPGeneralServices  = 1
)

// MAD is the common header of a management datagram (IBA 13.4.3), the
// payload of a UD SEND on QP0 (subnet management) or QP1 (general
// services: SA, PerfMgt, CM, ...). Data is the whole MAD from its first
// byte, as far as the capture holds it: the class headers, attributes and
// CM messages after the common header are read from it through the layout
// tables (smp.go, sa.go, perfmgt.go, cm.go), never copied.
type MAD struct {
	layers.BaseLayer
	BaseVersion       uint8
	MgmtClass         uint8
	ClassVersion      uint8
	Method            uint8  // the R bit (0x80) marks a response
	Status            uint16 // for a directed-route SMP: D bit and 15 bits of status
	ClassSpecific     uint16 // for a directed-route SMP: hop pointer and hop count
	TransactionID     uint64
	AttributeID       uint16
	AttributeModifier uint32
	Data              []byte
}

// LayerType returns LayerTypeMAD.
func (m *MAD) LayerType() gopacket.LayerType { return LayerTypeMAD }

// CanDecode returns LayerTypeMAD.
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }

// NextLayerType returns the payload: what follows the common header is the
// class's, read through the layout tables.
func (m *MAD) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes the common header; Data keeps all of data.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MADHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("MAD header: %d bytes, need %d", len(data), MADHeaderLen)
	}
	m.BaseVersion, m.MgmtClass, m.ClassVersion, m.Method = data[0], data[1], data[2], data[3]
	m.Status = binary.BigEndian.Uint16(data[4:])
	m.ClassSpecific = binary.BigEndian.Uint16(data[6:])
	m.TransactionID = binary.BigEndian.Uint64(data[8:])
	m.AttributeID = binary.BigEndian.Uint16(data[16:])
	m.AttributeModifier = binary.BigEndian.Uint32(data[20:])
	m.Contents, m.Payload, m.Data = data[:MADHeaderLen], data[MADHeaderLen:], data
	return nil
}

// SerializeTo prepends the common header (bytes 18-19 reserved, zero) to
// what the buffer holds (the class's part of the MAD).
func (m *MAD) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := sb.PrependBytes(MADHeaderLen)
	if err != nil {
		return err
	}
	b[0], b[1], b[2], b[3] = m.BaseVersion, m.MgmtClass, m.ClassVersion, m.Method
	binary.BigEndian.PutUint16(b[4:], m.Status)
	binary.BigEndian.PutUint16(b[6:], m.ClassSpecific)
	binary.BigEndian.PutUint64(b[8:], m.TransactionID)
	b[16], b[17], b[18], b[19] = byte(m.AttributeID>>8), byte(m.AttributeID), 0, 0
	binary.BigEndian.PutUint32(b[20:], m.AttributeModifier)
	return nil
}

// IsResponse reports the Method's R bit.
func (m *MAD) IsResponse() bool { return m.Method&MethodResponseBit != 0 }

// isMADPacket reports whether a UD packet carries a MAD: sent to or from
// QP0 or QP1, as Wireshark 4.0 decides.
func isMADPacket(op Opcode, destQP, srcQP uint32) bool {
	return op.Family() == FamilyUD && (destQP <= madQPGeneralServices || srcQP <= madQPGeneralServices)
}

// madClass is what a management class adds to the common header: a class
// header (SMP, RMPP and SA), where its attributes start, and its attributes.
type madClass struct {
	name    string
	headers []madPart
	dataOff int // the attribute's offset in the MAD
	attrs   []madAttr
}

// madPart is a layout at an offset of the MAD.
type madPart struct {
	off    int
	layout *madLayout
}

// madAttr is one attribute (or CM message) of a class.
type madAttr struct {
	id     uint16
	name   string // the spec's name: "NodeInfo", "ConnectRequest"
	layout *madLayout
}

// classFor returns the class description of a management class, nil for
// classes whose contents are not decoded.
func classFor(c uint8) *madClass {
	switch c {
	case MgmtClassSubnLID:
		return &smpLIDClass
	case MgmtClassSubnDirect:
		return &smpDirectedClass
	case MgmtClassSubnAdm:
		return &saClass
	case MgmtClassPerf:
		return &perfClass
	case MgmtClassCM:
		return &cmClass
	}
	return nil
}

// attr returns the attribute description of id, nil when not decoded.
func (c *madClass) attr(id uint16) *madAttr {
	for i := range c.attrs {
		if c.attrs[i].id == id {
			return &c.attrs[i]
		}
	}
	return nil
}

// ClassName names a management class as IBA table 120 does.
func ClassName(c uint8) string {
	switch {
	case c == MgmtClassSubnLID:
		return "SubnMgmt"
	case c == MgmtClassSubnDirect:
		return "SubnMgmtDirectedRoute"
	case c == MgmtClassSubnAdm:
		return "SubnAdm"
	case c == MgmtClassPerf:
		return "PerfMgt"
	case c == MgmtClassBM:
		return "BM"
	case c == MgmtClassDevMgt:
		return "DevMgt"
	case c == MgmtClassCM:
		return "CM"
	case c == MgmtClassSNMP:
		return "SNMP"
	case c >= 0x09 && c <= 0x0F, c >= 0x30 && c <= 0x4F:
		return "Vendor"
	case c >= 0x10 && c <= 0x2F:
		return "Application"
	}
	return "Reserved"
}

// methodNames is IBA table 121 with the SA methods of 15.2.2; the R bit
// (0x80) marks the responses.
var methodNames = map[uint8]string{0x01: "Get", 0x02: "Set", 0x03: "Send", 0x05: "Trap",
	0x06: "Report", 0x07: "TrapRepress", 0x12: "GetTable", 0x13: "GetTraceTable",
	0x14: "GetMulti", 0x15: "Delete", 0x81: "GetResp", 0x86: "ReportResp", 0x92: "GetTableResp",
	0x94: "GetMultiResp", 0x95: "DeleteResp"}

// MethodName names a Method value: "Get", "GetResp", "Send", ...; "" for
// one the spec does not define.
func MethodName(m uint8) string { return methodNames[m] }

// AttributeName names the MAD's attribute in its class, "" when ibscope
// does not know it.
func (m *MAD) AttributeName() string {
	if c := classFor(m.MgmtClass); c != nil {
		if a := c.attr(m.AttributeID); a != nil {
			return a.name
		}
	}
	if m.AttributeID == 0x0001 {
		return "ClassPortInfo"
	}
	return ""
}

// appendJSON appends `,"mad":{...}`: the common header, the class's
// headers and the attribute's fields (under the attribute's key), as far
// as the capture holds them.
func (m *MAD) appendJSON(dst []byte) []byte {
	dst = append(dst, `,"mad":{"base_version":`...)
	dst = strconv.AppendUint(dst, uint64(m.BaseVersion), 10)
	dst = appendInt(dst, "mgmt_class", int64(m.MgmtClass))
	dst = appendStr(dst, "class_name", ClassName(m.MgmtClass))
	dst = appendInt(dst, "class_version", int64(m.ClassVersion))
	dst = appendInt(dst, "method", int64(m.Method))
	if name := MethodName(m.Method); name != "" {
		dst = appendStr(dst, "method_name", name)
	}
	dst = appendInt(dst, "status", int64(m.Status))
	dst = appendInt(dst, "class_specific", int64(m.ClassSpecific))
	dst = appendKey(dst, "transaction_id")
	dst = strconv.AppendUint(dst, m.TransactionID, 10)
	dst = appendInt(dst, "attribute_id", int64(m.AttributeID))
	if name := m.AttributeName(); name != "" {
		dst = appendStr(dst, "attribute_name", name)
	}
	dst = appendInt(dst, "attribute_modifier", int64(m.AttributeModifier))
	m.walk(func(off int, l *madLayout) { dst = appendLayout(dst, l, m.Data[min(off, len(m.Data)):]) })
	if cm, ok := m.CM(); ok && cm.Message == CMReject {
		dst = appendStr(dst, "reject_reason_name", RejectReasonName(cm.RejectReason))
	}
	return append(dst, '}')
}

// walk calls fn with each layout the MAD holds and its offset in Data:
// the class headers, then the attribute's layout and the layouts nested
// in it (rdma_cm's IP private data in a REQ whose service ID says so).
func (m *MAD) walk(fn func(off int, l *madLayout)) {
	c := classFor(m.MgmtClass)
	if c == nil {
		return
	}
	for _, h := range c.headers {
		fn(h.off, h.layout)
	}
	a := c.attr(m.AttributeID)
	if a == nil {
		return
	}
	fn(c.dataOff, a.layout)
	if m.MgmtClass == MgmtClassCM {
		cmNested(m, fn)
	}
}

// AppendSummary appends the MAD's words for a one-line summary: class,
// method, attribute and transaction ID; for a directed-route SMP its hop
// pointer and count; for a CM message its identifiers, QP, PSN, service
// ID, reject reason and rdma_cm's addresses.
func (m *MAD) AppendSummary(dst []byte) []byte {
	dst = append(dst, "  MAD "...)
	dst = append(dst, ClassName(m.MgmtClass)...)
	dst = append(dst, ' ')
	if name := MethodName(m.Method); name != "" {
		dst = append(dst, name...)
	} else {
		dst = append(dst, "method 0x"...)
		dst = strconv.AppendUint(dst, uint64(m.Method), 16)
	}
	dst = append(dst, ' ')
	if name := m.AttributeName(); name != "" {
		dst = append(dst, name...)
	} else {
		dst = append(dst, "attr 0x"...)
		dst = strconv.AppendUint(dst, uint64(m.AttributeID), 16)
	}
	dst = append(dst, " tid 0x"...)
	dst = strconv.AppendUint(dst, m.TransactionID, 16)
	if m.MgmtClass == MgmtClassSubnDirect {
		dst = append(dst, " hop "...)
		dst = strconv.AppendUint(dst, uint64(m.ClassSpecific>>8), 10)
		dst = append(dst, '/')
		dst = strconv.AppendUint(dst, uint64(m.ClassSpecific&0xFF), 10)
	}
	c, ok := m.CM()
	if !ok {
		return dst
	}
	dst = append(dst, ' ')
	dst = append(dst, CMMessageName(c.Message)...)
	dst = append(dst, " comm 0x"...)
	dst = strconv.AppendUint(dst, uint64(c.LocalCommID), 16)
	if c.RemoteCommID != 0 {
		dst = append(dst, "/0x"...)
		dst = strconv.AppendUint(dst, uint64(c.RemoteCommID), 16)
	}
	if c.QPN != 0 {
		dst = append(dst, " qpn 0x"...)
		dst = strconv.AppendUint(dst, uint64(c.QPN), 16)
	}
	if c.Message == CMRequest || c.Message == CMReply {
		dst = append(dst, " psn "...)
		dst = strconv.AppendUint(dst, uint64(c.StartingPSN), 10)
	}
	if c.ServiceID != 0 {
		dst = append(dst, " sid 0x"...)
		dst = strconv.AppendUint(dst, c.ServiceID, 16)
	}
	if c.Message == CMReject {
		dst = append(dst, " reason "...)
		dst = strconv.AppendUint(dst, uint64(c.RejectReason), 10)
		dst = append(dst, ' ')
		dst = append(dst, RejectReasonName(c.RejectReason)...)
	}
	if c.SrcIP.IsValid() {
		dst = append(dst, ' ')
		dst = netip.AddrPortFrom(c.SrcIP, c.SrcPort).AppendTo(dst)
		dst = append(dst, " -> "...)
		dst = netip.AddrPortFrom(c.DstIP, c.DstPort).AppendTo(dst)
	}
	return dst
}

// madFields: "mad", a management datagram's common header and attribute
// (appendJSON), and its words after the BTH's in the summary line.
var madFields = headerFields{
	order:   170,
	has:     HasMAD,
	json:    func(dst []byte, f *Frame) []byte { return f.MAD.appendJSON(dst) },
	role:    summaryTransport,
	summary: func(dst []byte, f *Frame) []byte { return f.MAD.AppendSummary(dst) },
}

func init() { registerFields(&madFields) }

// dcMADColumns are the per-frame table's columns of DC and management
// datagrams (their JSON is dcFields' and madFields'): the DC header, the
// common MAD header and a CM message's identifiers (CMMessage), each null
// on rows without it. The attributes' fields stay in the decode JSON (a
// column per field of 22 layouts would be ~500 mostly empty columns).
var dcMADColumns = headerFields{
	order: 240,
	columns: []ColumnGroup{
		{any: HasDCHeader, Columns: []Column{
			{"dc_header", ColumnUint64, "the 8 bytes after a DC packet's BTH (the RD opcodes, read as Mellanox DC), big-endian"},
		}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = f.DCHeader.Bytes }},
		{any: HasMAD, Columns: []Column{
			{"mad_base_version", ColumnUint8, "MAD common header: BaseVersion"},
			{"mad_mgmt_class", ColumnUint8, "MAD common header: management class (1 SMP LID routed, 0x81 directed route, 3 SA, 4 PerfMgt, 7 CM)"},
			{"mad_class_version", ColumnUint8, "MAD common header: ClassVersion"},
			{"mad_method", ColumnUint8, "MAD common header: Method (0x80 = response)"},
			{"mad_status", ColumnUint16, "MAD common header: Status (a directed-route SMP: D bit and status)"},
			{"mad_class_specific", ColumnUint16, "MAD common header: ClassSpecific (a directed-route SMP: hop pointer and hop count)"},
			{"mad_transaction_id", ColumnUint64, "MAD common header: TransactionID"},
			{"mad_attribute_id", ColumnUint16, "MAD common header: AttributeID (for CM, the message: 0x10 REQ .. 0x1A APR)"},
			{"mad_attribute_modifier", ColumnUint32, "MAD common header: AttributeModifier"},
		}, values: func(f *Frame, v *ColumnValues) {
			m := &f.MAD
			v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(m.BaseVersion), uint64(m.MgmtClass), uint64(m.ClassVersion), uint64(m.Method)
			v.Num[4], v.Num[5], v.Num[6] = uint64(m.Status), uint64(m.ClassSpecific), m.TransactionID
			v.Num[7], v.Num[8] = uint64(m.AttributeID), uint64(m.AttributeModifier)
		}},
		cmColumn("cm_local_comm_id", ColumnUint32, "CM: the sender's communication ID (SIDR_REQ: the request ID)",
			func(c *CMMessage) bool { return c.Message != CMSIDRReply }, func(c *CMMessage) uint64 { return uint64(c.LocalCommID) }),
		cmColumn("cm_remote_comm_id", ColumnUint32, "CM: the receiver's communication ID (SIDR_REP: the request ID)",
			func(c *CMMessage) bool { return c.Message != CMRequest && c.Message != CMSIDRRequest },
			func(c *CMMessage) uint64 { return uint64(c.RemoteCommID) }),
		cmColumn("cm_qpn", ColumnUint32, "CM: REQ, REP, SIDR_REP the sender's QP; DREQ, LAP the remote QP",
			func(c *CMMessage) bool {
				switch c.Message {
				case CMRequest, CMReply, CMSIDRReply, CMDisconnectRequest, CMLoadAltPath:
					return true
				}
				return false
			}, func(c *CMMessage) uint64 { return uint64(c.QPN) }),
		cmColumn("cm_starting_psn", ColumnUint32, "CM: REQ the PSN the passive end starts its requests at, REP the active end's (each what its sender expects to receive)",
			func(c *CMMessage) bool { return c.Message == CMRequest || c.Message == CMReply },
			func(c *CMMessage) uint64 { return uint64(c.StartingPSN) }),
		cmColumn("cm_service_id", ColumnUint64, "CM: REQ, SIDR_REQ, SIDR_REP service ID",
			func(c *CMMessage) bool {
				return c.Message == CMRequest || c.Message == CMSIDRRequest || c.Message == CMSIDRReply
			}, func(c *CMMessage) uint64 { return c.ServiceID }),
		cmColumn("cm_reject_reason", ColumnUint16, "CM: REJ reason (IBA table 112)",
			func(c *CMMessage) bool { return c.Message == CMReject }, func(c *CMMessage) uint64 { return uint64(c.RejectReason) }),
		{any: HasMAD, present: func(f *Frame) bool {
			c, ok := f.MAD.CM()
			return ok && c.SrcIP.IsValid()
		}, Columns: []Column{
			{"cm_src_ip", ColumnAddr, "CM: rdma_cm REQ private data, the connecting end's IP"},
			{"cm_dst_ip", ColumnAddr, "CM: rdma_cm REQ private data, the listening end's IP"},
			{"cm_src_port", ColumnUint16, "CM: rdma_cm REQ private data, the connecting end's port"},
			{"cm_dst_port", ColumnUint16, "CM: rdma_cm service ID, the listening port"},
		}, values: func(f *Frame, v *ColumnValues) {
			c, _ := f.MAD.CM()
			v.Addr[0], v.Addr[1], v.Num[2], v.Num[3] = c.SrcIP, c.DstIP, uint64(c.SrcPort), uint64(c.DstPort)
		}},
	},
}

func init() { registerFields(&dcMADColumns) }

// cmColumn is a column of one CM message field, present on the messages
// that have it.
func cmColumn(name string, t ColumnType, doc string, has func(*CMMessage) bool, value func(*CMMessage) uint64) ColumnGroup {
	return ColumnGroup{any: HasMAD, Columns: []Column{{name, t, doc}},
		present: func(f *Frame) bool {
			c, ok := f.MAD.CM()
			return ok && has(&c)
		},
		values: func(f *Frame, v *ColumnValues) {
			c, _ := f.MAD.CM()
			v.Num[0] = value(&c)
		}}
}

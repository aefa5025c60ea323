package decode

import "strconv"

// ethFields: the Ethernet header's addresses and its VLAN tags, outermost
// first (each tag of a QinQ stack), for frames with one.
var ethFields = headerFields{
	order: 10,
	has:   HasEthernet,
	json: func(dst []byte, f *Frame) []byte {
		dst = appendMAC(dst, "eth_src", f.SrcMAC)
		dst = appendMAC(dst, "eth_dst", f.DstMAC)
		if f.NumVLANs == 0 {
			return dst
		}
		dst = append(appendKey(dst, "vlans"), '[')
		for i, t := range f.VLANs[:f.NumVLANs] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"tpid":`...)
			dst = strconv.AppendUint(dst, uint64(t.TPID), 10)
			dst = appendInt(dst, "pcp", int64(t.PCP))
			dst = appendBool(dst, "dei", t.DEI)
			dst = appendInt(dst, "id", int64(t.ID))
			dst = append(dst, '}')
		}
		return append(dst, ']')
	},
	columns: []ColumnGroup{
		{all: HasEthernet, Columns: []Column{
			{"eth_src", ColumnMAC, "Ethernet source address"},
			{"eth_dst", ColumnMAC, "Ethernet destination address"},
		}, values: func(f *Frame, v *ColumnValues) {
			v.Num[0], v.Num[1] = macUint(f.SrcMAC), macUint(f.DstMAC)
		}},
		vlanColumns(0, "vlan", "the outer (first) VLAN tag's"),
		vlanColumns(1, "vlan2", "the second VLAN tag's (QinQ: the customer tag)"),
	},
}

func init() { registerFields(&ethFields) }

// vlanColumns are the columns of VLAN tag i (0 outermost), named prefix_.
func vlanColumns(i int, prefix, whose string) ColumnGroup {
	return ColumnGroup{all: HasEthernet, present: func(f *Frame) bool { return int(f.NumVLANs) > i }, Columns: []Column{
		{prefix + "_tpid", ColumnUint16, whose + " TPID: 0x8100 (802.1Q) or 0x88A8 (802.1ad)"},
		{prefix + "_pcp", ColumnUint8, whose + " priority code point"},
		{prefix + "_dei", ColumnBool, whose + " drop eligible indicator"},
		{prefix + "_id", ColumnUint16, whose + " VLAN identifier"},
	}, values: func(f *Frame, v *ColumnValues) {
		t := f.VLANs[i]
		v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(t.TPID), uint64(t.PCP), b2u(t.DEI), uint64(t.ID)
	}}
}

// macUint is a MAC address as the 48-bit number a ColumnMAC carries.
func macUint(m [6]byte) uint64 {
	return uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
}

// AppendMAC appends a ColumnMAC's value (48 bits) as text, as tshark
// writes eth.src: "02:00:00:00:00:09".
func AppendMAC(dst []byte, mac uint64) []byte {
	const hex = "0123456789abcdef"
	for i := 5; i >= 0; i-- {
		b := byte(mac >> (8 * i))
		dst = append(dst, hex[b>>4], hex[b&15])
		if i > 0 {
			dst = append(dst, ':')
		}
	}
	return dst
}

func appendMAC(dst []byte, key string, m [6]byte) []byte {
	dst = append(appendKey(dst, key), '"')
	dst = AppendMAC(dst, macUint(m))
	return append(dst, '"')
}

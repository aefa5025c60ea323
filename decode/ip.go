package decode

// ipFields: a RoCEv2 packet's IP addresses and ECN bits (Frame.Src, Dst,
// ECN), from its IPv4 or IPv6 header.
var ipFields = headerFields{
	order: 30,
	has:   HasIPv4 | HasIPv6,
	json: func(dst []byte, f *Frame) []byte {
		dst = appendAddr(dst, "src", f.Src)
		dst = appendAddr(dst, "dst", f.Dst)
		dst = appendInt(dst, "ecn", int64(f.ECN))
		dst = appendInt(dst, "dscp", int64(f.DSCP))
		dst = appendInt(dst, "ttl", int64(f.TTL))
		if f.Has&HasIPv6 != 0 {
			dst = appendInt(dst, "flow_label", int64(f.FlowLabel))
		}
		return appendInt(dst, "udp_src_port", int64(f.UDPSrc))
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		dst = append(f.Src.AppendTo(dst), " -> "...)
		dst = f.Dst.AppendTo(dst)
		if f.ECN == 3 {
			dst = append(dst, " CE"...)
		}
		return dst
	},
	columns: []ColumnGroup{{any: HasIPv4 | HasIPv6, Columns: []Column{
		{"src", ColumnAddr, "IP source address (RoCEv2)"},
		{"dst", ColumnAddr, "IP destination address (RoCEv2)"},
		{"ecn", ColumnUint8, "IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE"},
		{"dscp", ColumnUint8, "IP DSCP: the traffic class's upper 6 bits"},
		{"ttl", ColumnUint8, "IPv4 TTL or IPv6 hop limit"},
		{"udp_src_port", ColumnUint16, "UDP source port: the flow entropy ECMP hashes on"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Addr[0], v.Addr[1], v.Num[2] = f.Src, f.Dst, uint64(f.ECN)
		v.Num[3], v.Num[4], v.Num[5] = uint64(f.DSCP), uint64(f.TTL), uint64(f.UDPSrc)
	}}, {all: HasIPv6, Columns: []Column{
		{"flow_label", ColumnUint32, "IPv6 flow label"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.FlowLabel) }}},
}

func init() { registerFields(&ipFields) }

package decode

import "fmt"

// ipFields: a RoCEv2 packet's IP addresses and ECN bits (Frame.Src, Dst,
// ECN), from its IPv4 or IPv6 header.
var ipFields = headerFields{
	has: HasIPv4 | HasIPv6,
	json: func(dst []byte, f *Frame) []byte {
		dst = appendAddr(dst, "src", f.Src)
		dst = appendAddr(dst, "dst", f.Dst)
		return appendInt(dst, "ecn", int64(f.ECN))
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		dst = fmt.Appendf(dst, "%s -> %s", f.Src, f.Dst)
		if f.ECN == 3 {
			dst = append(dst, " CE"...)
		}
		return dst
	},
	columns: []ColumnGroup{{any: HasIPv4 | HasIPv6, Columns: []Column{
		{"src", ColumnAddr, "IP source address (RoCEv2)"},
		{"dst", ColumnAddr, "IP destination address (RoCEv2)"},
		{"ecn", ColumnUint8, "IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Addr[0], v.Addr[1], v.Num[2] = f.Src, f.Dst, uint64(f.ECN)
	}}},
}

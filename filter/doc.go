// Package filter owns the selection language every ibanalyze command that
// reads packets takes (--select, -Y): an expression over a decoded frame's
// fields, by the names decode's JSON and export's columns use, compiled
// once into a tree of closures and applied to each frame before any
// analysis sees it; and a Selection, which adds a time range (--from,
// --to: absolute, or relative to the first packet) and a count (-c).
//
// Grammar (lowest precedence first; keywords and field names any case):
//
//	expr       = and { ("||" | "or") and }
//	and        = unary { ("&&" | "and") unary }
//	unary      = ("!" | "not") unary | "(" expr ")" | test
//	test       = FIELD [ op VALUE | "in" "{" VALUE { "," VALUE } "}" ]
//	op         = "==" | "!=" | "<" | "<=" | ">" | ">="
//	VALUE      = number (decimal or 0x hex) | "string" | word
//	             (an IP address, an address/prefix, a MAC, an opcode name,
//	             a transport, true, false)
//
// A FIELD alone is true when the frame has it (and, for a boolean, when it
// is true): `reth`, `fecn`. A test of a field the frame does not have is
// false, != included, as in tshark. Fields: frame, ts_ns, len, cap_len,
// transport, and every column of ibanalyze export (decode.ColumnGroups:
// slid, dlid, sl, vl, eth_src, eth_dst, vlan_id, vlan_pcp, src, dst, ecn,
// dscp, ttl, udp_src_port, sgid, dgid, opcode, opcode_name, dest_qp, psn,
// reth_va, aeth_syndrome, ...), and each header's name (lrh, grh, ipv4,
// ipv6, bth, reth, aeth, deth, atomic_eth, cnp, link, pfc, pause, ifa, mad,
// eth) for whether the frame has it; a JSON path's dot may stand for the
// underscore (reth.va). Short names: qp (dest_qp), pcp (vlan_pcp), vlan
// (vlan_id). An address field compared with a prefix (10.0.0.0/24) is
// equal when the prefix holds it; opcode and opcode_name take a name or a
// number.
//
// It depends on decode only.
package filter

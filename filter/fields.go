package filter

import (
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/ibscope/ibscope/decode"
)

// kind is what a field holds, which decides the values it compares with.
type kind uint8

const (
	kindNum       kind = iota // unsigned numbers
	kindBool                  // true, false
	kindAddr                  // IP addresses and GIDs
	kindMAC                   // MAC addresses (48 bits)
	kindOpcode                // a BTH opcode: a number or a name
	kindTransport             // ib, rocev1, rocev2, link
)

// field is one name of the language: whether a frame has it, and its value.
type field struct {
	name string
	kind kind
	// get returns the frame's value (numbers, booleans as 0/1, opcodes,
	// MACs, transports as decode.Transport) or address, and whether the
	// frame has the field.
	get func(f *decode.Frame) (n uint64, a netip.Addr, ok bool)
	// g and i: a column of the per-frame table, read through a getter of
	// its own for each compiled test (getter), when get is nil.
	g *decode.ColumnGroup
	i int
	// head: the frame's head holds it (Filter.HeadOnly); headFields, when
	// not 0: the head with those decode.HeadFields does (Filter.Head).
	head       bool
	headFields decode.HeadFields
	// has, when not 0, is the header the field names: alone, the field
	// tests whether the frame has it.
	has decode.Has
}

// getter is the field's getter for one compiled test.
func (fl *field) getter() func(f *decode.Frame) (uint64, netip.Addr, bool) {
	if fl.get != nil {
		return fl.get
	}
	return columnGetter(fl.g, fl.i)
}

// numGetter is the field's getter of numbers for one compiled test.
func (fl *field) numGetter() func(f *decode.Frame) (uint64, bool) {
	get := fl.getter()
	return func(f *decode.Frame) (uint64, bool) { n, _, ok := get(f); return n, ok }
}

// inRange builds the test that the field is present and its value n is in
// the range from lo (n-lo <= span, wrapping: every comparison is one such
// range, compare). For the fields tested most it reads the frame itself:
// a getter called from the test was half a comparison's instructions.
func (fl *field) inRange(lo, span uint64) func(f *decode.Frame) bool {
	if rt := rangeTests[fl.name]; rt != nil {
		return rt(lo, span)
	}
	num := fl.numGetter()
	return func(f *decode.Frame) bool { n, ok := num(f); return ok && n-lo <= span }
}

// rangeTests are inRange's tests that read the frame themselves.
var rangeTests = map[string]func(lo, span uint64) func(f *decode.Frame) bool{
	"frame": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return uint64(f.Number)-lo <= span }
	},
	"len": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return uint64(f.WireLen)-lo <= span }
	},
	"cap_len": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return uint64(f.CapLen)-lo <= span }
	},
	"ts_ns": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return !f.NoTs && uint64(f.TsNs)-lo <= span }
	},
	"dest_qp": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return f.Has&decode.HasBTH != 0 && uint64(f.BTH.DestQP)-lo <= span }
	},
	"psn": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool { return f.Has&decode.HasBTH != 0 && uint64(f.BTH.PSN)-lo <= span }
	},
	"opcode":      opcodeInRange,
	"opcode_name": opcodeInRange,
	"dscp": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool {
			return f.Has&(decode.HasIPv4|decode.HasIPv6) != 0 && uint64(f.DSCP)-lo <= span
		}
	},
	"udp_src_port": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool {
			return f.Has&(decode.HasIPv4|decode.HasIPv6) != 0 && uint64(f.UDPSrc)-lo <= span
		}
	},
	"vlan_pcp": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool {
			return f.Has&decode.HasEthernet != 0 && f.NumVLANs > 0 && uint64(f.VLANs[0].PCP)-lo <= span
		}
	},
	"vlan_id": func(lo, span uint64) func(f *decode.Frame) bool {
		return func(f *decode.Frame) bool {
			return f.Has&decode.HasEthernet != 0 && f.NumVLANs > 0 && uint64(f.VLANs[0].ID)-lo <= span
		}
	},
}

func opcodeInRange(lo, span uint64) func(f *decode.Frame) bool {
	return func(f *decode.Frame) bool { return f.Has&decode.HasBTH != 0 && uint64(f.BTH.OpCode)-lo <= span }
}

// fields are the language's names: the frame's own, then every column of
// the per-frame table (decode.ColumnGroups), then the short names. Built
// on first use rather than as the package initializes, as most runs have no
// filter.
var fields = sync.OnceValue(func() map[string]*field {
	m := map[string]*field{
		"frame": {name: "frame", head: true, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
			return uint64(f.Number), netip.Addr{}, true
		}},
		"ts_ns": {name: "ts_ns", head: true, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
			return uint64(f.TsNs), netip.Addr{}, !f.NoTs
		}},
		"len": {name: "len", head: true, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
			return uint64(f.WireLen), netip.Addr{}, true
		}},
		"cap_len": {name: "cap_len", head: true, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
			return uint64(f.CapLen), netip.Addr{}, true
		}},
		"transport": {name: "transport", head: true, kind: kindTransport, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
			return uint64(f.Transport), netip.Addr{}, f.Transport != decode.TransportNone
		}},
	}
	for _, g := range decode.ColumnGroups() {
		for i, c := range g.Columns {
			if m[c.Name] != nil {
				continue
			}
			fl := &field{name: c.Name}
			switch c.Type {
			case decode.ColumnBool:
				fl.kind = kindBool
			case decode.ColumnAddr:
				fl.kind = kindAddr
			case decode.ColumnMAC:
				fl.kind = kindMAC
			case decode.ColumnOpcodeName:
				fl.kind = kindOpcode
			}
			fl.g, fl.i, fl.get = g, i, direct[c.Name]
			m[c.Name] = fl
		}
	}
	if op := m["opcode"]; op != nil {
		op.kind = kindOpcode // a name or a number, as opcode_name
	}
	if name := m["opcode_name"]; name != nil {
		name.get = direct["opcode"]
	}
	// A header's name alone asks whether the frame has it.
	for name, has := range map[string]decode.Has{"lrh": decode.HasLRH, "grh": decode.HasGRH, "ipv4": decode.HasIPv4,
		"ipv6": decode.HasIPv6, "udp": decode.HasUDP, "bth": decode.HasBTH, "rdeth": decode.HasRDETH, "deth": decode.HasDETH,
		"xrceth": decode.HasXRCETH, "reth": decode.HasRETH, "atomic_eth": decode.HasAtomicETH, "aeth": decode.HasAETH,
		"atomic_ack_eth": decode.HasAtomicAckETH, "immdt": decode.HasImmDt, "cnp": decode.HasCNP, "link": decode.HasLink,
		"pfc": decode.HasPFC, "pause": decode.HasPause, "ifa": decode.HasIFA, "ifa1": decode.HasIFA1, "mad": decode.HasMAD,
		"eth": decode.HasEthernet} {
		if m[name] == nil {
			m[name] = &field{name: name, kind: kindBool, head: true, has: has, get: func(f *decode.Frame) (uint64, netip.Addr, bool) {
				return 1, netip.Addr{}, f.Has&has != 0
			}}
		}
	}
	// The CRC verdicts are in the head; the Ethernet, IP, UDP and BTH fields
	// in the head with HeadFields (decode's headFields). The VLAN tags'
	// fields are too: that head has none, and any other frame is decoded
	// whole.
	for _, name := range []string{"icrc_ok", "vcrc_ok"} {
		if fl := m[name]; fl != nil {
			fl.head = true
		}
	}
	for part, names := range map[decode.HeadFields][]string{
		decode.HeadEthernet: {"eth_src", "eth_dst", "vlan_tpid", "vlan_pcp", "vlan_dei", "vlan_id",
			"vlan2_tpid", "vlan2_pcp", "vlan2_dei", "vlan2_id"},
		decode.HeadSrc:    {"src"},
		decode.HeadDst:    {"dst"},
		decode.HeadIP:     {"ecn", "dscp", "ttl", "udp_src_port"},
		decode.HeadOpcode: {"opcode", "opcode_name"},
		decode.HeadQP:     {"dest_qp"},
		decode.HeadPSN:    {"psn"},
		decode.HeadBTH:    {"ack_req", "fecn", "becn", "solicited", "pkey", "pad"},
	} {
		for _, name := range names {
			if fl := m[name]; fl != nil {
				fl.headFields = part
			}
		}
	}
	for short, long := range map[string]string{"qp": "dest_qp", "pcp": "vlan_pcp", "vlan": "vlan_id"} {
		if m[long] != nil {
			m[short] = m[long]
		}
	}
	return m
})

// columnGetter reads column i of group g. A frame without the group has
// no such field.
// The values are filled into one buffer the getter keeps (so a compiled
// Filter is for one goroutine at a time): a ColumnValues on the stack escapes
// through the group's function value and costs an allocation a test.
func columnGetter(g *decode.ColumnGroup, i int) func(f *decode.Frame) (uint64, netip.Addr, bool) {
	v := new(decode.ColumnValues)
	return func(f *decode.Frame) (uint64, netip.Addr, bool) {
		if !g.Present(f) {
			return 0, netip.Addr{}, false
		}
		g.Values(f, v)
		return v.Num[i], v.Addr[i], true
	}
}

// direct are getters for the fields tested most, reading the frame
// without filling a group's values (BenchmarkMatch: ~5 ns a test where
// the group's values cost ~100).
var direct = map[string]func(f *decode.Frame) (uint64, netip.Addr, bool){
	"dest_qp": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.BTH.DestQP), netip.Addr{}, f.Has&decode.HasBTH != 0
	},
	"psn": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.BTH.PSN), netip.Addr{}, f.Has&decode.HasBTH != 0
	},
	"opcode": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.BTH.OpCode), netip.Addr{}, f.Has&decode.HasBTH != 0
	},
	"src": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return 0, f.Src, f.Has&(decode.HasIPv4|decode.HasIPv6) != 0
	},
	"dst": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return 0, f.Dst, f.Has&(decode.HasIPv4|decode.HasIPv6) != 0
	},
	"dscp": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.DSCP), netip.Addr{}, f.Has&(decode.HasIPv4|decode.HasIPv6) != 0
	},
	"ecn": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.ECN), netip.Addr{}, f.Has&(decode.HasIPv4|decode.HasIPv6) != 0
	},
	"udp_src_port": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.UDPSrc), netip.Addr{}, f.Has&(decode.HasIPv4|decode.HasIPv6) != 0
	},
	"vlan_pcp": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.VLANs[0].PCP), netip.Addr{}, f.Has&decode.HasEthernet != 0 && f.NumVLANs > 0
	},
	"vlan_id": func(f *decode.Frame) (uint64, netip.Addr, bool) {
		return uint64(f.VLANs[0].ID), netip.Addr{}, f.Has&decode.HasEthernet != 0 && f.NumVLANs > 0
	},
}

// lookupField finds a field by name, any case, a dot standing for an
// underscore (reth.va is reth_va).
func lookupField(name string) *field {
	return fields()[strings.ReplaceAll(strings.ToLower(name), ".", "_")]
}

// FieldNames lists every field name, sorted, for help and messages.
func FieldNames() []string {
	all := fields()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

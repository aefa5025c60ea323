package filter

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/decode"
)

// Filter is a compiled expression: Match is a tree of closures, built once.
// It is for one goroutine at a time (a test may keep a buffer).
type Filter struct {
	expr  string
	match func(f *decode.Frame) bool
	// head: every field it tests is in a frame's head with headFields
	// (Head).
	head       bool
	headFields decode.HeadFields
}

// String is the expression as given.
func (x *Filter) String() string { return x.expr }

// Match reports whether frame f is selected.
func (x *Filter) Match(f *decode.Frame) bool { return x.match(f) }

// HeadOnly reports whether the filter tests only what a frame's head holds
// (decode.Decoder.DecodeHead: the record's number, time and lengths, the
// transport, which headers the frame has), so that a reader that decodes
// heads only may apply it: decode --summary.
func (x *Filter) HeadOnly() bool { return x.head && x.headFields == 0 }

// Head reports whether the filter tests only what a frame's head holds
// with the header fields returned (decode.Decoder.HeadFields: the
// Ethernet, IP, UDP and BTH fields of qp, psn, opcode, src, pcp), so that
// a reader that decodes heads only, with those, may apply it.
func (x *Filter) Head() (decode.HeadFields, bool) { return x.headFields, x.head }

// maxDepth bounds nesting (parentheses, !), so that a hostile expression
// cannot exhaust the stack.
const maxDepth = 256

// maxSetValues bounds an "in {...}" set.
const maxSetValues = 4096

type parser struct {
	expr  string
	toks  []token
	pos   int
	depth int
	// body: a field beyond any head is tested; fields: the header
	// fields the head needs for the others.
	body   bool
	fields decode.HeadFields
}

// Compile compiles expr; its errors are *SyntaxError, naming the column of
// the token at fault.
func Compile(expr string) (*Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks}
	if p.peek().kind == tokEOF {
		return nil, p.errAt(p.peek(), "empty expression: want a test such as qp == 0x11")
	}
	m, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errAt(t, fmt.Sprintf("unexpected %q: want && or || between tests", t.text))
	}
	return &Filter{expr: expr, match: m, head: !p.body, headFields: p.fields}, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func (p *parser) errAt(t token, msg string) error {
	return &SyntaxError{Expr: p.expr, Col: t.col, Msg: msg}
}

func isKeyword(t token, words ...string) bool {
	if t.kind != tokWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

func (p *parser) or() (func(*decode.Frame) bool, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == tokOr || isKeyword(t, "or"); t = p.peek() {
		p.next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		a := l
		l = func(f *decode.Frame) bool { return a(f) || r(f) }
	}
	return l, nil
}

func (p *parser) and() (func(*decode.Frame) bool, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t.kind == tokAnd || isKeyword(t, "and"); t = p.peek() {
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		a := l
		l = func(f *decode.Frame) bool { return a(f) && r(f) }
	}
	return l, nil
}

func (p *parser) unary() (func(*decode.Frame) bool, error) {
	t := p.peek()
	if p.depth++; p.depth > maxDepth {
		return nil, p.errAt(t, fmt.Sprintf("nested more than %d deep", maxDepth))
	}
	defer func() { p.depth-- }()
	switch {
	case t.kind == tokNot || isKeyword(t, "not"):
		p.next()
		m, err := p.unary()
		if err != nil {
			return nil, err
		}
		return func(f *decode.Frame) bool { return !m(f) }, nil
	case t.kind == tokLParen:
		p.next()
		m, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tokRParen {
			return nil, p.errAt(c, "a ')' is missing")
		}
		return m, nil
	}
	return p.test()
}

// test is FIELD, FIELD op VALUE or FIELD in {VALUE, ...}.
func (p *parser) test() (func(*decode.Frame) bool, error) {
	t := p.next()
	if t.kind != tokWord {
		if t.kind == tokEOF {
			return nil, p.errAt(t, "the expression ends where a test should follow")
		}
		return nil, p.errAt(t, fmt.Sprintf("%q where a field name should be", t.text))
	}
	fl := lookupField(t.text)
	if fl == nil {
		return nil, p.errAt(t, fmt.Sprintf("unknown field %q (fields: %s)", t.text, strings.Join(FieldNames(), ", ")))
	}
	p.fields |= fl.headFields
	if !fl.head && fl.headFields == 0 {
		p.body = true
	}
	get := fl.getter()
	op := p.peek()
	switch {
	case op.kind == tokOp:
		p.next()
		v, err := p.value(fl, op.text)
		if err != nil {
			return nil, err
		}
		return compare(fl, get, op.text, v), nil
	case isKeyword(op, "in"):
		p.next()
		return p.set(fl, get)
	}
	if has := fl.has; has != 0 { // read here, not through get: a third of the test
		return func(f *decode.Frame) bool { return f.Has&has != 0 }, nil
	}
	if fl.kind == kindBool {
		return func(f *decode.Frame) bool { n, _, ok := get(f); return ok && n != 0 }, nil
	}
	return func(f *decode.Frame) bool { _, _, ok := get(f); return ok }, nil
}

// value is one compiled VALUE for field fl: a number, an address or a
// prefix.
type value struct {
	n      uint64
	addr   netip.Addr
	prefix netip.Prefix // an address compared with a prefix
}

// value reads the VALUE after op for fl.
func (p *parser) value(fl *field, op string) (value, error) {
	t := p.next()
	if t.kind != tokWord && t.kind != tokString {
		return value{}, p.errAt(t, fmt.Sprintf("a value should follow %s", op))
	}
	s := t.text
	bad := func(want string) error {
		return p.errAt(t, fmt.Sprintf("%q is not %s (field %s)", s, want, fl.name))
	}
	ordered := op == "<" || op == "<=" || op == ">" || op == ">="
	switch fl.kind {
	case kindAddr:
		if ordered {
			return value{}, p.errAt(t, fmt.Sprintf("%s compares addresses with == and != only", op))
		}
		if strings.Contains(s, "/") {
			pr, err := netip.ParsePrefix(s)
			if err != nil {
				return value{}, bad("an address prefix such as 10.0.0.0/24")
			}
			return value{prefix: pr.Masked()}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return value{}, bad("an IP address or GID")
		}
		return value{addr: a.Unmap()}, nil
	case kindMAC:
		hw, err := net.ParseMAC(s)
		if err != nil || len(hw) != 6 || ordered {
			return value{}, bad("a MAC address such as 02:00:00:00:00:09, compared with == or !=")
		}
		var n uint64
		for _, b := range hw {
			n = n<<8 | uint64(b)
		}
		return value{n: n}, nil
	case kindBool:
		switch strings.ToLower(s) {
		case "true", "1":
			return value{n: 1}, nil
		case "false", "0":
			return value{n: 0}, nil
		}
		return value{}, bad("true or false")
	case kindOpcode:
		op, err := decode.ParseOpcode(s)
		if err != nil {
			return value{}, bad("an opcode name such as RC_SEND_ONLY or a number 0-255")
		}
		return value{n: uint64(op)}, nil
	case kindTransport:
		for tr := decode.TransportIB; tr <= decode.TransportLink; tr++ {
			if strings.EqualFold(tr.String(), s) {
				return value{n: uint64(tr)}, nil
			}
		}
		return value{}, bad("a transport: ib, rocev1, rocev2 or link")
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return value{}, bad("an unsigned number (decimal or 0x hex)")
	}
	return value{n: n}, nil
}

// set reads "{VALUE, ...}" after "in".
func (p *parser) set(fl *field, get func(*decode.Frame) (uint64, netip.Addr, bool)) (func(*decode.Frame) bool, error) {
	if t := p.next(); t.kind != tokLBrace {
		return nil, p.errAt(t, "a '{' should follow in")
	}
	var vs []value
	for {
		if len(vs) == maxSetValues {
			return nil, p.errAt(p.peek(), fmt.Sprintf("more than %d values in one set", maxSetValues))
		}
		v, err := p.value(fl, "in")
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
		t := p.next()
		if t.kind == tokRBrace {
			break
		}
		if t.kind != tokComma {
			return nil, p.errAt(t, "want ',' or '}' in a set")
		}
	}
	if fl.kind == kindAddr {
		return func(f *decode.Frame) bool {
			_, a, ok := get(f)
			if !ok {
				return false
			}
			for _, v := range vs {
				if v.eqAddr(a) {
					return true
				}
			}
			return false
		}, nil
	}
	set := make(map[uint64]bool, len(vs))
	for _, v := range vs {
		set[v.n] = true
	}
	return func(f *decode.Frame) bool {
		n, _, ok := get(f)
		return ok && set[n]
	}, nil
}

func (v value) eqAddr(a netip.Addr) bool {
	a = a.Unmap()
	if v.prefix.IsValid() {
		return v.prefix.Contains(a)
	}
	return a == v.addr
}

// compare builds the test of one comparison of field fl, whose getter is
// get. A frame without the field fails every comparison, != included
// (tshark's rule). Of numbers, each is a range [lo, lo+span], wrapping
// (fl.inRange): != x is the range from x+1 to x-1.
func compare(fl *field, get func(*decode.Frame) (uint64, netip.Addr, bool), op string, v value) func(*decode.Frame) bool {
	if v.addr.IsValid() || v.prefix.IsValid() {
		eq := op == "=="
		if t := fl.addr4Test(v, eq); t != nil {
			return t
		}
		return func(f *decode.Frame) bool {
			_, a, ok := get(f)
			return ok && v.eqAddr(a) == eq
		}
	}
	x := v.n
	lo, hi := x, x // ==
	switch op {
	case "!=":
		lo, hi = x+1, x-1
	case "<":
		if x == 0 {
			return func(*decode.Frame) bool { return false }
		}
		lo, hi = 0, x-1
	case "<=":
		lo = 0
	case ">":
		if x == math.MaxUint64 {
			return func(*decode.Frame) bool { return false }
		}
		lo, hi = x+1, math.MaxUint64
	case ">=":
		hi = math.MaxUint64
	}
	return fl.inRange(lo, hi-lo)
}

// addr4Test is the test that src or dst, an IPv4 address, equals an IPv4
// address v or is in its prefix (eq), or not (!eq), made on the address's
// 32 bits; nil for any other field or value. Through get and eqAddr the
// test took 80 instructions, a third of decode --summary's for a frame.
// Another address (IPv6, IPv4-mapped IPv6) is left to eqAddr.
func (fl *field) addr4Test(v value, eq bool) func(f *decode.Frame) bool {
	p := v.prefix
	if !p.IsValid() {
		p = netip.PrefixFrom(v.addr, v.addr.BitLen())
	}
	if !p.Addr().Is4() || fl.name != "src" && fl.name != "dst" {
		return nil
	}
	mask := ^uint32(0)
	if p.Bits() < 32 {
		mask = ^(^uint32(0) >> p.Bits())
	}
	b := p.Addr().As4()
	want := binary.BigEndian.Uint32(b[:])
	// One closure each, the test written out in both: a closure called
	// from the other was a third of the test.
	if fl.name == "src" {
		return func(f *decode.Frame) bool {
			if f.Has&(decode.HasIPv4|decode.HasIPv6) == 0 {
				return false
			}
			if !f.Src.Is4() {
				return v.eqAddr(f.Src) == eq
			}
			b := f.Src.As4()
			return (binary.BigEndian.Uint32(b[:])&mask == want) == eq
		}
	}
	return func(f *decode.Frame) bool {
		if f.Has&(decode.HasIPv4|decode.HasIPv6) == 0 {
			return false
		}
		if !f.Dst.Is4() {
			return v.eqAddr(f.Dst) == eq
		}
		b := f.Dst.As4()
		return (binary.BigEndian.Uint32(b[:])&mask == want) == eq
	}
}

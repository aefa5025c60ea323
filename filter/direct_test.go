package filter

import (
	"math"
	"net/netip"
	"path/filepath"
	"testing"
)

// TestDirectGettersMatchColumns: each direct getter, the shortcut that
// reads the frame instead of filling its column group's values, gives what
// the column gives (present or not, value), on every frame of every bundled
// capture (RoCEv1 and v2, IPv4 and IPv6, VLAN tags, native IB).
func TestDirectGettersMatchColumns(t *testing.T) {
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled captures (%v)", err)
	}
	checked := 0
	for name, get := range direct {
		fl := fields()[name]
		if fl == nil || fl.g == nil {
			t.Fatalf("direct getter %q is for no column", name)
		}
		column := columnGetter(fl.g, fl.i)
		for _, path := range paths {
			fs := frames(t, path)
			for i := range fs {
				f := &fs[i]
				n, a, ok := get(f)
				cn, ca, cok := column(f)
				if ok != cok || ok && (n != cn || a != ca) {
					t.Errorf("%s frame %d: %s direct gives (%d, %v, %v), the column (%d, %v, %v)",
						filepath.Base(path), f.Number, name, n, a, ok, cn, ca, cok)
				}
				if ok {
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no frame had any of the fields")
	}
}

// TestComparisons: every comparison, made a range test (compare, inRange),
// gives what the operator says of the field's value, on every frame of
// every bundled capture, for values at and around each frame's, 0 and the
// largest: for the fields whose tests read the frame themselves
// (rangeTests) and for one through the column (pkey).
func TestComparisons(t *testing.T) {
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled captures (%v)", err)
	}
	names := []string{"pkey"}
	for name := range rangeTests {
		names = append(names, name)
	}
	ops := map[string]func(n, x uint64) bool{
		"==": func(n, x uint64) bool { return n == x }, "!=": func(n, x uint64) bool { return n != x },
		"<": func(n, x uint64) bool { return n < x }, "<=": func(n, x uint64) bool { return n <= x },
		">": func(n, x uint64) bool { return n > x }, ">=": func(n, x uint64) bool { return n >= x },
	}
	for _, path := range paths {
		fs := frames(t, path)
		for _, name := range names {
			fl := fields()[name]
			get := fl.getter()
			for i := range fs {
				f := &fs[i]
				n, _, ok := get(f)
				for _, x := range []uint64{0, 1, n - 1, n, n + 1, math.MaxUint64} {
					for op, want := range ops {
						if got := compare(fl, get, op, value{n: x})(f); got != (ok && want(n, x)) {
							t.Fatalf("%s frame %d: %s %s %d gives %v; the field is %d, present %v",
								filepath.Base(path), f.Number, name, op, x, got, n, ok)
						}
					}
				}
			}
		}
	}
}

// TestAddr4Tests: src and dst tested on their 32 bits (addr4Test) give
// what eqAddr gives, for the frame's own address, prefixes of it from /0
// to /32 and another address, with == and !=, on every bundled frame
// (IPv6 ones included).
func TestAddr4Tests(t *testing.T) {
	paths, err := filepath.Glob("../testdata/pcaps/*.pcap*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bundled captures (%v)", err)
	}
	checked := 0
	for _, path := range paths {
		fs := frames(t, path)
		for _, name := range []string{"src", "dst"} {
			fl := fields()[name]
			get := fl.getter()
			for i := range fs {
				f := &fs[i]
				_, a, ok := get(f)
				var vs []value
				if a.Is4() {
					for _, bits := range []int{0, 1, 8, 23, 24, 31, 32} {
						vs = append(vs, value{prefix: netip.PrefixFrom(a, bits).Masked()})
					}
					vs = append(vs, value{addr: a}, value{addr: netip.MustParseAddr("10.9.8.7")})
				}
				vs = append(vs, value{addr: netip.MustParseAddr("192.168.7.1")}, value{prefix: netip.MustParsePrefix("192.168.0.0/16")})
				for _, v := range vs {
					for _, eq := range []bool{true, false} {
						want := ok && v.eqAddr(a) == eq
						if got := fl.addr4Test(v, eq)(f); got != want {
							t.Fatalf("%s frame %d: %s %v (==: %v) gives %v, eqAddr %v", filepath.Base(path), f.Number, name, v, eq, got, want)
						}
						checked++
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

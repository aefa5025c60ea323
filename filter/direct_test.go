package filter

import (
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
		fl := fields[name]
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

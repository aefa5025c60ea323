package protostate

import "testing"

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in    string
		gbps  float64
		ib    string
		lanes int
	}{
		{"40G", 40, "", 0}, {"100G", 100, "", 0}, {"400GbE", 400, "", 0}, {"25", 25, "", 0}, {"2.5G", 2.5, "", 0},
		{"25 Gb/s", 25, "", 0}, {"100gbps", 100, "", 0}, {"800M", 0.8, "", 0}, {"1.6T", 1600, "", 0},
		{"HDR", 200, "HDR", 4}, {"hdr", 200, "HDR", 4}, {"4x EDR", 100, "EDR", 4}, {"EDR 4x", 100, "EDR", 4},
		{"1x HDR", 50, "HDR", 1}, {"4xNDR", 400, "NDR", 4}, {"ndr2x", 200, "NDR", 2}, {"12x QDR", 96, "QDR", 12},
		{"FDR10", 40, "FDR10", 4}, {"fdr10 1x", 10, "FDR10", 1},
	} {
		r, err := ParseRate(c.in, 4)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if r.DataGbps != c.gbps || r.IB.Name != c.ib || r.Lanes != c.lanes {
			t.Errorf("%q: %v Gb/s, %q %dx; want %v Gb/s, %q %dx", c.in, r.DataGbps, r.IB.Name, r.Lanes, c.gbps, c.ib, c.lanes)
		}
	}
	for _, bad := range []string{"", "GDR", "3x HDR", "4x 40G", "-1G", "0", "1e9G", "NaN", "HDR 4x 2x", "x"} {
		if r, err := ParseRate(bad, 4); err == nil {
			t.Errorf("%q accepted as %v", bad, r)
		}
	}
}

func TestRateOfBitsPerSec(t *testing.T) {
	for bits, want := range map[uint64]string{200e9: "HDR 4x (PAM4 256b/257b RS(544,514), 200 Gb/s data)", 40e9: "FDR10 4x (64b/66b, 40 Gb/s data)",
		25e9: "EDR 1x (64b/66b, 25 Gb/s data)", 42e9: "42 Gb/s"} {
		r, ok := RateOfBitsPerSec(bits)
		if !ok || r.IB.Name != "" {
			t.Errorf("%d b/s: %v %v", bits, r, ok)
		}
		ib, isIB := r.AsIB()
		if ib.String() != want || isIB != (want != "42 Gb/s") {
			t.Errorf("%d b/s as IB: %v %v, want %s", bits, ib, isIB, want)
		}
	}
	if _, ok := RateOfBitsPerSec(0); ok {
		t.Error("0 b/s is a rate")
	}
}

package protostate

import (
	"math"
	"testing"
)

func TestLinkRates(t *testing.T) {
	// Data rates per 4x link as the IBTA markets them, Gb/s; all but FDR
	// are whole numbers and must come out exactly (the simulator's
	// serialisation times are built on them).
	want4x := map[string]float64{"SDR": 8, "DDR": 16, "QDR": 32, "FDR10": 40, "FDR": 4 * 14.0625 * 64 / 66,
		"EDR": 100, "HDR": 200, "NDR": 400, "XDR": 800}
	if len(LinkRates()) != len(want4x) {
		t.Errorf("%d rates, want %d", len(LinkRates()), len(want4x))
	}
	for name, gbps := range want4x {
		r, err := ParseLinkRate(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.DataGbps(4); got != gbps {
			t.Errorf("%s 4x: %v Gb/s, want %v", name, got, gbps)
		}
		if math.Abs(r.SymbolTimeNs*r.DataGbpsPerLane-8) > 1e-12 {
			t.Errorf("%s: symbol time %v ns at %v Gb/s per lane", name, r.SymbolTimeNs, r.DataGbpsPerLane)
		}
	}
	sdr, _ := ParseLinkRate(" sdr ")
	if sdr.SymbolTimeNs != 4 || sdr.Encoding != "8b/10b" {
		t.Errorf("SDR: symbol time %v ns, encoding %s; want 4 ns, 8b/10b", sdr.SymbolTimeNs, sdr.Encoding)
	}
	if _, err := ParseLinkRate("GDR"); err == nil {
		t.Error("GDR accepted")
	}
}

func TestParseLinkWidth(t *testing.T) {
	for s, want := range map[string]int{"1x": 1, "2X": 2, "4x": 4, " 8x ": 8, "12": 12} {
		if got, err := ParseLinkWidth(s); err != nil || got != want {
			t.Errorf("width %q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"3x", "x", "16x", "", "-4x"} {
		if _, err := ParseLinkWidth(bad); err == nil {
			t.Errorf("width %q accepted", bad)
		}
	}
}

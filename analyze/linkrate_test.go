package analyze

import (
	"math"
	"testing"
)

func TestLinkRates(t *testing.T) {
	// Data rates per 4x link as the IBTA markets them, Gb/s.
	want4x := map[string]float64{"SDR": 8, "DDR": 16, "QDR": 32, "FDR": 54.545454, "EDR": 100, "HDR": 200, "NDR": 400}
	for name, gbps := range want4x {
		r, err := ParseLinkRate(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.DataGbps(4); math.Abs(got-gbps) > 1e-3 {
			t.Errorf("%s 4x: %.6f Gb/s, want %.6f", name, got, gbps)
		}
	}
	sdr, _ := ParseLinkRate("sdr")
	if sdr.SymbolTimeNs != 4 {
		t.Errorf("SDR symbol time %v ns, want 4", sdr.SymbolTimeNs)
	}
	if _, err := ParseLinkRate("XDR"); err == nil {
		t.Error("XDR accepted")
	}
}

func TestExpectedIPDStudy(t *testing.T) {
	// The 2015 OFA study: 2074-byte packets on SDR 4x are about 2 us apart.
	sdr, _ := ParseLinkRate("SDR")
	lanes, err := ParseLinkWidth("4X")
	if err != nil {
		t.Fatal(err)
	}
	if got := ExpectedIPDNs(2074, sdr, lanes); got != 2074 {
		t.Errorf("expected IPD %v ns, want 2074", got)
	}
	for _, bad := range []string{"2x", "x", "16x", ""} {
		if _, err := ParseLinkWidth(bad); err == nil {
			t.Errorf("width %q accepted", bad)
		}
	}
}

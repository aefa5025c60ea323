package analyze

import (
	"testing"

	"github.com/ibscope/ibscope/protostate"
)

func TestExpectedIPDStudy(t *testing.T) {
	// The 2015 OFA study: 2074-byte packets on SDR 4x are about 2 us apart.
	sdr, _ := protostate.ParseLinkRate("SDR")
	lanes, err := protostate.ParseLinkWidth("4X")
	if err != nil {
		t.Fatal(err)
	}
	if got := ExpectedIPDNs(2074, sdr, lanes); got != 2074 {
		t.Errorf("expected IPD %v ns, want 2074", got)
	}
	if got := expectedIPDNsAtGbps(2074, 0); got != 0 {
		t.Errorf("expected IPD at 0 Gb/s: %v, want 0 (unknown)", got)
	}
}

package decode

import "testing"

// TestPFCPauseSummaryWords: the summary words of PFC and PAUSE frames,
// odd vectors included (shown in 4 hex digits).
func TestPFCPauseSummaryWords(t *testing.T) {
	for _, c := range []struct {
		pfc  PFC
		want string
	}{
		{PFC{ClassEnable: 0x0009, Quanta: [PFCPriorities]uint16{65535, 0, 0, 7}}, "PFC pri 0:65535 3:7"},
		{PFC{ClassEnable: 0x0080, Quanta: [PFCPriorities]uint16{7: 0}}, "PFC pri 7:0"},
		{PFC{}, "PFC vector 0x0000"},
		{PFC{ClassEnable: 0x0102, Quanta: [PFCPriorities]uint16{1: 5}}, "PFC pri 1:5 vector 0x0102"},
		{PFC{ClassEnable: 0xab00}, "PFC vector 0xab00"},
	} {
		if got := string(c.pfc.appendSummary(nil)); got != c.want {
			t.Errorf("vector 0x%04x: %q, want %q", c.pfc.ClassEnable, got, c.want)
		}
	}
	f := Frame{Has: HasPause, Pause: Pause{Quanta: 300}}
	if got, want := string(pauseFields.summary(nil, &f)), "PAUSE quanta 300"; got != want {
		t.Errorf("PAUSE: %q, want %q", got, want)
	}
}

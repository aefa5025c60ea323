package capfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// A pcapng file names the host that captured it in a section header
// comment; the reader gives it back, keeps the first section's, and drops
// any name no host can have (it goes on into other files' metadata).
func TestPcapngCaptureHost(t *testing.T) {
	file := func(hosts ...string) []byte {
		var b []byte
		for _, h := range hosts {
			b = AppendNgSectionHeader(b, []NgOption{NgString(NgOptSHBUserAppl, "test"), NgString(NgOptComment, "a comment"), NgCaptureHost(h)})
			b = AppendNgInterface(b, decode.LinkTypeEthernet, 64, nil)
		}
		return b
	}
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{[]string{"node-7.cluster_a"}, "node-7.cluster_a"},
		{[]string{"first", "second"}, "first"},
		{[]string{"a,b"}, ""},
		{[]string{"line\nbreak"}, ""},
		{[]string{""}, ""},
		{[]string{strings.Repeat("h", 254)}, ""},
	} {
		r, err := NewReader(bytes.NewReader(file(c.hosts...)), "host.pcapng")
		if err != nil {
			t.Fatalf("%q: %v", c.hosts, err)
		}
		if got := r.CaptureHost(); got != c.want {
			t.Errorf("section hosts %q: CaptureHost %q, want %q", c.hosts, got, c.want)
		}
	}
	r, err := NewReader(bytes.NewReader(AppendPcapFileHeader(nil, decode.LinkTypeEthernet, 64, false)), "x.pcap")
	if err != nil || r.CaptureHost() != "" {
		t.Errorf("a pcap file names host %q (%v)", r.CaptureHost(), err)
	}
}

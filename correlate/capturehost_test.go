package correlate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// An exported table names, per capture, the host its pcapng section header
// says captured it (ibcap writes it), empty for a capture that does not say.
func TestExportCaptureHosts(t *testing.T) {
	dir := t.TempDir()
	pkts := testcap.Stream(4, 1, 2, 0x11, 100, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	enc, err := capfile.NewEncoder(capfile.EncoderConfig{LinkType: decode.LinkTypeEthernet, SnapLenBytes: 9000, PcapNG: true,
		SectionOptions: []capfile.NgOption{capfile.NgCaptureHost("capnode-1")}})
	if err != nil {
		t.Fatal(err)
	}
	b := enc.AppendHeader(nil)
	for _, p := range pkts {
		f := testcap.RoCEFrame(t, p)
		if b, err = enc.AppendPacket(b, &capfile.Packet{TsNs: p.TsNs, Data: f}); err != nil {
			t.Fatal(err)
		}
	}
	ng := filepath.Join(dir, "a.pcapng")
	if err := os.WriteFile(ng, b, 0o644); err != nil {
		t.Fatal(err)
	}
	pcap := testcap.WriteIn(t, dir, "b.pcap", false, pkts)
	out := filepath.Join(dir, "both.parquet")
	if _, err := Export([]string{ng, pcap}, out, ExportOptions{Format: FormatParquet}); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, readJob{Kind: "parquet", Path: out})
	if h := got[0].Metadata["ibscope.capture_hosts"]; h != "capnode-1," {
		t.Errorf("ibscope.capture_hosts = %q, want %q (captures %q)", h, "capnode-1,", got[0].Metadata["ibscope.captures"])
	}
}

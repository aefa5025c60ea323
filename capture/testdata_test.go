package capture

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/rocev2_mixed.pcap")

// testdataPcap is the bundled capture the demo, the benchmark script and
// ibcap's tests replay: 1000 RoCE frames (RoCEv2 over IPv4 and IPv6,
// VLAN-tagged RoCEv2, RoCEv1) with 143 frames that are not RoCE among them.
const testdataPcap = "testdata/rocev2_mixed.pcap"

// The bundled capture is what mixedTraffic generates; -update rewrites it.
func TestTestdataPcap(t *testing.T) {
	_, all := mixedTraffic(1000, true)
	if *update {
		writeTestPcap(t, testdataPcap, all)
	}
	tmp := filepath.Join(t.TempDir(), "x.pcap")
	writeTestPcap(t, tmp, all)
	want, _ := os.ReadFile(tmp)
	got, err := os.ReadFile(testdataPcap)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is stale or missing (%v): run go test ./capture -run TestTestdataPcap -update", testdataPcap, err)
	}
}

package capture

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// benchKeep is the user-space cost of the capture filter per frame, as a
// verbs port pays it on every frame: the RoCE rule, or an expression's
// program in cbpfProgram.
func benchKeep(b *testing.B, expr string) {
	_, frames := mixedTraffic(1000, true)
	_, f, err := captureFilter(Config{FilterExpr: expr, SnapLenBytes: DefaultSnapLenBytes}, decode.LinkTypeEthernet)
	if err != nil {
		b.Skip(err) // no libpcap
	}
	b.ReportAllocs()
	kept := 0
	for i := 0; b.Loop(); i++ {
		if f.keep(frames[i%len(frames)]) {
			kept++
		}
	}
	b.ReportMetric(float64(kept)/float64(b.N), "kept/frame")
}

func BenchmarkKeepRoCE(b *testing.B)        { benchKeep(b, "") }
func BenchmarkKeepExprUDP4791(b *testing.B) { benchKeep(b, "udp port 4791") }
func BenchmarkKeepExprVLANHost(b *testing.B) {
	benchKeep(b, "vlan and udp port 4791 and host 10.0.0.2")
}

package filter

import (
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// BenchmarkMatch is the cost of a selection per frame, beside the decoding
// it follows (BenchmarkDecodeOnly): an expression that matches everything
// must cost under 10 % of reading the frame.
func BenchmarkMatch(b *testing.B) {
	fs := frames(b, rocev2Pcap)
	for _, c := range []struct{ name, expr string }{
		{"all", `len > 0`},
		{"qp_and_opcode", `qp == 0x100 && opcode == "RC_SEND_FIRST"`},
		{"src_prefix_or_pcp", `src == 192.168.7.0/24 || pcp == 3`},
		{"set", `udp_src_port in {49152, 49226, 49300, 49374}`},
	} {
		x, err := Compile(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := range b.N {
				if x.Match(&fs[i%len(fs)]) {
					n++
				}
			}
			_ = n
		})
	}
}

// BenchmarkDecodeOnly decodes the same frames (the work a selection adds
// to), with CRCs checked as the analyses do.
func BenchmarkDecodeOnly(b *testing.B) {
	raw := rawFrames(b)
	d := decode.Decoder{LinkType: decode.LinkTypeEthernet, CheckCRC: true}
	var f decode.Frame
	b.ReportAllocs()
	for i := range b.N {
		d.Decode(raw[i%len(raw)], &f)
	}
}

// rawFrames are the capture's records, as read.
func rawFrames(b *testing.B) [][]byte {
	r, err := capfile.Open(rocev2Pcap)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var out [][]byte
	var f decode.Frame
	for {
		rec, err := r.NextRecord(&f)
		if err != nil {
			return out
		}
		out = append(out, append([]byte(nil), rec...))
	}
}

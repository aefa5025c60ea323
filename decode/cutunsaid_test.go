package decode_test

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// A frame whose headers say it runs past the bytes captured is cut,
// whatever its record claims (a capture tool that recorded its snap length
// as the original length): decoded as far as its headers go, its wire
// length what they give, its CRCs not checked. Native IB (LRH PktLen) and
// RoCEv2 (UDP length), cut after the RETH.
func TestCutUnsaid(t *testing.T) {
	p := testcap.Packet{Src: 1, Dst: 2, QP: 0x11, PSN: 77, Op: 0x06, Payload: 4096, DMALen: 8192}
	for _, tc := range []struct {
		name     string
		linkType int
		frame    []byte
		keep     int
	}{
		{"native", decode.LinkTypeInfiniBand, testcap.NativeFrame(t, p), decode.LRHLen + decode.BTHLen + 16 + 10},
		{"rocev2", decode.LinkTypeEthernet, testcap.RoCEFrame(t, p), 243},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decode.Decoder{LinkType: tc.linkType, CheckCRC: true}
			var f decode.Frame
			f.CapLen, f.WireLen = tc.keep, tc.keep // the record claims the frame whole
			if err := d.Decode(tc.frame[:tc.keep], &f); err != nil {
				t.Fatal(err)
			}
			if !f.Truncated() || f.WireLen != len(tc.frame) || f.Has&decode.CRCsCheck != 0 || f.Has&decode.HasRETH == 0 ||
				f.BTH.PSN != 77 || f.RETH.DMALen != 8192 {
				t.Errorf("cut %v, wire length %d (want %d), CRC checked %v, RETH %v, PSN %d, DMA length %d", f.Truncated(), f.WireLen,
					len(tc.frame), f.Has&decode.CRCsCheck != 0, f.Has&decode.HasRETH != 0, f.BTH.PSN, f.RETH.DMALen)
			}
		})
	}
}

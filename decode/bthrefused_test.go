package decode_test

import (
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestShortBTHNotShown: a RoCEv1 frame that ends before its BTH would
// (FuzzDecoderEthernet's rocev1-bth-refused-after-vlan) is refused without
// a BTH, decoded into a frame the packet before left: it used to keep
// HasBTH with the packet before's QP and PSN, which a filter on psn and the
// JSON then read as this frame's.
func TestShortBTHNotShown(t *testing.T) {
	d := decode.Decoder{LinkType: decode.LinkTypeEthernet, CheckCRC: true}
	var f decode.Frame
	before := testcap.RoCEFrame(t, testcap.Packet{Src: 1, Dst: 2, QP: 0x11, PSN: 77, Op: 0x04, Payload: 64})
	f.CapLen, f.WireLen = len(before), len(before)
	if err := d.Decode(before, &f); err != nil || f.BTH.PSN != 77 {
		t.Fatalf("the frame before: %v, PSN %d", err, f.BTH.PSN)
	}
	short := []byte("000000000000\x89\x150000\x00\x00\x1b000000000000000000000000000000000")
	f.CapLen, f.WireLen = len(short), len(short)+7
	err := d.Decode(short, &f)
	if f.Has&decode.HasBTH != 0 {
		t.Errorf("a frame with no room for a BTH has one (QP 0x%x, PSN %d; error %v)", f.BTH.DestQP, f.BTH.PSN, err)
	}
}

package decode

import (
	"net/netip"
	"testing"
)

// TestPutFlowKeyOverwrites checks that PutFlowKey sets every field of a key
// that held another frame's flow, for each transport and none: a field it
// left would put packets of different flows under one key.
func TestPutFlowKeyOverwrites(t *testing.T) {
	var f Frame
	f.LRH.SLID, f.LRH.DLID = 7, 9
	f.BTH.DestQP = 0x12
	f.Src, f.Dst = netip.MustParseAddr("192.168.7.1"), netip.MustParseAddr("192.168.7.2")
	f.GRH.SGID[15], f.GRH.DGID[15] = 1, 2
	f.Has = HasGRH // without it a RoCEv1 frame's GIDs are not its own (TestFlowKeyOfCutRoCEv1)
	stale := FlowKey{Transport: TransportRoCEv2, SLID: 0xFFFF, DLID: 0xFFFF,
		Src: netip.MustParseAddr("fe80::1"), Dst: netip.MustParseAddr("10.0.0.1"), DestQP: 0xFFFFFF}
	for _, tr := range []Transport{TransportNone, TransportIB, TransportRoCEv1, TransportRoCEv2} {
		f.Transport = tr
		k := stale
		f.PutFlowKey(&k)
		var want FlowKey
		want.Transport, want.DestQP = tr, f.BTH.DestQP
		switch tr {
		case TransportIB:
			want.SLID, want.DLID = f.LRH.SLID, f.LRH.DLID
		case TransportRoCEv1:
			want.Src, want.Dst = f.GRH.SrcGID(), f.GRH.DstGID()
		case TransportRoCEv2:
			want.Src, want.Dst = f.Src, f.Dst
		}
		if k != want || f.FlowKey() != want {
			t.Errorf("%v: PutFlowKey over a stale key %+v, FlowKey %+v, want %+v", tr, k, f.FlowKey(), want)
		}
	}
}

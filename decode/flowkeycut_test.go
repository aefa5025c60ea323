package decode

import (
	"net/netip"
	"path/filepath"
	"testing"
)

// TestFlowKeyOfCutRoCEv1: a RoCEv1 frame the snap length cuts inside its
// GRH decodes without a GRH, and its flow key has no addresses, not the
// GIDs of the frame decoded before it into the same Frame (which frame that
// was depended on -j: found by FuzzStreamWorkers).
func TestFlowKeyOfCutRoCEv1(t *testing.T) {
	_, recs := fileRecords(t, filepath.Join(pcapsDir, "rocev1.pcap"))
	whole := recs[0].Data
	d := Decoder{LinkType: LinkTypeEthernet}
	var f Frame
	f.CapLen, f.WireLen = len(whole), len(whole)
	if err := d.Decode(whole, &f); err != nil || f.Transport != TransportRoCEv1 || !f.FlowKey().Src.IsValid() {
		t.Fatalf("whole frame: %v, transport %v, key %v", err, f.Transport, f.FlowKey())
	}
	cut := whole[:14+GRHLen-9]
	f.CapLen, f.WireLen = len(cut), len(whole)
	if err := d.Decode(cut, &f); err != nil || f.Transport != TransportRoCEv1 || f.Has&HasGRH != 0 {
		t.Fatalf("cut frame: %v, transport %v, has %x", err, f.Transport, f.Has)
	}
	if k := f.FlowKey(); k.Src != (netip.Addr{}) || k.Dst != (netip.Addr{}) {
		t.Errorf("cut frame's key %v: addresses of the frame before", k)
	}
}

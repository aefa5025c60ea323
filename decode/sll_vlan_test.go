package decode

import (
	"encoding/binary"
	"testing"
)

// A Linux cooked record (SLL or SLL2) whose protocol is a VLAN tag, as
// tcpdump -i any and ibcap -i any write a frame whose tag the kernel
// stripped, decodes past the tag, keeping its priority.
func TestCookedVLAN(t *testing.T) {
	roce := rocePacket(t, 0x04, 16)
	tag := []byte{3 << 5, 7, 0x08, 0x00} // PCP 3, VLAN 7, then IPv4
	sll2 := binary.BigEndian.AppendUint16(nil, 0x8100)
	sll2 = append(sll2, 0, 0, 0, 0, 0, 5, 0, 1, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0) // ifindex 5, Ethernet, outgoing
	sll := []byte{0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x81, 0x00}
	for _, c := range []struct {
		name     string
		linkType int
		hdr      []byte
	}{{"SLL2", LinkTypeLinuxSLL2, sll2}, {"SLL", LinkTypeLinuxSLL, sll}} {
		data := append(append(append([]byte(nil), c.hdr...), tag...), roce[14:]...)
		var f Frame
		d := Decoder{LinkType: c.linkType, CheckCRC: true}
		if err := d.Decode(data, &f); err != nil || f.Transport != TransportRoCEv2 || !f.VLANTagged || f.VLANPCP != 3 || !f.ICRCOK {
			t.Errorf("%s: %v, VLAN %v PCP %d, ICRC ok %v (%v)", c.name, f.Transport, f.VLANTagged, f.VLANPCP, f.ICRCOK, err)
		}
	}
}

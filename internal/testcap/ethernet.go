package testcap

import (
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Frame is one raw Ethernet frame of a test capture.
type Frame struct {
	TsNs int64
	B    []byte
}

// WriteFrames writes frames to a nanosecond Ethernet pcap named name in
// t.TempDir().
func WriteFrames(t testing.TB, name string, frames []Frame) string {
	t.Helper()
	return writePcap(t, filepath.Join(t.TempDir(), name), decode.LinkTypeEthernet, frames)
}

// writePcap writes frames to a nanosecond pcap of linkType at path.
func writePcap(t testing.TB, path string, linkType int, frames []Frame) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capfile.NewPcapWriter(f, linkType)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if err := w.WritePacket(&capfile.Packet{TsNs: fr.TsNs, Data: fr.B}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// HostMAC is test host n's MAC, as RoCEFrame gives it.
func HostMAC(n byte) net.HardwareAddr { return net.HardwareAddr{2, 0, 0, 0, 0, n} }

// MACControlFrame builds a PFC or PAUSE frame (l) sent by host src to the
// MAC control address, zero-padded to the 60-byte minimum frame.
func MACControlFrame(t testing.TB, src byte, l gopacket.SerializableLayer) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: HostMAC(src), DstMAC: net.HardwareAddr{1, 0x80, 0xC2, 0, 0, 1}, EthernetType: decode.EtherTypeMACControl}
	b := Serialize(t, eth, l)
	return append(b, make([]byte, max(60-len(b), 0))...)
}

// PFCFrame builds a PFC frame from host src pausing each priority for its
// quanta (0 resumes it).
func PFCFrame(t testing.TB, src byte, quanta map[int]uint16) []byte {
	t.Helper()
	p := &decode.PFC{Opcode: decode.MACControlOpPFC}
	for prio, q := range quanta {
		p.ClassEnable |= 1 << prio
		p.Quanta[prio] = q
	}
	return MACControlFrame(t, src, p)
}

// RoCEAt is RoCEFrame with the IP DSCP set and, when pcp >= 0, a VLAN tag
// of that priority after the MACs.
func RoCEAt(t testing.TB, p Packet, dscp uint8, pcp int) []byte {
	t.Helper()
	b := RoCEFrame(t, p)
	b[15] = dscp<<2 | b[15]&3 // the ICRC masks the TOS byte
	if pcp < 0 {
		return b
	}
	tag := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0x8100), uint16(pcp)<<13|7)
	return append(append(append([]byte(nil), b[:12]...), tag...), b[12:]...)
}

// IFAProbe turns p, a RoCEv2 frame, into an IFA 2.0 probe (payload
// stamping) carrying hops, the newest first, as transit switches leave it:
// IP protocol 253, the IFA header before UDP, the metadata header and stack
// after it, the UDP length and ICRC untouched.
func IFAProbe(t testing.TB, p Packet, hops []decode.IFAHop) []byte {
	t.Helper()
	roce := RoCEFrame(t, p)
	var stack []byte
	for _, h := range hops {
		stack = h.AppendTo(stack)
	}
	md := &decode.IFAMetadata{HopLimit: 8, Stack: stack}
	mb := gopacket.NewSerializeBuffer()
	if err := md.SerializeTo(mb, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		t.Fatal(err)
	}
	hdr := []byte{decode.IFAVersion2<<4 | decode.IFANoGNS, 17, 0, 255}
	const ip, udp = 14, 14 + 20
	b := append([]byte(nil), roce[:udp]...)
	b = append(b, hdr...)
	b = append(b, roce[udp:udp+8]...)
	b = append(b, mb.Bytes()...)
	b = append(b, roce[udp+8:]...)
	binary.BigEndian.PutUint16(b[ip+2:], uint16(len(b)-ip))
	b[ip+9] = decode.IPProtocolIFA
	return b
}

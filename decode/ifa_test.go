package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ifaHops returns n hop entries, the newest (highest device ID) first.
func ifaHops(n int) []byte {
	var stack []byte
	for i := n; i > 0; i-- {
		h := IFAHop{LNS: 1, DeviceID: 0xA0000 + uint32(i), IPTTL: uint8(64 - i), EgressPortSpeed: 4, Congestion: 3, QueueID: 5,
			RxTimeSec: 0xFFFFF, EgressPort: uint16(10 + i), IngressPort: uint16(20 + i), RxTimeNs: 999999999, ResidenceNs: uint32(1000 * i)}
		stack = h.AppendTo(stack)
	}
	return stack
}

// splice returns p with ins inserted at byte at.
func splice(p []byte, at int, ins []byte) []byte {
	return append(append(append([]byte(nil), p[:at]...), ins...), p[at:]...)
}

// ifaProbe turns a RoCEv2 IPv4 frame (rocePacket) into an IFA 2.0 probe as
// an initiator and transit hops leave it: IP protocol 253, the IFA header
// before UDP, the metadata header and stack after it (or at the end with
// TS), the UDP length and the ICRC untouched.
func ifaProbe(t testing.TB, roce []byte, hdr IFA, md IFAMetadata) []byte {
	t.Helper()
	const ip, udp = 14, 14 + 20
	hb := gopacket.NewSerializeBuffer()
	if err := hdr.SerializeTo(hb, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	mb := gopacket.NewSerializeBuffer()
	if err := md.SerializeTo(mb, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	mdBytes := mb.Bytes()
	var p []byte
	if hdr.Flags&IFAFlagTS != 0 { // stack, then metadata header, at the end
		tail := append(append([]byte(nil), mdBytes[IFAMetadataHeaderLen:]...), mdBytes[:IFAMetadataHeaderLen]...)
		p = append(append([]byte(nil), roce...), tail...)
	} else {
		p = splice(roce, udp+8, mdBytes)
	}
	p = splice(p, udp, hb.Bytes())
	binary.BigEndian.PutUint16(p[ip+2:], uint16(len(p)-ip))
	p[ip+9] = IPProtocolIFA
	return p
}

func TestIFARoundTrip(t *testing.T) {
	for _, c := range []struct {
		in, out codecLayer
	}{
		{&IFA{Version: 2, GNS: IFANoGNS, NextHdr: 17, Flags: IFAFlagI | IFAFlagTA, MaxLength: 255}, &IFA{}},
		{&IFAMetadata{RequestVector: 0xFF, ActionVector: 0xC0, HopLimit: 3, CurrentLength: 16, Stack: ifaHops(2)}, &IFAMetadata{}},
		{&IFAMetadata{HopLimit: 0xFF, Stack: []byte{}}, &IFAMetadata{}},
		{&IFA1{ProbeMarker: 0xAAAAAAAABBBBBBBB, Version: 1, MsgType: 2, Flags: 0x8001, RequestVector: 0xFFFF, ActionVector: 0x1234,
			HopLimit: 8, HopCount: 3, MustBeZero: 0, MaxLength: 512, CurrentLength: 96, SenderHandle: 0xBEEF, SeqNumber: 0xFFFE}, &IFA1{}},
	} {
		checkRoundTrip(t, c.in, c.out)
	}
	h := IFAHop{LNS: 0xF, DeviceID: 0xFFFFF, IPTTL: 1, EgressPortSpeed: 6, Congestion: 2, QueueID: 0x3F, RxTimeSec: 12345,
		EgressPort: 0xFFFF, IngressPort: 1, RxTimeNs: 7, ResidenceNs: 0xFFFFFFFF, Opaque: [12]byte{1, 11: 12}}
	var back IFAHop
	b := h.AppendTo(nil)
	back.parse(b)
	if len(b) != IFAHopLen || back != h {
		t.Errorf("hop: %d bytes, %+v; want %d, %+v", len(b), back, IFAHopLen, h)
	}
}

// TestIFAProbe decodes IFA 2.0 probes on RoCEv2 through the fast path and
// gopacket: the IFA headers, each hop, and the IB packet after the stack.
func TestIFAProbe(t *testing.T) {
	roce := rocePacket(t, 0x0A, 32) // RC RDMA WRITE ONLY
	hdr := IFA{Version: 2, GNS: IFANoGNS, NextHdr: 17, Flags: IFAFlagI, MaxLength: 64}
	md := IFAMetadata{RequestVector: 0xFF, HopLimit: 5, CurrentLength: 24, Stack: ifaHops(3)}
	payload := ifaProbe(t, roce, hdr, md)
	udpCounts := append([]byte(nil), payload...) // a UDP length that counts the metadata
	binary.BigEndian.PutUint16(udpCounts[14+20+4+4:], binary.BigEndian.Uint16(udpCounts[14+20+4+4:])+IFAMetadataHeaderLen+24*4)
	tsHdr := hdr
	tsHdr.Flags |= IFAFlagTS
	tail := ifaProbe(t, roce, tsHdr, md)
	var want Frame
	d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
	want.CapLen, want.WireLen = len(roce), len(roce)
	if err := d.Decode(roce, &want); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string][]byte{"payload stamping": payload, "UDP length with the metadata": udpCounts, "tail stamping": tail} {
		t.Run(name, func(t *testing.T) {
			var f Frame
			f.CapLen, f.WireLen = len(p), len(p)
			if err := d.Decode(p, &f); err != nil {
				t.Fatal(err)
			}
			wantHas := HasEthernet | HasIPv4 | HasUDP | HasIFA | HasIFAMetadata | HasBTH | HasRETH | HasICRC | CRCsCheck
			if f.Has != wantHas || f.Transport != TransportRoCEv2 || !f.ICRCOK {
				t.Errorf("Has %b, transport %s, ICRC ok %v; want %b, rocev2, the ICRC of the packet before IFA", f.Has, f.Transport, f.ICRCOK, wantHas)
			}
			if f.IFA.Version != 2 || f.IFA.GNS != IFANoGNS || f.IFA.NextHdr != 17 || f.IFA.Flags&^IFAFlagTS != hdr.Flags || f.IFA.MaxLength != 64 {
				t.Errorf("IFA header %+v", f.IFA)
			}
			m := &f.IFAMetadata
			if m.RequestVector != 0xFF || m.HopLimit != 5 || m.CurrentLength != 24 || !bytes.Equal(m.Stack, md.Stack) || m.Hops() != 3 {
				t.Errorf("metadata %+v", m)
			}
			if h := m.Hop(0); h.DeviceID != 0xA0003 || h.ResidenceNs != 3000 || h.QueueID != 5 || h.Congestion != 3 || h.EgressPort != 13 {
				t.Errorf("newest hop %+v", h)
			}
			if f.BTH.DestQP != want.BTH.DestQP || f.BTH.PSN != want.BTH.PSN || f.BTH.ICRC != want.BTH.ICRC ||
				f.RETH.VA != want.RETH.VA || f.RETH.DMALen != want.RETH.DMALen || !bytes.Equal(f.Payload, want.Payload) || f.IBLen != want.IBLen || f.Src != want.Src {
				t.Errorf("IB packet after the stack: %+v, want %+v", f.BTH, want.BTH)
			}
			js := string(f.AppendJSON(nil, ""))
			for _, part := range []string{`"transport":"rocev2"`, `"ifa":{"version":2,"gns":15,"next_hdr":17,`, `"hop_limit":5,"cur_len":24,"hops":[{"lns":1,"device_id":655363,`, `"residence_ns":1000}]}`, `"dest_qp":7`} {
				if !strings.Contains(js, part) {
					t.Errorf("JSON %s lacks %s", js, part)
				}
			}
			pk := gopacket.NewPacket(p, layers.LayerTypeEthernet, gopacket.Default)
			if pk.ErrorLayer() != nil {
				t.Fatal(pk.ErrorLayer().Error())
			}
			gi, ok1 := pk.Layer(LayerTypeIFA).(*IFA)
			gm, ok2 := pk.Layer(LayerTypeIFAMetadata).(*IFAMetadata)
			gb, ok3 := pk.Layer(LayerTypeBTH).(*BTH)
			if name == "tail stamping" { // gopacket's path leaves the metadata at the end undecoded
				ok2, gm = true, &IFAMetadata{Stack: md.Stack}
			}
			if !ok1 || !ok2 || !ok3 || gi.MaxLength != 64 || !bytes.Equal(gm.Stack, md.Stack) || gb.PSN != want.BTH.PSN || gb.DestQP != want.BTH.DestQP {
				t.Errorf("gopacket: %v", pk)
			}
		})
	}
}

// TestIFABadInput: each problem is named with its byte in the frame, and
// the rest of the frame is still decoded.
func TestIFABadInput(t *testing.T) {
	const ifaAt, mdAt = 14 + 20, 14 + 20 + IFAHeaderLen + 8
	roce := rocePacket(t, 0x0A, 32)
	hdr := IFA{Version: 2, GNS: IFANoGNS, NextHdr: 17, MaxLength: 8}
	tooLong := ifaProbe(t, roce, hdr, IFAMetadata{HopLimit: 1, CurrentLength: 16, Stack: ifaHops(2)}) // 16 words, max 8
	pastEnd := ifaProbe(t, roce, hdr, IFAMetadata{CurrentLength: 8, Stack: ifaHops(1)})
	pastEnd[mdAt+3] = 200 // 800 bytes of stack in a short packet
	hdrMF := hdr
	hdrMF.Flags = IFAFlagMF
	fragment := ifaProbe(t, roce, hdrMF, IFAMetadata{CurrentLength: 8, Stack: ifaHops(1)})

	const marker = 0xAAAAAAAABBBBBBBB
	ifa1 := func(h IFA1) []byte {
		buf := gopacket.NewSerializeBuffer()
		if err := h.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		p := splice(roce, 14+20+8, buf.Bytes())
		binary.BigEndian.PutUint16(p[14+2:], uint16(len(p)-14))
		binary.BigEndian.PutUint16(p[14+20+4:], uint16(len(p)-14-20))
		return p
	}
	good1 := ifa1(IFA1{ProbeMarker: marker, Version: 1, HopLimit: 4, HopCount: 2, MaxLength: 256, CurrentLength: 64, SeqNumber: 9})
	hops1 := ifa1(IFA1{ProbeMarker: marker, Version: 1, HopLimit: 2, HopCount: 3, MaxLength: 256, CurrentLength: 64, SeqNumber: 9})
	long1 := ifa1(IFA1{ProbeMarker: marker, Version: 1, HopLimit: 4, HopCount: 2, MaxLength: 32, CurrentLength: 64, SeqNumber: 9})

	d := Decoder{LinkType: LinkTypeEthernet, IFA1ProbeMarker: marker}
	var f Frame
	f.CapLen, f.WireLen = len(good1), len(good1)
	if err := d.Decode(good1, &f); err != nil || f.Has&HasIFA1 == 0 || f.IFA1.SeqNumber != 9 || f.IFA1.HopCount != 2 {
		t.Fatalf("IFA 1.0 probe: %v, Has %b, %+v", err, f.Has, f.IFA1)
	}
	if js := string(f.AppendJSON(nil, "")); !strings.Contains(js, `"ifa1":{"probe_marker":12297829382759365563,"version":1,`) {
		t.Errorf("JSON %s", js)
	}

	for _, c := range []struct {
		name   string
		frame  []byte
		offset int
		msg    string
		has    Has
	}{
		{"stack longer than the IFA header allows", tooLong, mdAt + 3, "stack of 16 words is longer than the IFA header's maximum of 8", HasIFA | HasIFAMetadata | HasBTH | HasRETH},
		{"stack past the packet", pastEnd, mdAt + 3, "IFA metadata stack of 200 words (800 bytes) runs past", HasIFA},
		{"fragment header", fragment, ifaAt + 2, "MF, C) are not decoded", HasIFA},
		{"IFA 1.0 hop count past the hop limit", hops1, 14 + 20 + 8 + 17, "IFA 1.0 hop count 3 is past the hop limit 2", HasIFA1},
		{"IFA 1.0 metadata past its maximum", long1, 14 + 20 + 8 + 22, "length 64 is longer than the header's maximum 32", HasIFA1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f Frame
			f.CapLen, f.WireLen = len(c.frame), len(c.frame)
			err := d.Decode(c.frame, &f)
			var fe *FrameError
			if !errors.As(err, &fe) || fe.Offset != c.offset || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("%v; want byte %d: %q", err, c.offset, c.msg)
			}
			if f.Has&c.has != c.has {
				t.Errorf("Has %b, want %b: the rest is decoded all the same", f.Has, c.has)
			}
		})
	}
}

// TestIFAProbeIPv6: over IPv6 the IFA header follows the IPv6 header, whose
// next header names IFA.
func TestIFAProbeIPv6(t *testing.T) {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP,
		SrcIP: bytes.Repeat([]byte{0xfd}, 16), DstIP: append(bytes.Repeat([]byte{0xfd}, 15), 2)}
	udp := &layers.UDP{SrcPort: 50000, DstPort: UDPPortRoCEv2}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv6},
		ip, udp, &BTH{OpCode: 0x04, PKey: 0xFFFF, DestQP: 0x42, PSN: 77}, gopacket.Payload(bytes.Repeat([]byte{1}, 40)))
	if err != nil {
		t.Fatal(err)
	}
	roce := append([]byte(nil), buf.Bytes()...)
	if err := SealRoCE(roce); err != nil {
		t.Fatal(err)
	}
	const ip6, udpAt = 14, 14 + 40
	hb := []byte{2<<4 | IFANoGNS, 17, 0, 32}
	md := append([]byte{0xFF, 0, 7, 8}, ifaHops(1)...)
	p := splice(splice(roce, udpAt+8, md), udpAt, hb)
	binary.BigEndian.PutUint16(p[ip6+4:], uint16(len(p)-ip6-40))
	p[ip6+6] = IPProtocolIFA
	d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
	var f Frame
	f.CapLen, f.WireLen = len(p), len(p)
	if err := d.Decode(p, &f); err != nil {
		t.Fatal(err)
	}
	if f.Has&CRCsCheck == 0 || !f.ICRCOK {
		t.Errorf("ICRC checked %v, ok %v: want the ICRC of the packet before IFA to match", f.Has&CRCsCheck != 0, f.ICRCOK)
	}
	bad := append([]byte(nil), p...)
	bad[len(bad)-ICRCLen-1] ^= 1 // a payload bit
	if err := d.Decode(bad, &f); err != nil || f.Has&CRCsCheck == 0 || f.ICRCOK {
		t.Errorf("a flipped payload bit: %v, ICRC ok %v; want a bad ICRC", err, f.ICRCOK)
	}
	if f.Has&(HasIPv6|HasIFA|HasIFAMetadata|HasBTH) != HasIPv6|HasIFA|HasIFAMetadata|HasBTH || f.BTH.DestQP != 0x42 || f.BTH.PSN != 77 ||
		len(f.Payload) != 40 || f.IFAMetadata.HopLimit != 7 || f.IFAMetadata.Hops() != 1 || f.IFA.MaxLength != 32 {
		t.Errorf("Has %b BTH %+v payload %d metadata %+v", f.Has, f.BTH, len(f.Payload), f.IFAMetadata)
	}
}

// TestCongestionZeroAllocs: PFC, PAUSE and IFA frames decode and print as
// JSON without allocating, as every other frame does.
func TestCongestionZeroAllocs(t *testing.T) {
	roce := rocePacket(t, 0x0A, 256)
	for name, p := range map[string][]byte{
		"PFC":   macControlFrame(t, &PFC{ClassEnable: 0x08, Quanta: [8]uint16{3: 0xFFFF}}),
		"PAUSE": macControlFrame(t, &Pause{Quanta: 1}),
		"IFA":   ifaProbe(t, roce, IFA{Version: 2, GNS: IFANoGNS, NextHdr: 17, MaxLength: 64}, IFAMetadata{HopLimit: 3, CurrentLength: 24, Stack: ifaHops(3)}),
	} {
		d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
		var f Frame
		f.CapLen, f.WireLen = len(p), len(p)
		js := make([]byte, 0, 4096)
		allocs := testing.AllocsPerRun(200, func() {
			if err := d.Decode(p, &f); err != nil || !f.Decoded() {
				t.Fatalf("%s: %v", name, err)
			}
			js = f.AppendJSON(js[:0], "")
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per frame, want 0", name, allocs)
		}
	}
}

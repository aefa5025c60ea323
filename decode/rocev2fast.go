package decode

import (
	"encoding/binary"
	"net/netip"
)

// The frame a RoCE capture holds nearly always is RoCEv2 over untagged
// Ethernet and IPv4 without options, whole in the capture. ethernetRoCEv2
// decodes it with every test made on the raw bytes up front, behind one
// bounds check, and sets the fields ethernet, ipv4 and udp would set, as
// they set them. Any other frame (a VLAN tag, IP options or fragments,
// IFA, a length that disagrees with another or runs past the capture, an
// IFA 1.0 probe marker to look for) it leaves untouched, to them. The
// general path, through five calls that each test and slice again, took
// twice the instructions to reach the BTH.

// ethIPv4UDPLen is the length of an Ethernet header, an IPv4 header
// without options and a UDP header.
const ethIPv4UDPLen = EthernetHeaderLen + IPv4HeaderLen + UDPHeaderLen

// ethernetRoCEv2 decodes data as Decode does if it is the common RoCEv2
// frame, and reports whether it was; the error is Decode's.
//
// With head, it sets only the frame's head (what DecodeHead says), and
// reports false, having written nothing, for a transport packet that
// transportCommon does not take.
func (d *Decoder) ethernetRoCEv2(data []byte, f *Frame, head bool) (bool, error) {
	if len(data) < ethIPv4UDPLen || d.IFA1ProbeMarker != 0 {
		return false, nil
	}
	h := (*[ethIPv4UDPLen]byte)(data)
	be := binary.BigEndian
	total := int(be.Uint16(h[16:]))
	l := int(be.Uint16(h[38:])) // UDP length
	if be.Uint16(h[12:]) != 0x0800 || h[14] != 0x45 || be.Uint16(h[20:])&0x3FFF != 0 || h[23] != 17 ||
		be.Uint16(h[36:]) != UDPPortRoCEv2 || l != total-20 || l < 8+BTHLen+ICRCLen || 34+l > len(data) {
		return false, nil
	}
	end := 34 + l
	if head {
		b := data[ethIPv4UDPLen:end]
		_, e, ok := commonTransport(b)
		if !ok {
			return false, nil
		}
		// The head as Reset and the full path leave it (DecodeHead does
		// not Reset first).
		f.Transport, f.Iface = TransportRoCEv2, -1
		f.Has = HasEthernet | HasIPv4 | HasUDP | HasICRC | HasBTH | hasExt[e]
		f.ICRCOK, f.VCRCOK = false, false
		if d.CheckCRC {
			f.BTH.ICRC = binary.LittleEndian.Uint32(b[len(b)-ICRCLen:])
			d.commonICRC(data, end, f)
		}
		return true, nil
	}
	f.DstMAC, f.SrcMAC = [6]byte(h[0:6]), [6]byte(h[6:12])
	f.Ethernet = true
	f.Src = netip.AddrFrom4([4]byte(h[26:30]))
	f.Dst = netip.AddrFrom4([4]byte(h[30:34]))
	f.ECN, f.DSCP = h[15]&3, h[15]>>2
	f.TTL = h[22]
	f.Transport = TransportRoCEv2
	f.Has |= HasEthernet | HasIPv4 | HasUDP
	f.UDPSrc = be.Uint16(h[34:])
	f.IBLen = l - 8
	if b := data[ethIPv4UDPLen:end]; !transportCommon(b, f) {
		if err := d.transport(b, ethIPv4UDPLen, f, false); err != nil {
			return true, err
		}
		d.checkRoCEv2ICRC(data, 14, 34, end, f)
		return true, nil
	}
	if d.CheckCRC {
		d.commonICRC(data, end, f)
	}
	return true, nil
}

// commonICRC checks the ICRC of the common frame whose transport packet
// ends at end, f.BTH.ICRC set, as checkRoCEv2ICRC does, without its tests
// of what that frame is (an ICRC, an IPv4 header of 20 bytes): they were a
// third of its instructions.
func (d *Decoder) commonICRC(data []byte, end int, f *Frame) {
	if !useFoldIPv4 {
		d.checkRoCEv2ICRC(data, 14, 34, end, f)
		return
	}
	f.ICRCOK = roceV2IPv4(data[14:end-ICRCLen]) == f.BTH.ICRC
	f.Has |= CRCsCheck
}

// commonTransport reports whether b, a transport packet from its BTH
// through its ICRC (at least BTHLen+ICRCLen bytes), is one transportCommon
// decodes, and if so returns where its pad bytes start and the header after
// the BTH (extNone, extRETH or extAETH).
func commonTransport(b []byte) (end int, e ext, ok bool) {
	end = len(b) - ICRCLen - int(b[1]>>4&3) // before the pad bytes
	info := &opTable[Opcode(b[0])]
	e = info.exts[0]
	if !info.valid || end < BTHLen || e != extNone &&
		(info.exts[1] != extNone || e != extRETH && e != extAETH || end-BTHLen < extLen[e]) {
		return 0, 0, false
	}
	return end, e, true
}

// transportCommon decodes b, a transport packet from its BTH through its ICRC
// (at least BTHLen+ICRCLen bytes), as transport does if its opcode is
// valid and implies no header after the BTH but a RETH or an AETH, which
// the packet holds whole before its pad bytes (RDMA WRITE, SEND and READ
// packets and their ACKs: nearly all of a capture), and reports whether it
// did; otherwise it has written nothing.
func transportCommon(b []byte, f *Frame) bool {
	end, e, ok := commonTransport(b)
	if !ok {
		return false
	}
	t := &f.BTH
	t.parse(b)
	t.Contents, t.Payload = b[:BTHLen], b[BTHLen:end]
	t.HasICRC, t.ICRC = true, binary.LittleEndian.Uint32(b[len(b)-ICRCLen:])
	f.Has |= HasICRC | HasBTH
	rest := t.Payload
	switch e {
	case extRETH:
		_ = f.RETH.DecodeFromBytes(rest, nilDF) // whole: no error
		rest = rest[RETHLen:]
		f.Has |= HasRETH
	case extAETH:
		_ = f.AETH.DecodeFromBytes(rest, nilDF)
		rest = rest[AETHLen:]
		f.Has |= HasAETH
	}
	f.Payload = rest
	return true
}

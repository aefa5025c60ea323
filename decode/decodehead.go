package decode

import (
	"encoding/binary"
	"net/netip"
)

// DecodeHead decodes data as Decode does, for a caller that reads only the
// frame's head: Transport, Has, Iface, ICRCOK and VCRCOK (with the record's
// fields, which the caller sets). Those are Decode's, and so is the error;
// of the common RoCEv2 frame (untagged Ethernet, IPv4 without options, an
// RDMA WRITE, SEND, READ or ACK packet: rocev2fast.go) the other fields are
// left as the frame before left them, and the ICRC is checked as Decode
// checks it; so are the HeadFields asked for (Decoder.HeadFields). Any
// other frame is decoded whole. decode --summary, which
// counts frames, errors and bad CRCs, reads nothing else; filling the
// headers' fields it does not read was a third of its instructions.
func (d *Decoder) DecodeHead(data []byte, f *Frame) error {
	if d.LinkType == LinkTypeEthernet {
		if d.HeadFields != 0 { // tested first: after the call it cost --summary 0.6 %
			return d.decodeHeadFields(data, f)
		}
		if ok, err := d.ethernetRoCEv2(data, f, true); ok {
			return err
		}
	}
	return d.Decode(data, f) // Resets f first
}

// decodeHeadFields is DecodeHead of an Ethernet frame with HeadFields.
func (d *Decoder) decodeHeadFields(data []byte, f *Frame) error {
	if ok, err := d.ethernetRoCEv2(data, f, true); ok {
		headFields((*[ethIPv4UDPLen + BTHLen]byte)(data), f, d.HeadFields)
		return err
	}
	return d.Decode(data, f)
}

// HeadFields are header fields DecodeHead's head of the common RoCEv2
// frame holds beyond the bare head when asked (Decoder.HeadFields), as the
// whole decode sets them. Each is a read at a fixed place: a filter on them
// costs decode --summary far less than decoding every frame whole, and
// each part only what it sets.
type HeadFields uint8

const (
	HeadEthernet HeadFields = 1 << iota // DstMAC, SrcMAC, Ethernet; no VLAN tags (NumVLANs 0)
	HeadIP                              // Src, Dst, ECN, DSCP, TTL, UDPSrc
	HeadBTH                             // the BTH's fields but its ICRC (BTH.parse's)
)

// headFields sets the parts of the common frame h (its Ethernet, IPv4,
// UDP and BTH headers) asked for.
func headFields(h *[ethIPv4UDPLen + BTHLen]byte, f *Frame, parts HeadFields) {
	if parts&HeadEthernet != 0 {
		f.DstMAC, f.SrcMAC = [6]byte(h[0:6]), [6]byte(h[6:12])
		f.Ethernet, f.NumVLANs = true, 0
	}
	if parts&HeadIP != 0 {
		f.Src = netip.AddrFrom4([4]byte(h[26:30]))
		f.Dst = netip.AddrFrom4([4]byte(h[30:34]))
		f.ECN, f.DSCP = h[15]&3, h[15]>>2
		f.TTL = h[22]
		f.UDPSrc = binary.BigEndian.Uint16(h[34:])
	}
	if parts&HeadBTH != 0 {
		f.BTH.parse(h[ethIPv4UDPLen:])
	}
}

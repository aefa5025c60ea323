package decode

import (
	"encoding/binary"
	"fmt"
)

// SealRoCE fills in the ICRC of a RoCEv2 (IPv4 or IPv6, UDP port 4791) or
// RoCEv1 (ethertype 0x8915) Ethernet frame built with the serializers: the
// headers must be final, lengths included, since the ICRC covers them. A
// non-zero UDP checksum is recomputed afterwards, as it covers the ICRC;
// RoCEv2 senders usually leave it 0. The frame must not carry an FCS.
func SealRoCE(frame []byte) error {
	off, et, err := skipEthernet(frame)
	if err != nil {
		return err
	}
	return sealEtherType(frame, off, et)
}

// SealFrame seals one captured frame of a link type: RoCE frames of
// LinkTypeEthernet, LinkTypeLinuxSLL and LinkTypeLinuxSLL2 (as SealRoCE),
// native IB packets of LinkTypeInfiniBand (as SealNative, or the LPCRC of a
// 6-byte link packet), and ERF records (type 21, 25 or an Ethernet type
// without FCS) of LinkTypeERF.
func SealFrame(linkType int, frame []byte) error {
	switch linkType {
	case LinkTypeEthernet:
		return SealRoCE(frame)
	case LinkTypeLinuxSLL:
		if len(frame) < 16 {
			return fmt.Errorf("seal: Linux cooked header: %d bytes, need 16", len(frame))
		}
		return sealEtherType(frame, 16, binary.BigEndian.Uint16(frame[14:]))
	case LinkTypeLinuxSLL2:
		if len(frame) < 20 {
			return fmt.Errorf("seal: Linux cooked v2 header: %d bytes, need 20", len(frame))
		}
		return sealEtherType(frame, 20, binary.BigEndian.Uint16(frame))
	case LinkTypeInfiniBand:
		return sealIB(frame)
	case LinkTypeERF:
		var e ERF
		if err := e.DecodeFromBytes(frame, nilDF); err != nil {
			return fmt.Errorf("seal: %w", err)
		}
		pkt := frame[len(e.Contents) : len(e.Contents)+len(e.Payload)]
		switch {
		case e.Type == ERFTypeInfiniBand || e.Type == ERFTypeIBLink:
			return sealIB(pkt)
		case IsERFEthernet(e.Type):
			return SealRoCE(pkt)
		}
		return fmt.Errorf("seal: ERF record type %d holds no IB or RoCE packet", e.Type)
	}
	return fmt.Errorf("seal: link type %d is not one ibscope writes", linkType)
}

// sealIB seals a native IB packet (LRH through VCRC) or a 6-byte link packet.
func sealIB(pkt []byte) error {
	if len(pkt) == LinkFCPLen {
		binary.LittleEndian.PutUint16(pkt[4:], VCRC(pkt[:4]))
		return nil
	}
	if len(pkt) < LRHLen {
		return fmt.Errorf("seal: %d-byte packet is shorter than an LRH", len(pkt))
	}
	if pktLen := int(binary.BigEndian.Uint16(pkt[4:])&0x7FF) * 4; pktLen+2 != len(pkt) {
		return fmt.Errorf("seal: LRH PktLen %d bytes plus VCRC disagrees with the %d-byte packet", pktLen, len(pkt))
	}
	SealNative(pkt)
	return nil
}

func skipEthernet(frame []byte) (off int, etherType uint16, err error) {
	if len(frame) < 14 {
		return 0, 0, fmt.Errorf("seal: Ethernet header: %d bytes, need 14", len(frame))
	}
	et := binary.BigEndian.Uint16(frame[12:])
	off = 14
	for et == 0x8100 || et == 0x88A8 {
		if len(frame) < off+4 {
			return 0, 0, fmt.Errorf("seal: VLAN tag at byte %d cut short", off)
		}
		et = binary.BigEndian.Uint16(frame[off+2:])
		off += 4
	}
	return off, et, nil
}

func sealEtherType(frame []byte, off int, et uint16) error {
	switch et {
	case EtherTypeRoCEv1:
		if len(frame) < off+GRHLen {
			return fmt.Errorf("seal: GRH at byte %d cut short", off)
		}
		end := off + GRHLen + int(binary.BigEndian.Uint16(frame[off+4:]))
		if end > len(frame) || end < off+GRHLen+BTHLen+ICRCLen {
			return fmt.Errorf("seal: GRH payload length disagrees with the %d-byte frame", len(frame))
		}
		binary.LittleEndian.PutUint32(frame[end-ICRCLen:], ICRCRoCEv1(frame[off:end-ICRCLen]))
		return nil
	case 0x0800, 0x86DD:
		return sealRoCEv2(frame, off)
	}
	return fmt.Errorf("seal: ethertype 0x%04x (payload at byte %d) is not RoCE", et, off)
}

func sealRoCEv2(frame []byte, off int) error {
	ip := frame[off:]
	var ipLen int
	switch {
	case len(ip) >= 20 && ip[0]>>4 == 4 && ip[9] == 17:
		ipLen = int(ip[0]&0x0F) * 4
	case len(ip) >= 40 && ip[0]>>4 == 6 && ip[6] == 17:
		ipLen = 40
	default:
		return fmt.Errorf("seal: the IP header at byte %d does not carry UDP", off)
	}
	if len(ip) < ipLen+8 || binary.BigEndian.Uint16(ip[ipLen+2:]) != UDPPortRoCEv2 {
		return fmt.Errorf("seal: the UDP header at byte %d is cut short or not to port 4791", off+ipLen)
	}
	udp := ip[ipLen:]
	udpLen := int(binary.BigEndian.Uint16(udp[4:]))
	if udpLen > len(udp) || udpLen < 8+BTHLen+ICRCLen {
		return fmt.Errorf("seal: UDP length %d disagrees with the %d bytes after the IP header", udpLen, len(udp))
	}
	udp = udp[:udpLen]
	binary.LittleEndian.PutUint32(udp[udpLen-ICRCLen:], ICRCRoCEv2(ip[:ipLen], udp[:udpLen-ICRCLen]))
	if binary.BigEndian.Uint16(udp[6:]) != 0 {
		binary.BigEndian.PutUint16(udp[6:], udpChecksum(ip[:ipLen], udp))
	}
	return nil
}

// udpChecksum computes the UDP checksum of udp (header with any checksum
// value, and payload) under the IPv4 or IPv6 pseudo-header of ip.
func udpChecksum(ip, udp []byte) uint16 {
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	if ip[0]>>4 == 4 {
		add(ip[12:20])
	} else {
		add(ip[8:40])
	}
	sum += 17 + uint32(len(udp))
	add(udp[:6])
	add(udp[8:])
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	if c := ^uint16(sum); c != 0 {
		return c
	}
	return 0xFFFF // 0 means "no checksum" in UDP
}

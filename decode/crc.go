package decode

import (
	"encoding/binary"
	"hash/crc32"
)

// ICRC covers the invariant part of a transport packet: CRC-32 (the Ethernet
// polynomial) over the packet with the fields that switches and routers may
// change set to all 1s, stored least-significant byte first. The fields are:
//   - native IB: LRH.VL, or the whole LRH when a GRH follows it (checked on
//     real captures: with a GRH every LRH bit counts as variant);
//   - GRH: traffic class, flow label, hop limit;
//   - RoCEv2: an 8-byte all-ones pseudo-LRH, IPv4 TOS, TTL and header
//     checksum (IPv6: traffic class, flow label, hop limit), UDP checksum;
//   - RoCEv1: the all-ones pseudo-LRH, then the GRH as above;
//   - BTH resv8a (the byte holding FECN and BECN).
//
// VCRC covers LRH through ICRC: CRC-16 with polynomial 0x100B, in its
// reflected form 0xD008, seed 0xFFFF and final XOR 0xFFFF, stored
// least-significant byte first. The link packet's LPCRC is the same CRC over
// its first four bytes.

var pseudoLRH = [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// maskGRH writes the GRH's first 8 bytes with the variant fields set to 1s.
func maskGRH(dst, grh []byte) {
	copy(dst, grh[:8])
	dst[0] |= 0x0F // traffic class high nibble
	dst[1], dst[2], dst[3] = 0xFF, 0xFF, 0xFF
	dst[7] = 0xFF // hop limit
}

// crcGRH feeds a GRH (40 bytes) into crc with its variant fields masked.
func crcGRH(crc uint32, grh []byte) uint32 {
	var m [8]byte
	maskGRH(m[:], grh)
	crc = crc32.Update(crc, crc32.IEEETable, m[:])
	return crc32.Update(crc, crc32.IEEETable, grh[8:GRHLen])
}

// crcTransport feeds the BTH (resv8a masked) and everything after it up to the ICRC.
func crcTransport(crc uint32, bthToICRC []byte) uint32 {
	var m [BTHLen]byte
	copy(m[:], bthToICRC[:BTHLen])
	m[4] = 0xFF
	crc = crc32.Update(crc, crc32.IEEETable, m[:])
	return crc32.Update(crc, crc32.IEEETable, bthToICRC[BTHLen:])
}

// ICRCNative computes the ICRC of a native IB packet given from its LRH
// through the byte before the ICRC.
func ICRCNative(lrhToICRC []byte) uint32 {
	var l [LRHLen]byte
	copy(l[:], lrhToICRC[:LRHLen])
	grh := l[1]&3 == LNHGlobal
	if grh {
		l = pseudoLRH
	} else {
		l[0] |= 0xF0
	}
	crc := crc32.Update(0, crc32.IEEETable, l[:])
	rest := lrhToICRC[LRHLen:]
	if grh {
		crc = crcGRH(crc, rest)
		rest = rest[GRHLen:]
	}
	return crcTransport(crc, rest)
}

// ICRCRoCEv1 computes the ICRC of a RoCEv1 packet given from its GRH through
// the byte before the ICRC.
func ICRCRoCEv1(grhToICRC []byte) uint32 {
	crc := crc32.Update(0, crc32.IEEETable, pseudoLRH[:])
	crc = crcGRH(crc, grhToICRC)
	return crcTransport(crc, grhToICRC[GRHLen:])
}

// ICRCRoCEv2 computes the ICRC of a RoCEv2 packet: ip is the IPv4 or IPv6
// header (with options), udpToICRC the UDP header through the byte before the ICRC.
func ICRCRoCEv2(ip, udpToICRC []byte) uint32 {
	crc := crc32.Update(0, crc32.IEEETable, pseudoLRH[:])
	var m [60]byte
	n := copy(m[:], ip)
	if ip[0]>>4 == 4 {
		m[1] = 0xFF               // TOS (DSCP and ECN)
		m[8] = 0xFF               // TTL
		m[10], m[11] = 0xFF, 0xFF // header checksum
	} else {
		maskGRH(m[:], ip) // the IPv6 header's first 8 bytes match the GRH's
	}
	crc = crc32.Update(crc, crc32.IEEETable, m[:n])
	var u [8]byte
	copy(u[:], udpToICRC[:8])
	u[6], u[7] = 0xFF, 0xFF
	crc = crc32.Update(crc, crc32.IEEETable, u[:])
	return crcTransport(crc, udpToICRC[8:])
}

var vcrcTable = makeVCRCTable()

func makeVCRCTable() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}

// VCRC computes the variant CRC (and the link packet's LPCRC) over b.
func VCRC(b []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range b {
		c = c>>8 ^ vcrcTable[byte(c)^x]
	}
	return c ^ 0xFFFF
}

// SealNative fills in the ICRC and VCRC of a native IB packet built with the
// serializers: pkt runs from the LRH through the VCRC.
func SealNative(pkt []byte) {
	pktLen := int(binary.BigEndian.Uint16(pkt[4:])&0x7FF) * 4
	if pktLen < LRHLen+BTHLen+ICRCLen || pktLen+2 > len(pkt) {
		return
	}
	if pkt[1]&3 == LNHLocal || pkt[1]&3 == LNHGlobal {
		binary.LittleEndian.PutUint32(pkt[pktLen-ICRCLen:], ICRCNative(pkt[:pktLen-ICRCLen]))
	}
	binary.LittleEndian.PutUint16(pkt[pktLen:], VCRC(pkt[:pktLen]))
}

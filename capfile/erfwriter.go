package capfile

import (
	"encoding/binary"
	"fmt"

	"github.com/ibscope/ibscope/decode"
)

// ERFRecordMaxOverheadBytes is the most an ERF record adds to the packet it
// holds: the header, the Ethernet types' 2 bytes and padding to 8. A file
// of ERF records declares its packets' snap length plus this.
const ERFRecordMaxOverheadBytes = decode.ERFHeaderLen + 2 + 7

// erfRecordMaxBytes is the largest record: rlen and wlen are 16 bits.
const erfRecordMaxBytes = 0xFFFF

// ERFTypeFor is the record type for a packet of wireLenBytes: ERFTypeIBLink
// for a 6-byte link (flow-control) packet, else ERFTypeInfiniBand; with
// ethernet set, ERFTypeEthernet.
func ERFTypeFor(wireLenBytes int, ethernet bool) uint8 {
	switch {
	case ethernet:
		return decode.ERFTypeEthernet
	case wireLenBytes == decode.LinkFCPLen:
		return decode.ERFTypeIBLink
	}
	return decode.ERFTypeInfiniBand
}

// AppendERFRecord appends one ERF record, without extension headers, of
// erfType holding captured: the first bytes of a packet of wireLenBytes (for
// Ethernet types, wireLenBytes counts the FCS when captured ends with one).
// iface (0-3) goes in the interface bits of the flags; when captured is
// shorter than the packet (a snap length cut it), the truncated flag is set
// and wlen keeps the wire length. The record is padded to 8 bytes (rlen
// counts the padding), as DAG cards write it and Wireshark expects.
func AppendERFRecord(dst []byte, tsNs int64, erfType uint8, captured []byte, wireLenBytes int, iface uint8) ([]byte, error) {
	erfType &= 0x7F // the high bit would announce extension headers
	hdr := decode.ERFHeaderLen
	if decode.IsERFEthernet(erfType) {
		hdr += 2 // offset and pad bytes before the frame
	}
	rlen := hdr + len(captured)
	rlen += (8 - rlen%8) % 8
	if rlen > erfRecordMaxBytes || wireLenBytes > erfRecordMaxBytes {
		return dst, fmt.Errorf("%d-byte packet does not fit an ERF record (lengths are 16 bits)", max(wireLenBytes, len(captured)))
	}
	flags := iface & 3
	if len(captured) < wireLenBytes {
		flags |= decode.ERFFlagTruncated
	}
	dst = binary.LittleEndian.AppendUint64(dst, decode.NsToERFTime(tsNs))
	dst = append(dst, erfType, flags)
	dst = binary.BigEndian.AppendUint16(dst, uint16(rlen))
	dst = binary.BigEndian.AppendUint16(dst, 0) // loss counter
	dst = binary.BigEndian.AppendUint16(dst, uint16(max(wireLenBytes, len(captured))))
	if hdr > decode.ERFHeaderLen {
		dst = append(dst, 0, 0)
	}
	dst = append(dst, captured...)
	var pad [8]byte
	return append(dst, pad[:rlen-hdr-len(captured)]...), nil
}

// erfWireLenBytes is the wire length of the pcap or pcapng record holding an
// ERF record of recBytes: the whole record plus the part of the packet a
// snap length cut off.
func erfWireLenBytes(recBytes, capturedBytes, wireLenBytes int) int {
	return recBytes + max(wireLenBytes-capturedBytes, 0)
}

package capfile

import "encoding/binary"

// Classic pcap, as ibscope writes it: little-endian, version 2.4, no time
// zone; the magic says whether timestamps are in ns (magicNano) or us.
const pcapRecordHeaderBytes = 16

// AppendPcapFileHeader appends a pcap file header declaring linkType and
// snapLenBytes, with nanosecond timestamps, or microsecond ones (the magic
// tcpdump writes by default) when micro is set.
func AppendPcapFileHeader(dst []byte, linkType int, snapLenBytes uint32, micro bool) []byte {
	magic := uint32(magicNano)
	if micro {
		magic = magicMicro
	}
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, magic)
	dst = le.AppendUint16(dst, 2) // version 2.4
	dst = le.AppendUint16(dst, 4)
	dst = le.AppendUint32(dst, 0) // thiszone
	dst = le.AppendUint32(dst, 0) // sigfigs
	dst = le.AppendUint32(dst, snapLenBytes)
	return le.AppendUint32(dst, uint32(linkType))
}

// AppendPcapRecord appends one record holding data, captured at tsNs (ns
// since the Unix epoch; a microsecond file keeps whole us, truncated) from a
// packet of wireLenBytes on the wire (never less than data).
func AppendPcapRecord(dst []byte, tsNs int64, data []byte, wireLenBytes int, micro bool) []byte {
	sec, frac := tsNs/1e9, tsNs%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	if micro {
		frac /= 1000
	}
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, uint32(sec))
	dst = le.AppendUint32(dst, uint32(frac))
	dst = le.AppendUint32(dst, uint32(len(data)))
	dst = le.AppendUint32(dst, uint32(max(wireLenBytes, len(data))))
	return append(dst, data...)
}

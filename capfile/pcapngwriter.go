package capfile

import "encoding/binary"

// pcapng, as ibscope writes it: little-endian, one section of unknown
// length, interfaces whose timestamps are in ns (if_tsresol 9), packets in
// Enhanced Packet Blocks. Every block takes a list of options, so that what
// a file says about its capture (issue 11: shb_hardware, if_name, epb_flags
// ...) is one more NgOption, not another encoder.

// NgOption is one pcapng option: its code (which means something per block
// type) and its value, padded to 4 bytes when written.
type NgOption struct {
	Code  uint16
	Value []byte
}

// pcapng option codes, by block (pcapng spec, section 4).
const (
	NgOptComment       = 1  // opt_comment, any block
	NgOptSHBHardware   = 2  // shb_hardware
	NgOptSHBOS         = 3  // shb_os
	NgOptSHBUserAppl   = 4  // shb_userappl
	NgOptIfName        = 2  // if_name
	NgOptIfDescription = 3  // if_description
	NgOptIfSpeed       = 8  // if_speed: 64 bits, the interface's speed in bits per second
	NgOptIfFilter      = 11 // if_filter: a type byte (0: libpcap string) then the filter
	NgOptIfOS          = 12 // if_os
	NgOptIfHardware    = 15 // if_hardware
	NgOptEPBFlags      = 2  // epb_flags: 32 bits, direction in bits 0-1
	NgOptISBStartTime  = 2  // isb_starttime: timestamp, as in a packet block
	NgOptISBEndTime    = 3  // isb_endtime
	NgOptISBIfRecv     = 4  // isb_ifrecv: packets the interface received
	NgOptISBIfDrop     = 5  // isb_ifdrop: packets the interface dropped
	NgOptISBOSDrop     = 7  // isb_osdrop: packets the OS dropped
	NgOptISBUsrDeliv   = 8  // isb_usrdeliv: packets handed to the capturer
)

// ngBlockInterfaceStatistics is the Interface Statistics Block's type.
const ngBlockInterfaceStatistics = 5

// ngPacketBlockFixedBytes is an Enhanced Packet Block without its data and
// options: type, length, interface, timestamp, lengths and trailing length.
const ngPacketBlockFixedBytes = 32

// if_tsresol values ibscope writes: 10^-9 s (a packet block's timestamp
// is ns since the epoch) or, for --time-stamp-precision micro, 10^-6 s.
const (
	ngTsResolNanos  = 9
	ngTsResolMicros = 6
)

// NgString is an option holding a UTF-8 string.
func NgString(code uint16, s string) NgOption { return NgOption{Code: code, Value: []byte(s)} }

// NgUint32 is an option holding a 32-bit number (epb_flags).
func NgUint32(code uint16, v uint32) NgOption {
	return NgOption{Code: code, Value: binary.LittleEndian.AppendUint32(nil, v)}
}

// NgUint64 is an option holding a 64-bit number (isb_ifrecv ...).
func NgUint64(code uint16, v uint64) NgOption {
	return NgOption{Code: code, Value: binary.LittleEndian.AppendUint64(nil, v)}
}

// NgTimestamp is an option holding a timestamp in the interface's units,
// high 32 bits first as in a packet block (isb_starttime, isb_endtime).
func NgTimestamp(code uint16, ts uint64) NgOption {
	le := binary.LittleEndian
	return NgOption{Code: code, Value: le.AppendUint32(le.AppendUint32(nil, uint32(ts>>32)), uint32(ts))}
}

// ngCaptureHostPrefix starts the section header comment that names the
// host that captured: pcapng has no option for it, and a section's comments
// are what capinfos ("Capture comment") and Wireshark's Capture File
// Properties show.
const ngCaptureHostPrefix = "capture host: "

// NgCaptureHost is the section header comment naming host as the machine
// that captured (Reader.CaptureHost reads it back).
func NgCaptureHost(host string) NgOption {
	return NgString(NgOptComment, ngCaptureHostPrefix+host)
}

// NgFilter is an if_filter option holding a libpcap filter string.
func NgFilter(expr string) NgOption {
	return NgOption{Code: NgOptIfFilter, Value: append([]byte{0}, expr...)}
}

// ngOptionsBytes is the length of opts as written, end-of-options included.
func ngOptionsBytes(opts []NgOption) int {
	if len(opts) == 0 {
		return 0
	}
	n := 4 // opt_endofopt
	for _, o := range opts {
		n += 4 + pad4(len(o.Value))
	}
	return n
}

func pad4(n int) int { return n + (4-n%4)%4 }

func appendNgOptions(dst []byte, opts []NgOption) []byte {
	if len(opts) == 0 {
		return dst
	}
	le := binary.LittleEndian
	var zero [3]byte
	for _, o := range opts {
		dst = le.AppendUint16(dst, o.Code)
		dst = le.AppendUint16(dst, uint16(len(o.Value)))
		dst = append(dst, o.Value...)
		dst = append(dst, zero[:pad4(len(o.Value))-len(o.Value)]...)
	}
	return le.AppendUint32(dst, ngOptEnd)
}

// AppendNgSectionHeader appends a Section Header Block, version 1.0, of
// unknown length, with opts (shb_userappl, shb_hardware, shb_os ...).
func AppendNgSectionHeader(dst []byte, opts []NgOption) []byte {
	total := uint32(28 + ngOptionsBytes(opts))
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, ngBlockSection)
	dst = le.AppendUint32(dst, total)
	dst = le.AppendUint32(dst, ngByteOrderMagic)
	dst = le.AppendUint16(dst, 1) // version 1.0
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint64(dst, ^uint64(0)) // section length: not given
	dst = appendNgOptions(dst, opts)
	return le.AppendUint32(dst, total)
}

// AppendNgInterface appends an Interface Description Block of linkType and
// snapLenBytes with opts (if_name, if_description ...) and then if_tsresol
// 9: the interface's packet timestamps are in ns.
func AppendNgInterface(dst []byte, linkType int, snapLenBytes uint32, opts []NgOption) []byte {
	return appendNgInterfaceTsResol(dst, linkType, snapLenBytes, ngTsResolNanos, opts)
}

// appendNgInterfaceTsResol is AppendNgInterface with timestamps in units of
// 10^-tsResol s.
func appendNgInterfaceTsResol(dst []byte, linkType int, snapLenBytes uint32, tsResol uint8, opts []NgOption) []byte {
	opts = append(opts[:len(opts):len(opts)], NgOption{Code: ngOptTsResol, Value: []byte{tsResol}})
	total := uint32(20 + ngOptionsBytes(opts))
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, ngBlockInterface)
	dst = le.AppendUint32(dst, total)
	dst = le.AppendUint16(dst, uint16(linkType))
	dst = le.AppendUint16(dst, 0) // reserved
	dst = le.AppendUint32(dst, snapLenBytes)
	dst = appendNgOptions(dst, opts)
	return le.AppendUint32(dst, total)
}

// AppendNgInterfaceStatistics appends an Interface Statistics Block for
// interface iface, taken at ts (in the interface's if_tsresol units), with
// opts (isb_starttime, isb_ifdrop ...).
func AppendNgInterfaceStatistics(dst []byte, iface uint32, ts uint64, opts []NgOption) []byte {
	total := uint32(24 + ngOptionsBytes(opts))
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, ngBlockInterfaceStatistics)
	dst = le.AppendUint32(dst, total)
	dst = le.AppendUint32(dst, iface)
	dst = le.AppendUint32(dst, uint32(ts>>32))
	dst = le.AppendUint32(dst, uint32(ts))
	dst = appendNgOptions(dst, opts)
	return le.AppendUint32(dst, total)
}

// AppendNgPacket appends an Enhanced Packet Block holding data, captured at
// tsNs (since the epoch, in the units the interface's if_tsresol says) on interface
// iface (its index in the section) from a packet of wireLenBytes (never
// less than data), with opts (epb_flags ...).
func AppendNgPacket(dst []byte, iface uint32, tsNs int64, data []byte, wireLenBytes int, opts []NgOption) []byte {
	total := uint32(ngPacketBlockFixedBytes + pad4(len(data)) + ngOptionsBytes(opts))
	ts := uint64(tsNs)
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, ngBlockEnhancedPacket)
	dst = le.AppendUint32(dst, total)
	dst = le.AppendUint32(dst, iface)
	dst = le.AppendUint32(dst, uint32(ts>>32))
	dst = le.AppendUint32(dst, uint32(ts))
	dst = le.AppendUint32(dst, uint32(len(data)))
	dst = le.AppendUint32(dst, uint32(max(wireLenBytes, len(data))))
	dst = append(dst, data...)
	var zero [3]byte
	dst = append(dst, zero[:pad4(len(data))-len(data)]...)
	dst = appendNgOptions(dst, opts)
	return le.AppendUint32(dst, total)
}

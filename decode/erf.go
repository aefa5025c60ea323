package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ERF is an Endace Extensible Record Format record header, what a pcap of
// link type 197 holds per packet. Wireshark opens native InfiniBand in this
// form (ERF type 21 for packets, 25 for link packets), which is why ibscope
// writes it.
type ERF struct {
	layers.BaseLayer
	Timestamp uint64 // fixed point: seconds in the high 32 bits, binary fraction in the low
	Type      uint8  // record type, 7 bits (ERFTypeInfiniBand, ERFTypeIBLink, ERFTypeEthernet, ...)
	HasExt    bool   // extension headers follow the 16-byte header
	Flags     uint8  // bits 0-1: capture interface (ibscope: direction); 3: truncated; 4: rx error
	RLen      uint16 // record length in bytes, header included
	LCtr      uint16 // loss counter or colour
	WLen      uint16 // wire length of the packet in bytes
}

// ERF sizes and flags.
const (
	ERFHeaderLen     = 16
	ERFExtHeaderLen  = 8 // an extension header, announced by the type's high bit
	ERFFlagTruncated = 0x08
	ERFFlagRxError   = 0x10
)

// TimestampNs converts the ERF timestamp to ns since the Unix epoch, rounded.
func (e *ERF) TimestampNs() int64 { return ERFTimeToNs(e.Timestamp) }

// ERFTimeToNs converts an ERF fixed-point timestamp to ns since the epoch.
func ERFTimeToNs(ts uint64) int64 {
	return int64(ts>>32)*1e9 + int64((ts&0xFFFFFFFF*1e9+1<<31)>>32)
}

// NsToERFTime converts ns since the epoch to an ERF fixed-point timestamp.
func NsToERFTime(ns int64) uint64 {
	sec, frac := uint64(ns/1e9), uint64(ns%1e9)
	return sec<<32 | (frac<<32+5e8)/1e9
}

// Interface returns the capture interface bits (0-3).
func (e *ERF) Interface() uint8 { return e.Flags & 3 }

// LayerType returns LayerTypeERF.
func (e *ERF) LayerType() gopacket.LayerType { return LayerTypeERF }

// CanDecode returns LayerTypeERF.
func (e *ERF) CanDecode() gopacket.LayerClass { return LayerTypeERF }

// NextLayerType returns the LRH, link packet or Ethernet layer per the record type.
func (e *ERF) NextLayerType() gopacket.LayerType {
	switch e.Type {
	case ERFTypeInfiniBand:
		return LayerTypeLRH
	case ERFTypeIBLink:
		return LayerTypeLinkFCP
	}
	if IsERFEthernet(e.Type) {
		return layers.LayerTypeEthernet
	}
	return gopacket.LayerTypePayload
}

// IsERFEthernet reports the Ethernet record types, which put 2 bytes (offset
// and pad) before the frame: ETH (2), COLOR_ETH (11), DSM_COLOR_ETH (16) and
// COLOR_HASH_ETH (20), per wiretap/erf_record.h.
func IsERFEthernet(t uint8) bool { return t == 2 || t == 11 || t == 16 || t == 20 }

// DecodeFromBytes decodes the record header. The payload is the packet: wlen
// bytes, or fewer when the record was cut short (rlen includes padding to 8).
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ERFHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("ERF: %d bytes, need %d", len(data), ERFHeaderLen)
	}
	e.Timestamp = binary.LittleEndian.Uint64(data)
	e.Type = data[8] & 0x7F
	e.HasExt = data[8]&0x80 != 0
	e.Flags = data[9]
	e.RLen = binary.BigEndian.Uint16(data[10:])
	e.LCtr = binary.BigEndian.Uint16(data[12:])
	e.WLen = binary.BigEndian.Uint16(data[14:])
	off := ERFHeaderLen
	for more := e.HasExt; more; {
		if off+ERFExtHeaderLen > len(data) {
			df.SetTruncated()
			return fmt.Errorf("ERF: extension header at byte %d runs past the %d-byte record", off, len(data))
		}
		more = data[off]&0x80 != 0
		off += ERFExtHeaderLen
	}
	if IsERFEthernet(e.Type) {
		if off+2 > len(data) {
			df.SetTruncated()
			return fmt.Errorf("ERF: Ethernet record of %d bytes has no room for its 2-byte header", len(data))
		}
		off += 2
	}
	// The packet is wlen bytes (for Ethernet, with the FCS DAG cards keep),
	// or fewer when the record was cut; what follows is padding to 8 bytes.
	end := off + int(e.WLen)
	if end > len(data) {
		df.SetTruncated()
		end = len(data)
	}
	e.Contents, e.Payload = data[:off], data[off:end]
	return nil
}

// SerializeTo prepends a record header (no extension headers) to the packet
// already in b and pads the record to a multiple of 8 bytes. With FixLengths,
// WLen and RLen are set from the packet.
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	pkt := len(b.Bytes())
	hdr := ERFHeaderLen
	if IsERFEthernet(e.Type) {
		hdr += 2
	}
	if opts.FixLengths {
		e.WLen = uint16(pkt)
		pad := (8 - (hdr+pkt)%8) % 8
		if pad > 0 {
			p, err := b.AppendBytes(pad)
			if err != nil {
				return err
			}
			clear(p)
		}
		e.RLen = uint16(hdr + pkt + pad)
	}
	h, err := b.PrependBytes(hdr)
	if err != nil {
		return err
	}
	clear(h)
	binary.LittleEndian.PutUint64(h, e.Timestamp)
	h[8] = e.Type & 0x7F
	h[9] = e.Flags
	binary.BigEndian.PutUint16(h[10:], e.RLen)
	binary.BigEndian.PutUint16(h[12:], e.LCtr)
	binary.BigEndian.PutUint16(h[14:], e.WLen)
	return nil
}

func decodeERF(data []byte, p gopacket.PacketBuilder) error {
	e := &ERF{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	return p.NextDecoder(e.NextLayerType())
}

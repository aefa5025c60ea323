package capture

import "github.com/ibscope/ibscope/decode"

// Packet is one captured packet as a backend hands it over.
type Packet struct {
	// Data holds the captured bytes. It is only valid until the Source's
	// next call to Next, because backends hand out their ring memory.
	Data []byte
	// TsNs is the capture time in ns since the Unix epoch.
	TsNs int64
	// WireLenBytes is the packet's length on the wire in bytes; larger
	// than len(Data) when the snap length cut it.
	WireLenBytes int
	// Iface is the ERF interface number (0-3) the record carries; the
	// verbs backend uses it for the port direction when the device says.
	Iface uint8
	// Direction is which way the packet went, when the backend knows;
	// pcapng files keep it in epb_flags.
	Direction decode.Direction
}

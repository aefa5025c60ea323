package decode

// What a packet costs on the wire beyond its headers, for the analyses and
// the simulator that count wire time: Ethernet's FCS and gap, and the
// largest InfiniBand MTU.
const (
	// EthernetFCSLen is the Ethernet frame check sequence, which captures
	// usually leave out.
	EthernetFCSLen = 4
	// EthernetGapBytes is what an Ethernet frame costs on the wire beyond
	// its bytes through the FCS: the preamble and start delimiter (8) and
	// the inter-frame gap (12).
	EthernetGapBytes = 8 + 12
	// MaxMTUBytes is the largest InfiniBand path MTU.
	MaxMTUBytes = 4096
)

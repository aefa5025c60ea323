package decode

// What a packet costs on the wire beyond its IB headers, for the analyses
// and the simulator that count wire time: the headers RoCEv2 puts before
// the BTH, Ethernet's FCS and gap, and the largest InfiniBand MTU.
const (
	// EthernetHeaderLen is an Ethernet header without VLAN tags;
	// VLANTagLen is one 802.1Q tag.
	EthernetHeaderLen = 14
	VLANTagLen        = 4
	// IPv4HeaderLen is an IPv4 header without options; UDPHeaderLen the
	// UDP header.
	IPv4HeaderLen = 20
	UDPHeaderLen  = 8
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

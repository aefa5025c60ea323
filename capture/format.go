package capture

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Format is a capture file format.
type Format int

// Formats ibcap writes. Every one opens in Wireshark 4.0 except FormatIB247,
// which Wireshark 4.0 does not read (ibanalyze does).
const (
	// FormatAuto is FormatPcap for Ethernet sources and FormatERF for
	// native InfiniBand, unless the file's name says pcapng or raw ERF
	// (ForFile).
	FormatAuto Format = iota
	// FormatPcap is nanosecond pcap (magic 0xa1b23c4d). Native IB packets
	// go in ERF records, as with FormatERF, since that is what Wireshark opens.
	FormatPcap
	// FormatPcapNG is pcapng with if_tsresol 9 (ns); native IB packets go in
	// ERF records.
	FormatPcapNG
	// FormatERF ("erf-pcap"; "erf" is its old, deprecated name) is
	// nanosecond pcap of link type 197, one ERF record per packet: type 21
	// (InfiniBand) or 25 (InfiniBand link) for native IB, type 2 (Ethernet)
	// for RoCE frames. It is not what tshark -F erf writes: that is
	// FormatERFRaw.
	FormatERF
	// FormatIB247 is nanosecond pcap of LINKTYPE_INFINIBAND (247), LRH
	// first; native IB sources only.
	FormatIB247
	// FormatERFRaw ("erf-raw") is a raw ERF file, as Endace's tools and
	// tshark -F erf write: the records of FormatERF back to back, with no
	// pcap header.
	FormatERFRaw
)

var formatNames = [...]string{"auto", "pcap", "pcapng", "erf-pcap", "ib247", "erf-raw"}

// FormatERFOldName is FormatERF's old name, still taken: "erf" reads as
// tshark's raw ERF, which FormatERF is not.
const FormatERFOldName = "erf"

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// ParseFormat parses a format name.
func ParseFormat(s string) (Format, error) {
	if s == FormatERFOldName {
		return FormatERF, nil
	}
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q: pcap, pcapng, erf-pcap, erf-raw or ib247", s)
}

// ForFile is the format f means for a file named path: FormatAuto becomes
// FormatPcapNG for a *.pcapng file and FormatERFRaw for a *.erf file, as
// the extension promises (dumpcap and editcap read names the same way);
// every other format stays what it says.
func (f Format) ForFile(path string) Format {
	if f != FormatAuto {
		return f
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pcapng":
		return FormatPcapNG
	case ".erf":
		return FormatERFRaw
	}
	return FormatAuto
}

// newEncoder picks the encoding of the packets of wc.LinkType in
// wc.Format; capfile's Encoder writes the bytes.
func newEncoder(wc WriterConfig) (*capfile.Encoder, error) {
	f, srcLinkType := wc.Format, wc.LinkType
	native := srcLinkType == decode.LinkTypeInfiniBand
	if srcLinkType == decode.LinkTypeLinuxSLL2 {
		// -i any: the records go as they are, in pcap or pcapng.
		if f != FormatAuto && f != FormatPcap && f != FormatPcapNG {
			return nil, fmt.Errorf("writer: format %v has no place for the LINUX_SLL2 records of -i %s: use pcap or pcapng", f, AnyDevice)
		}
	} else if srcLinkType != decode.LinkTypeEthernet && !native {
		return nil, fmt.Errorf("writer: source link type %d is neither Ethernet (1) nor InfiniBand (247)", srcLinkType)
	}
	cfg := capfile.EncoderConfig{LinkType: srcLinkType, SnapLenBytes: wc.SnapLenBytes, Micro: wc.Micro,
		SectionOptions: wc.SectionOptions, InterfaceOptions: wc.InterfaceOptions}
	switch f {
	case FormatAuto, FormatPcap, FormatPcapNG:
		// Native IB goes in ERF records: what Wireshark opens.
		if native {
			cfg.LinkType = decode.LinkTypeERF
		}
		cfg.PcapNG = f == FormatPcapNG
	case FormatERF, FormatERFRaw:
		cfg.LinkType, cfg.ERFEthernet, cfg.RawERF = decode.LinkTypeERF, !native, f == FormatERFRaw
	case FormatIB247:
		if !native {
			return nil, fmt.Errorf("writer: format ib247 holds native InfiniBand packets; this device gives Ethernet (RoCE) frames: use pcap, pcapng, erf-pcap or erf-raw")
		}
	default:
		return nil, fmt.Errorf("writer: unknown format %v", f)
	}
	enc, err := capfile.NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("writer: %w", err)
	}
	return enc, nil
}

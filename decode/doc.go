// Package decode owns the InfiniBand and RoCE wire formats: one gopacket layer
// per header (LRH, GRH, BTH and every extended transport header, link-level
// flow-control packets, ERF records, and the congestion signals RoCE answers:
// PFC and PAUSE frames, IFA probes), the ICRC/VCRC/LPCRC checks, the capture
// file readers for every link type ibscope supports, and a zero-allocation
// fast path (Decoder, Frame) that analyses use.
//
// Ways in:
//   - Reader (Open, NewReader) + Decoder fill a reused Frame per packet,
//     allocating nothing, from pcap, pcapng or raw ERF (told apart by
//     content, possibly compressed); this is what ibanalyze uses. A Decoder keeps scratch
//     space, so one serves one goroutine at a time (copies are independent).
//   - Stream (OpenStream, NewStream) is the one way every command reads its
//     input: several captures ("-" for standard input) merged in time order,
//     a file given twice refused, frames without time or that could not be
//     decoded counted and told (or handed out when asked), damaged files
//     told with file, frame and byte offset while the others are read on.
//   - The layer types (LayerTypeLRH, LayerTypeBTH, ...) are registered with
//     gopacket, so gopacket.NewPacket decodes RoCEv2 (UDP port 4791), RoCEv1
//     (ethertype 0x8915), LINKTYPE_INFINIBAND (247) and ERF (197) down to the
//     extended transport headers, PFC and PAUSE (ethertype 0x8808) and IFA 2.0
//     (IP protocol 253), and every layer serializes for building packets.
//   - Building captures: SealNative, SealRoCE and SealFrame fill in the CRCs of
//     packets built with the serializers. Encoder is the one writer of capture
//     files: pcap (ns or us; AppendPcapFileHeader, AppendPcapRecord), pcapng
//     (AppendNgSectionHeader, AppendNgInterface, AppendNgPacket,
//     AppendNgInterfaceStatistics, each with a list of options: the
//     section's and interface's descriptions, epb_flags' Direction, an
//     InterfaceStats' drops), ERF records (AppendERFRecord: types 21, 25 and
//     2, the truncated flag when a snap length cut the packet) in a pcap or
//     back to back as a raw ERF file; ibcap, ibsim's taps and the test
//     captures all write through it. PcapWriter streams a file with it
//     (NewPcapWriter: nanosecond pcap of Ethernet, ERF records for native IB,
//     or link type 247; NewPcapWriterConfig: any EncoderConfig).
//   - Opcode names, families and the headers each opcode implies (Opcode.Headers)
//     come from one table, used for decoding, printing, JSON and parsing
//     (ParseOpcode, ParseOpcodes) alike.
//   - InfiniBand link rates (LinkRate: SDR to XDR, their encodings, data
//     rates and symbol times) and widths come from one table too.
//
// The CRC checks (crc.go) fold 16 bytes per carry-less multiplication on
// amd64, 32 where the CPU has VPCLMULQDQ (crcfold*.go); other architectures
// and the purego build tag use hash/crc32 and slicing tables. Both ways are
// tested against bitwise CRCs.
//
// The package imports nothing else from ibscope.
package decode

// Package decode owns the InfiniBand and RoCE wire formats: one gopacket layer
// per header (LRH, GRH, BTH and every extended transport header, link-level
// flow-control packets, ERF records, and the congestion signals RoCE answers:
// PFC and PAUSE frames, IFA probes), Mellanox DC's headers (the RD family is
// read as DC, dc.go), management datagrams (the MAD header, and the SMP, SA,
// PerfMgt and CM layouts as field tables), the ICRC/VCRC/LPCRC checks, and a
// zero-allocation fast path (Decoder, Frame) for every link type ibscope
// supports. It keeps the wire and nothing else: the capture files that hold
// the packets are capfile's, the state analyses keep across packets
// (PSN sequences, pause timers, link rates) protostate's.
//
// Ways in:
//   - Decoder fills a reused Frame per packet of a link type, allocating
//     nothing; capfile.Reader runs one over each record of a file. A
//     Decoder keeps scratch space, so one serves one goroutine at a time
//     (copies are independent).
//   - The layer types (LayerTypeLRH, LayerTypeBTH, ...) are registered with
//     gopacket, so gopacket.NewPacket decodes RoCEv2 (UDP port 4791), RoCEv1
//     (ethertype 0x8915), LINKTYPE_INFINIBAND (247) and ERF (197) down to the
//     extended transport headers, PFC and PAUSE (ethertype 0x8808) and IFA 2.0
//     (IP protocol 253), and every layer serializes for building packets.
//   - Building packets: SealNative, SealRoCE and SealFrame fill in the CRCs
//     of packets built with the serializers (capfile writes them to files).
//   - Each header writes its own share of the per-frame outputs beside its
//     layer (fields.go): its decode JSON keys (Frame.AppendJSON), its words
//     in the summary line (Frame.AppendSummary) and its columns of the
//     per-frame table ibanalyze export writes (ColumnGroups).
//   - Opcode names, families and the headers each opcode implies (Opcode.Headers)
//     come from one table, used for decoding, printing, JSON and parsing
//     (ParseOpcode, ParseOpcodes) alike.
//
// The CRC checks (crc.go) fold 16 bytes per carry-less multiplication on
// amd64, 32 where the CPU has VPCLMULQDQ (crcfold*.go); other architectures
// and the purego build tag use hash/crc32 and slicing tables. Both ways are
// tested against bitwise CRCs.
//
// The package imports nothing else from ibscope.
package decode

// Package decode owns the InfiniBand and RoCE wire formats: one gopacket layer
// per header (LRH, GRH, BTH and every extended transport header, link-level
// flow-control packets, ERF records), the ICRC/VCRC/LPCRC checks, the capture
// file readers for every link type ibscope supports, and a zero-allocation
// fast path (Decoder, Frame) that analyses use.
//
// Two ways in:
//   - Reader + Decoder fill a reused Frame per packet, allocating nothing; this
//     is what ibanalyze uses.
//   - The layer types (LayerTypeLRH, LayerTypeBTH, ...) are registered with
//     gopacket, so gopacket.NewPacket decodes RoCEv2 (UDP port 4791), RoCEv1
//     (ethertype 0x8915), LINKTYPE_INFINIBAND (247) and ERF (197) down to the
//     extended transport headers, and every layer serializes for building packets.
//
// The package imports nothing else from ibscope.
package decode

// Package protostate owns the protocol state the analyses share, kept
// apart from decode's stateless headers as gvisor keeps its stack apart from
// its header package: PSN sequence trackers per queue pair (QPSequences,
// RequestPSNs, ResponsePSNs: gaps, losses, duplicates, late arrivals),
// the pause timer a PFC or PAUSE frame starts on one priority (PauseTimer),
// and the InfiniBand link-rate table (LinkRate: SDR to XDR, their encodings,
// data rates and symbol times) with the link widths, which turn pause quanta
// and credits into time. analyze, correlate, metrics and sim use it; it
// imports decode only.
package protostate

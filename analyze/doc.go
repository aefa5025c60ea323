// Package analyze owns the streaming analyses over decoded packets: IPD
// (inter-packet delay) histograms and their phases, per-flow health (PSN
// gaps, duplicates, NAKs, CNP/ECN, CRC failures, ACK latency), the
// sender-versus-receiver comparison, credit accounting, and buffer and tick
// estimates. It also holds what those analyses share: InfiniBand link rates
// and symbol times, bounded-memory quantile sketches, and reading several
// capture files as one time-ordered stream.
//
// Every analysis here is streaming: its memory grows with the number of
// flows, bins and phases, never with the number of packets.
package analyze

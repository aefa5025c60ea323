// Package analyze owns the streaming analyses over decoded packets: IPD
// (inter-packet delay) histograms and their phases, per-flow health (PSN
// gaps, duplicates, NAKs, CNP/ECN, CRC failures, ACK latency), the
// sender-versus-receiver comparison, credit accounting, and buffer and tick
// estimates. It also holds what those analyses share: the expected IPD of a
// link (its rates and symbol times are decode.LinkRate), bounded-memory
// quantile sketches, and reading several capture files as one time-ordered
// stream.
//
// The IPD, flow-health and credit analyses stream: their memory grows with
// the number of flows, bins and phases, never with the number of packets
// (IPD: about 430 bytes a flow, up to IPDConfig.MaxFlows; flow health:
// about 550, up to FlowsOptions.MaxFlows; credits: one
// state and a downsampled series per link direction and VL). Two do not:
// Tick keeps 16 bytes of each native IB data packet it reads, and Buffer
// up to about 80 bytes of each data packet of the sender captures (16 as
// read, then its match and two occupancy steps); both stop with
// ErrTooManyPackets past a bound in packets (DefaultMaxPackets unless the
// caller says). RunCompare keeps, besides both sides' IPD state (bounded
// by IPDConfig.MaxFlows), every packet inside the match window (at most
// MaxMatchWindowNs), and builds its report whole.
package analyze

// Package analyze owns the streaming analyses over decoded packets: IPD
// (inter-packet delay) histograms and their phases, per-flow health (PSN
// gaps, duplicates, NAKs, CNP/ECN, CRC failures, ACK latency), the
// sender-versus-receiver comparison, credit accounting, and buffer and tick
// estimates. It also holds what those analyses share: the expected IPD of a
// link (its rates and symbol times are protostate.LinkRate), bounded-memory
// quantile sketches, and the packets of a capfile.Stream as a Stream of
// Packets put back in time order within a bounded window.
//
// Every analysis has one shape (Analysis: Add a packet, Err, Report) and
// one driver, Run, which feeds it a Stream; what the command reads
// (standard input, several files, a rotated set) is the stream's business.
// Report is the report so far and changes nothing, so Run can also hand
// out reports on the way, every so much packet time (RunOptions.EveryNs).
// runBuffer takes two streams, the senders' (Packet.File tells them apart)
// and then the receiver's.
//
// The IPD, flow-health and credit analyses stream: their memory grows with
// the number of flows, bins and phases, never with the number of packets
// (IPD: about 270 bytes a flow, up to IPDOptions.MaxFlows; flow health:
// about 280, up to FlowsOptions.MaxFlows; credits: one
// state and a downsampled series per link direction and VL). Two do not:
// runTick keeps 16 bytes of each native IB data packet it reads, and Buffer
// up to about 80 bytes of each data packet of the sender captures (16 as
// read, then its match and two occupancy steps); both stop with
// ErrTooManyPackets past a bound in packets (DefaultMaxPackets unless the
// caller says). RunCompare keeps, besides both sides' IPD state (bounded
// by IPDOptions.MaxFlows), every packet inside the match window (at most
// MaxMatchWindowNs), and builds its report whole.
package analyze

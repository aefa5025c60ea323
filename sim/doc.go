// Package sim owns ibscope's link-level simulator: a deterministic
// discrete-event model of InfiniBand hosts, input-queued switches and links
// with credit-based flow control (FCTBS/FCCL flow-control packets, per-VL
// receive buffers, VL arbitration), RC RDMA WRITE and SEND traffic segmented
// by MTU with ACKs, and a PortXmitWait counter per port that ticks with a
// configurable tick length.
//
// A run writes what a real measurement would give (ERF captures of data and
// flow-control packets at chosen ports, perfquery-style telemetry at a
// period) and, next to it, the ground truth the analyses in package analyze
// are checked against: buffer sizes, the tick, congestion intervals and
// per-packet queueing delay.
//
// Scenarios come from a small YAML or JSON file (unknown keys and impossible
// values are refused with the key named) or from presets such as
// "incast2015", the two-sender SDR incast of the 2015 study.
//
// Time inside the simulator is int64 picoseconds from the start of the run,
// so that serialisation at HDR and NDR rates does not round; everything the
// simulator writes out is int64 nanoseconds since the Unix epoch.
package sim

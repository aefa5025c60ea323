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
// The model, and what it leaves out:
//   - A link carries one frame at a time per direction, at the data rate of
//     its speed and width, plus a propagation delay. Taps stamp a frame when
//     its first byte passes.
//   - Receive buffers are per VL, in 64-byte blocks. A switch splits each
//     input port's buffer statically among its VLs, stores a packet whole
//     before forwarding it (store-and-forward), queues it FIFO per input VL
//     (so head-of-line blocking is real), and frees its blocks when its last
//     byte has left the output port. Hosts drain their buffers at once.
//   - Flow control: every port sends an Init FCP per VL at link-up, an FCP
//     per VL every FCP period (65,536 symbol times unless set), and one
//     whenever it frees buffer (optionally after a random credit jitter).
//     A sender transmits a packet only if it fits under the last FCCL
//     (IBA 7.9.4, mod 4096); FCPs go before data.
//   - Arbitration: host ports and switch outputs serve VLs round-robin,
//     a packet per turn; a switch output serves the input ports round-robin
//     within a VL.
//   - PortXmitWait counts ticks wholly inside the intervals when a port had
//     a packet queued and no credit to send it (FCPs are not data). Ticks
//     run on a grid with a random per-port phase.
//   - RC only, without loss or retransmission; ACKs on the last packet of
//     each message (or every N packets), coalescing nothing else. No
//     congestion control (FECN/BECN, CNPs), no link errors.
//
// Time inside the simulator is int64 picoseconds from the start of the run,
// so that serialisation at HDR and NDR rates does not round; everything the
// simulator writes out is int64 nanoseconds since the Unix epoch.
package sim

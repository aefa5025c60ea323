// Package sim owns ibscope's link-level simulator: a deterministic
// discrete-event model of InfiniBand hosts, input-queued switches and links
// with credit-based flow control and a PortXmitWait counter per port, or of
// the same on lossless Ethernet (RoCEv2 frames, PFC at switch inputs, IFA
// 2.0 probes the switches stamp); the scenarios that describe a run
// (LoadScenario, presets such as "incast2015" and "incast2015-roce"), and
// its outputs: ERF captures at chosen ports, perfquery-style telemetry, and
// the ground truth (buffer sizes, the tick, congestion intervals, queueing
// delays, pauses, per-hop residence) the analyses are checked against.
//
// docs/sim.md describes the model (links, buffers, flow control,
// arbitration, PortXmitWait, traffic), what it leaves out, and its clock:
// picoseconds inside, nanoseconds since the Unix epoch in what it writes.
package sim

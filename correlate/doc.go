// Package correlate owns ibscope's tabular output: the Arrow IPC and Parquet
// writers (written under a temporary name and renamed when complete), the
// per-packet table that `ibanalyze export` writes, and the join of capture
// and NIC telemetry on one time axis that `ibanalyze correlate` writes.
//
// # Per-packet table (Export)
//
// One row per frame with the fields of the decode JSON contract
// (decode.Frame.AppendJSON), nested headers flattened (reth_va, aeth_msn,
// link_fctbs, ...), absent headers null; transport and opcode_name are
// dictionary-encoded. With PartitionBy the output is a Hive-style dataset
// (KEY=VALUE directories) that Spark, Trino and DuckDB query across hosts.
//
// # Joined table (Correlate)
//
// One row per telemetry sample and source, covering [start_ns, end_ns) from
// the previous sample's time to this one's on the capture's clock (or one row
// per fixed window): sample_id, start_ns, end_ns, source (DEVICE/PORT, or
// the telemetry file's name when the file does not say), clock,
// lost_samples, delta_flags, coverage and partial (how much of the interval
// the capture covers); per counter NAME (raw reading), NAME_delta (increase,
// in the counter's unit) and NAME_rate (per second, in its base unit, e.g.
// bytes/s for 4-byte-word counters), with the unit as field metadata; and
// what the capture shows in the interval: cap_packets, cap_bytes,
// cap_data_bytes, cap_ecn_ce, cap_cnps, cap_naks, cap_retransmissions,
// cap_ipd_p50_ns, cap_ipd_p99_ns, again as cap_tx_* and cap_rx_* for what the
// NIC sent and received. A packet belongs to the interval holding its
// timestamp. The clock offset is given, or estimated per series by
// cross-correlating the capture's byte rate with the byte counters
// (OffsetEstimate); telemetry that does not overlap the capture is refused.
//
// Every timestamp column is timestamp[ns, UTC]; counters are uint64; rates
// are float64 per second; zstd compression throughout. Memory is bounded:
// rows are appended to column builders and flushed as one record batch (and
// one Parquet row group) per BatchRows rows, written on a second goroutine.
//
// # Speed
//
// Export decodes and appends each frame to plain slices (one validity bitmap
// per header, shared by the header's columns) that are reused from batch to
// batch: a record batch wraps them without copying and hands them back once
// written. The address columns travel as indices into the batch's distinct
// addresses, which Parquet stores as its dictionary page and indices with no
// string hashed per row (Arrow IPC files get them back as strings: the
// schema says string either way). Parquet row groups are written with the
// columns encoded and compressed on GOMAXPROCS goroutines while the next
// batch is decoded; counters that step by small amounts (timestamps, frame,
// psn, aeth_msn, sample_id) are DELTA_BINARY_PACKED, and columns null
// throughout a row group cost only their definition levels.
package correlate

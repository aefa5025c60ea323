// Package correlate owns ibscope's tabular output: the Arrow IPC and Parquet
// writers (written under a temporary name and renamed when complete), the
// per-packet table that `ibanalyze export` writes (one row per frame, the
// columns of the decode JSON contract, optionally as a Hive-partitioned
// dataset), and the join of capture and NIC telemetry on one time axis that
// `ibanalyze correlate` writes: the clock offset between them (given or
// estimated by cross-correlating byte rates), the telemetry intervals or fixed
// windows, and per interval the counters' values, deltas and rates next to
// what the capture shows.
//
// Every timestamp column is timestamp[ns, UTC]; counters are uint64; rates
// are float64 per second. Memory is bounded: packets are appended to column
// builders and flushed as one record batch (and one Parquet row group) per
// BatchRows rows.
package correlate

// Package correlate owns ibscope's tabular output: the Arrow IPC and Parquet
// writers (TableWriter: written under a temporary name and renamed when
// complete), the per-packet table that `ibanalyze export` writes (Export,
// optionally as a partitioned dataset), and the join of capture and NIC
// telemetry on one time axis that `ibanalyze correlate` writes (Correlate,
// with the clock offset given or estimated).
//
// docs/correlate.md lists both tables' columns, how intervals, offsets and
// windows are chosen, and how the writing is made fast.
package correlate

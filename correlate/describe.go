package correlate

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// descriptionKey is the Arrow field metadata key that holds a column's
// short description. pqarrow keeps field metadata in the Parquet file's
// ARROW:schema, so pyarrow, pandas (df.attrs via pyarrow) and Arrow JS show
// it, as they do for Arrow IPC files.
const descriptionKey = "description"

// columnDescriptions says what each fixed column holds, with its unit (the
// per-packet table's header columns say it in decode: decode.Column.Doc).
var columnDescriptions = map[string]string{
	// Per-packet table: the frame's own columns.
	"frame":     "1-based frame number in its capture file (see file)",
	"ts_ns":     "capture time, ns since the Unix epoch, UTC (timestamp without zone so that readers keep the ns)",
	"len":       "frame length on the wire, bytes",
	"cap_len":   "bytes of the frame the capture kept (below len when the snap length cut it)",
	"iface":     "interface number the capture file records (ERF interface bits, Linux cooked packet type); null if none",
	"direction": "tx or rx as seen from the tapped port (pcapng epb_flags, Linux cooked packet type, ERF interface 0/1); null when the file does not say",
	"file":      "name of the capture file the frame came from",
	"transport": "ib, rocev1, rocev2 or link; null for other frames",
	"error":     "why the frame could not be fully decoded; null when it was",

	// Joined table.
	"sample_id":    "telemetry sample_id closing the interval; null for --window rows",
	"start_ns":     "interval start, ns since the Unix epoch on the capture's clock",
	"end_ns":       "interval end (exclusive), ns since the Unix epoch on the capture's clock",
	"source":       "telemetry series: DEVICE/PORT, or the file name",
	"clock":        "the telemetry's clock: host, nic_frc, nic_rtc or none",
	"lost_samples": "sample_ids skipped just before this sample",
	"delta_flags":  "how far to trust the deltas (wrapped, reset, saturated, gap, missing, no_prev, no_time, interpolated); null when all is well",
	"coverage":     "fraction of the interval inside the capture's time range",
	"partial":      "the interval overlaps the capture only partly",
}

// captureMetricDescriptions describe the capture statistics of the joined
// table, per interval; the cap_tx_ and cap_rx_ columns count only frames
// sent or received.
var captureMetricDescriptions = map[string]string{
	"packets":         "frames captured in the interval",
	"bytes":           "bytes on the wire of the frames captured in the interval",
	"data_bytes":      "message payload bytes of data-carrying opcodes in the interval",
	"ecn_ce":          "RoCE packets with ECN CE and native IB packets with FECN in the interval",
	"cnps":            "congestion notification packets in the interval",
	"naks":            "ACKs whose AETH says NAK (RNR NAKs not included) in the interval",
	"retransmissions": "packets whose PSN their QP direction had sent before, in the interval",
	"ipd_p50_ns":      "median inter-packet delay in the interval, ns",
	"ipd_p99_ns":      "99th percentile inter-packet delay in the interval, ns",
}

// describe returns fields with their descriptions added to their metadata.
func describe(fields []arrow.Field) []arrow.Field {
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		out[i] = f
		d := describeColumn(f.Name)
		if d == "" || f.Metadata.FindKey(descriptionKey) >= 0 {
			continue
		}
		keys, vals := append(f.Metadata.Keys(), descriptionKey), append(f.Metadata.Values(), d)
		out[i].Metadata = arrow.NewMetadata(keys, vals)
	}
	return out
}

func describeColumn(name string) string {
	if d, ok := columnDescriptions[name]; ok {
		return d
	}
	for s, p := range slotPrefix {
		m, ok := strings.CutPrefix(name, p)
		if !ok || captureMetricDescriptions[m] == "" { // cap_ also prefixes cap_tx_...: m is then tx_...
			continue
		}
		switch s {
		case slotTx:
			return captureMetricDescriptions[m] + ", of frames the NIC sent (null when the capture does not say)"
		case slotRx:
			return captureMetricDescriptions[m] + ", of frames the NIC received (null when the capture does not say)"
		}
		return captureMetricDescriptions[m]
	}
	return ""
}

package correlate

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ibscope/ibscope/decode"
)

// descriptionKey is the Arrow field metadata key that holds a column's
// short description. pqarrow keeps field metadata in the Parquet file's
// ARROW:schema, so pyarrow, pandas (df.attrs via pyarrow) and Arrow JS show
// it, as they do for Arrow IPC files.
const descriptionKey = "description"

// columnDescriptions says what each fixed column holds, with its unit.
var columnDescriptions = map[string]string{
	// Per-packet table.
	"frame":                        "1-based frame number in its capture file (see file)",
	"ts_ns":                        "capture time, ns since the Unix epoch, UTC (timestamp without zone so that readers keep the ns)",
	"len":                          "frame length on the wire, bytes",
	"cap_len":                      "bytes of the frame the capture kept (below len when the snap length cut it)",
	"iface":                        "interface number the capture file records (ERF interface bits, Linux cooked packet type); null if none",
	"direction":                    "tx or rx as seen from the tapped port (pcapng epb_flags, Linux cooked packet type, ERF interface 0/1); null when the file does not say",
	"file":                         "name of the capture file the frame came from",
	"transport":                    "ib, rocev1, rocev2 or link; null for other frames",
	"slid":                         "LRH source LID (native IB)",
	"dlid":                         "LRH destination LID (native IB)",
	"sl":                           "LRH service level",
	"vl":                           "LRH virtual lane",
	"src":                          "IP source address (RoCEv2)",
	"dst":                          "IP destination address (RoCEv2)",
	"ecn":                          "IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE",
	"sgid":                         "GRH source GID",
	"dgid":                         "GRH destination GID",
	"opcode":                       "BTH opcode",
	"opcode_name":                  "BTH opcode name",
	"dest_qp":                      "BTH destination QP (24 bits)",
	"psn":                          "BTH packet sequence number (24 bits)",
	"ack_req":                      "BTH AckReq bit",
	"fecn":                         "BTH FECN bit",
	"becn":                         "BTH BECN bit",
	"solicited":                    "BTH solicited-event bit",
	"pkey":                         "BTH partition key",
	"pad":                          "BTH pad count, bytes",
	"rdeth_ee_cnxt":                "RDETH EE context",
	"xrceth_xrc_srq":               "XRCETH XRC SRQ",
	"reth_va":                      "RETH virtual address",
	"reth_rkey":                    "RETH remote key",
	"reth_dma_len":                 "RETH DMA length, bytes",
	"aeth_syndrome":                "AETH syndrome",
	"aeth_msn":                     "AETH message sequence number (24 bits)",
	"deth_qkey":                    "DETH queue key",
	"deth_src_qp":                  "DETH source QP (24 bits)",
	"atomic_eth_va":                "AtomicETH virtual address",
	"atomic_eth_rkey":              "AtomicETH remote key",
	"atomic_eth_swap_add":          "AtomicETH swap or add data",
	"atomic_eth_compare":           "AtomicETH compare data",
	"atomic_ack_eth_orig_rem_data": "AtomicAckETH original remote data",
	"imm":                          "immediate data",
	"ieth":                         "IETH invalidated remote key",
	"icrc_ok":                      "ICRC verified correct; null when not checked or absent",
	"vcrc_ok":                      "VCRC verified correct; null when not checked or absent",
	"link_op":                      "link (flow control) packet op",
	"link_fctbs":                   "link packet FCTBS, 64-byte blocks mod 4096",
	"link_vl":                      "link packet VL",
	"link_fccl":                    "link packet FCCL, 64-byte blocks mod 4096",
	"link_lpcrc_ok":                "link packet LPCRC verified correct",
	"pfc_opcode":                   "PFC MAC control opcode (0x0101); null for frames that are not PFC",
	"pfc_class_enable":             "PFC priority-enable vector: bit N set means pfc_quanta_N applies to priority N",
	"pause_quanta":                 "802.3x PAUSE time, quanta of 512 bit times (0 resumes); null for frames that are not PAUSE",
	"ifa_version":                  "IFA 2.0 header version (2); null for frames without IFA",
	"ifa_gns":                      "IFA global namespace (15: each hop's LNS decides)",
	"ifa_next_hdr":                 "IFA next header: the IP protocol the IFA header displaced (17 UDP)",
	"ifa_flags":                    "IFA flags: 0x10 MF, 0x08 TS, 0x04 I, 0x02 TA, 0x01 C",
	"ifa_max_len":                  "IFA maximum metadata length, 4-byte words",
	"ifa_request_vector":           "IFA metadata header request vector",
	"ifa_action_vector":            "IFA metadata header action vector (bit 7 loss, bit 6 color)",
	"ifa_hop_limit":                "IFA hops that may still insert metadata",
	"ifa_cur_len":                  "IFA metadata stack length, 4-byte words",
	"ifa1_probe_marker":            "IFA 1.0 probe marker (the operator's two 32-bit markers); null for frames without IFA 1.0",
	"ifa1_version":                 "IFA 1.0 version",
	"ifa1_msg_type":                "IFA 1.0 message type",
	"ifa1_flags":                   "IFA 1.0 flags",
	"ifa1_request_vector":          "IFA 1.0 request vector",
	"ifa1_action_vector":           "IFA 1.0 action vector",
	"ifa1_hop_limit":               "IFA 1.0 hop limit: the most hops that may stamp the probe",
	"ifa1_hop_count":               "IFA 1.0 hop count: the hops that have stamped it",
	"ifa1_max_len":                 "IFA 1.0 maximum metadata length",
	"ifa1_cur_len":                 "IFA 1.0 current metadata length",
	"ifa1_sender_handle":           "IFA 1.0 sender handle",
	"ifa1_seq":                     "IFA 1.0 sequence number",
	"error":                        "why the frame could not be fully decoded; null when it was",

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
	if d, ok := madDescriptions[name]; ok {
		return d
	}
	if p, ok := strings.CutPrefix(name, "pfc_quanta_"); ok && len(p) == 1 && p[0] >= '0' && p[0] < '0'+decode.PFCPriorities {
		return "PFC pause time of priority " + p + ", quanta of 512 bit times (0 resumes); null for frames that are not PFC"
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

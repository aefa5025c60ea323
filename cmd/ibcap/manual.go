package main

import (
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/cmddoc"
)

// manual is what ibcap's man page says beyond its flags (make man).
var manual = cmddoc.Manual{
	ExitStatus: []cmddoc.Item{
		{Tag: "0", Text: "The capture ended as asked (-c, --duration, SIGINT or SIGTERM, or the reader of -w - went away) and its file is written; -r read its file to the end; or -D, -J, -L listed what was asked."},
		{Tag: "1", Text: "Something went wrong, said on standard error: a flag or filter refused, a device not found or not capturable, a file that could not be written, the interface deleted during the capture (what was captured until then is written); or -D listed RDMA devices that cannot be captured here (libibverbs missing), saying so."},
	},
	Environment: []cmddoc.Item{
		{Tag: capture.EnvSysfs, Text: "A directory read in place of /sys, shaped like it: RDMA devices, their ports and their counters under class/infiniband (-D, -i, --telemetry, --metrics). Tests point it at a fake tree."},
		{Tag: capture.EnvLibibverbs, Text: "The libibverbs the verbs sniffer loads instead of libibverbs.so.1: a file, or a name dlopen(3) looks up. Tests point it at a test double."},
		{Tag: capture.EnvLibpcap, Text: "The libpcap that compiles filter expressions instead of libpcap.so.0.8 or libpcap.so.1: a file, or a name dlopen(3) looks up. It is loaded only when an expression is given."},
	},
	SeeAlso: map[string][]string{
		"ibcap": {"ibanalyze(1)", "ibsim(1)", "tcpdump(8)", "dumpcap(1)", "tshark(1)", "wireshark(1)", "pcap-filter(7)", "ibv_devices(1)"},
	},
}

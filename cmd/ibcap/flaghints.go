package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/internal/flaghint"
)

// Flags of tcpdump and ibdump that ibcap does not take answer "unknown
// flag" with what ibcap does instead, so that a user coming from either
// is not left guessing. The flags ibcap maps or refuses itself (ibdump's
// -o, -b, --mem-mode, --writer-thread, --silent, -d; tcpdump's -r, -L,
// -y, -Q, -p, -n, -l, -F, -z) are its own flags (ibdump.go, main.go).

// unknownLongHints are said after "unknown flag: --NAME".
var unknownLongHints = map[string]string{
	"ib-dev":    "ibdump's --ib-dev is -d DEVICE (or -i DEVICE)",
	"ib-port":   "ibdump's --ib-port is --port N (or -i DEVICE:N)",
	"decap":     "ibdump's --decap: ibcap does not strip port-mirroring (RSPAN) headers; it writes frames as they arrive",
	"erf":       "ibdump's --erf: native InfiniBand is always written in ERF records (or -y INFINIBAND), RoCE as Ethernet, or in ERF records with --format erf-pcap",
	"jumbo-mtu": "ibdump's --jumbo-mtu: ibcap sizes its ring's slots to the port, 4 KiB for InfiniBand and the netdev's MTU for RoCE, jumbo frames included; leave it out",
	"conti":     "ibdump's --conti: ibcap's ring is one mapping (huge pages asked for); leave it out",
	"src_qp":    "ibdump's --src_qp: ibcap keeps the packets to the destination QPs given with --qp N,M (the BTH names only the destination QP)",
	"a0-mode":   "ibdump's --a0-mode: ibcap captures through the verbs sniffer flow on every device; leave it out",
	"mst-dev":   "ibdump's --mst-dev: ibcap names the RDMA device with -i DEVICE (or -d)",
}

// unknownShortHints are said after "unknown shorthand flag: 'C' in -...".
var unknownShortHints = map[byte]string{
	'I': "ibdump's -I (direction) is -Q in|out|inout (rx and tx too)",
	'T': unknownLongHints["conti"],
	'E': unknownLongHints["decap"],
	'm': unknownLongHints["mst-dev"],
	'x': tcpdumpBytesHint,
	'X': tcpdumpBytesHint,
	'A': tcpdumpBytesHint,
}

const tcpdumpBytesHint = "tcpdump's -x, -X and -A (the packet's bytes): ibcap prints one decoded line per packet (-v and -e say more); " +
	"for the bytes, write a file (-w x.pcap) and read it with tshark -x -r x.pcap"

// flagHint is ibcap's flag error function: the error pflag gives, with
// what to do instead when the flag is tcpdump's or ibdump's.
func flagHint(_ *cobra.Command, err error) error {
	var missing *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	hint := flaghint.Hints{Long: unknownLongHints, Short: unknownShortHints}.For(err)
	switch {
	case hint != "":
	case errors.As(err, &missing):
		hint = sameLetterHint(missing.GetFlag())
	case errors.As(err, &invalid):
		hint = sameLetterHint(invalid.GetFlag())
	}
	return flaghint.Add(err, hint)
}

// sameLetterHint is for ibdump's flags whose letter is another ibcap
// flag's, one that takes a value where ibdump's does not.
func sameLetterHint(f *pflag.Flag) string {
	if f == nil {
		return ""
	}
	switch f.Name {
	case "snaplen":
		return "-s is the snap length in bytes, as in tcpdump; ibdump's -s, silent, is -q"
	case "time-stamp-type":
		return "-j is the time stamp type, as in tcpdump (-J lists them); ibdump's -j, jumbo MTU, is not needed: ibcap's ring slots fit the port's MTU"
	}
	return ""
}

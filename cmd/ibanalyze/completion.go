package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/correlate"
	"github.com/ibscope/ibscope/internal/cmddoc"
	"github.com/ibscope/ibscope/protostate"
)

// completers complete the values of ibanalyze's flags, in every
// subcommand that has the flag (ibanalyze __complete flows --by "").
var completers = cmddoc.Completers{
	"rate":          cmddoc.Values(rateValues),
	"width":         cmddoc.Values(widthValues),
	"by":            cmddoc.Fixed(byValues...),
	"format":        cmddoc.Values(tableFormats),
	"opcodes":       cmddoc.List(cmddoc.Opcodes(opcodeWords...)),
	"partition-by":  cmddoc.List(partitionKeys),
	"offset":        cmddoc.Fixed(cmddoc.Value{Name: "auto", Means: "estimate it from the byte rates"}),
	"plot":          cmddoc.FileExt("png", "svg", "pdf"),
	"output":        cmddoc.FileExt("parquet", "arrow", "csv", "jsonl"),
	"report output": cmddoc.FileExt("html"),
	"data-ids":      cmddoc.FileExt("json"),
}

// rateValues are the IB lane speeds (at 4x unless --width says) and the
// common Ethernet speeds; --rate takes any data rate in Gb/s too.
func rateValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	for _, r := range protostate.LinkRates() {
		vs = append(vs, cmddoc.Value{Name: r.Name, Means: fmt.Sprintf("InfiniBand, %.4g Gb/s of data at 4x", r.DataGbps(4))})
	}
	for _, g := range []int{10, 25, 40, 50, 100, 200, 400, 800} {
		vs = append(vs, cmddoc.Value{Name: fmt.Sprintf("%dG", g), Means: fmt.Sprintf("%d Gb/s Ethernet", g)})
	}
	return vs
}

// widthValues are the IB link widths.
func widthValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	for lanes := 1; lanes <= 12; lanes++ {
		if protostate.ValidLinkWidth(lanes) {
			vs = append(vs, cmddoc.Value{Name: fmt.Sprintf("%dx", lanes), Means: fmt.Sprintf("%d lanes", lanes)})
		}
	}
	return vs
}

// byValues are ipd's groupings.
var byValues = []cmddoc.Value{
	{Name: string(analyze.ByFlow), Means: "IB: SLID, DLID, DestQP; RoCE: source, destination, DestQP"},
	{Name: string(analyze.ByLink), Means: "one link direction: every packet to one destination"},
	{Name: string(analyze.ByQP), Means: "DestQP alone"},
}

// tableFormats are what export and correlate write.
func tableFormats(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	for f := correlate.FormatParquet; f <= correlate.FormatJSONL; f++ {
		vs = append(vs, cmddoc.Value{Name: f.String(), Means: "what -o NAME" + f.Ext() + " writes"})
	}
	return vs
}

// opcodeWords are what --opcodes takes beside opcode names.
var opcodeWords = []cmddoc.Value{
	{Name: "data", Means: "the opcodes that carry payload"},
	{Name: "ack", Means: "the ACKNOWLEDGEs"},
	{Name: "all", Means: "every opcode"},
}

// partitionKeys are the keys derived from each packet, and the form of a
// constant one.
func partitionKeys(*cobra.Command) []cmddoc.Value {
	return []cmddoc.Value{
		{Name: correlate.PartitionDate, Means: "UTC day"},
		{Name: correlate.PartitionHour, Means: "UTC hour"},
		{Name: correlate.PartitionTransport, Means: "ib, rocev1, rocev2, none"},
		{Name: "host=", Means: "a constant NAME=VALUE, e.g. host=node17"},
	}
}

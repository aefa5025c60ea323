package main

import (
	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/internal/flaghint"
)

// tcpdump's and tshark's letters that ibanalyze does not take answer
// "unknown shorthand flag" with what ibanalyze does instead (-r it takes:
// readflag.go).
var unknownShortHints = map[byte]string{
	'w': "export, correlate and report write to -o FILE; packets are written by ibcap -r IN -w OUT",
	'i': "ibanalyze reads captures, not interfaces: ibcap -i DEV -w - | ibanalyze flows -",
	'x': bytesHint,
	'X': bytesHint,
	'A': bytesHint,
}

const bytesHint = "tcpdump's -x, -X and -A print the bytes; decode prints one decoded line per frame, every field with --json; " +
	"for the bytes, tshark -x -r FILE"

// flagHint is ibanalyze's flag error function: the error pflag gives,
// with what to do instead when the letter is tcpdump's or tshark's.
func flagHint(_ *cobra.Command, err error) error {
	return flaghint.Add(err, flaghint.Hints{Short: unknownShortHints}.For(err))
}

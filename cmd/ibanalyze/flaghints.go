package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) || unknown.GetSpecifiedShortnames() == "" {
		return err
	}
	name := unknown.GetSpecifiedName()
	if name == "" {
		return err
	}
	hint, ok := unknownShortHints[name[0]]
	if !ok {
		return err
	}
	return fmt.Errorf("%w (%s)", err, hint)
}

package main

import (
	"github.com/spf13/cobra"
)

// A capture named with -r is read as if named after the flags, as tcpdump,
// tshark and ibcap read one: a user who types "ibanalyze flows -r x.pcap"
// out of habit gets the analysis, not "unknown shorthand flag". The files
// -r names come first, in their order, then the others; a command's own
// rule on how many it needs (buffer: two, its receiver last) counts both.

// takesCaptures gives cmd -r, --read FILE and has its argument check and
// its run see the files -r names in front of the others; and -n, which
// tcpdump users type by habit (-nn -r x.pcap), as ibcap takes it.
func takesCaptures(cmd *cobra.Command) {
	reads := cmd.Flags().StringArrayP("read", "r", nil, "read the capture `FILE`, as tcpdump -r does: the same as naming it after the flags (repeatable; those first)")
	cmd.Flags().BoolP("numeric", "n", false, "accepted for tcpdump's sake: addresses are printed as numbers always")
	withReads := func(args []string) []string {
		if len(*reads) == 0 {
			return args
		}
		return append(append([]string(nil), *reads...), args...)
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error { return check(cmd, withReads(args)) }
	}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return run(cmd, withReads(args)) }
}

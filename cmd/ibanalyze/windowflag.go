package main

import (
	"fmt"
	"unsafe"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/analyze"
)

// addWindowFlag is the --window flag of every command that reads through the
// reorder window; its help gives the cost of one packet held there, from
// the type itself so the figure cannot go stale.
func addWindowFlag(f *pflag.FlagSet, p *int) {
	f.IntVar(p, "window", analyze.DefaultWindowPackets, fmt.Sprintf("reorder window for out-of-order timestamps, in packets (at most %d, %d bytes each)",
		analyze.MaxWindowPackets, unsafe.Sizeof(analyze.Packet{})))
}

// checkWindow refuses a --window outside 1..analyze.MaxWindowPackets before
// anything is allocated.
func checkWindow(window int) error {
	if window < 1 || window > analyze.MaxWindowPackets {
		return fmt.Errorf("--window %d: want 1 to %d packets", window, analyze.MaxWindowPackets)
	}
	return nil
}

// checkMaxFlows refuses a --max-flows outside 1..analyze.MaxFlowsLimit
// before anything is allocated.
func checkMaxFlows(maxFlows int) error {
	if maxFlows < 1 || maxFlows > analyze.MaxFlowsLimit {
		return fmt.Errorf("--max-flows %d: want 1 to %d", maxFlows, analyze.MaxFlowsLimit)
	}
	return nil
}

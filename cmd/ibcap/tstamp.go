package main

import (
	"fmt"
	"io"

	"github.com/ibscope/ibscope/capture"
)

// timestampTypeDescriptions say, for --list-time-stamp-types, what each
// type is.
var timestampTypeDescriptions = map[string]string{
	capture.TimestampHost:            "the kernel's receive time",
	capture.TimestampAdapter:         "the device's completion timestamps, converted to the host's clock",
	capture.TimestampAdapterUnsynced: "the NIC's hardware clock, as it stamped the frame (PTP clock; phc2sys keeps it on host time)",
}

// listTimestampTypes prints what -j takes on the device, as tcpdump -J.
func listTimestampTypes(out io.Writer, device string) error {
	if device == "" {
		return fmt.Errorf("--list-time-stamp-types: give -i DEVICE")
	}
	types, err := capture.TimestampTypes(device, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Time stamp types for %s (use option -j to set):\n", device)
	for _, t := range types {
		fmt.Fprintf(out, "  %s (%s)\n", t, timestampTypeDescriptions[t])
	}
	return nil
}

// checkPrecision takes --time-stamp-precision: ibcap writes nanoseconds.
func checkPrecision(p string) error {
	switch p {
	case "nano", "micro":
		return nil
	}
	return fmt.Errorf("--time-stamp-precision %q: want nano or micro", p)
}

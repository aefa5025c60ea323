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

// listTimestampTypes prints what -j takes on the device, as tcpdump -J:
// what the capture path the device resolves to offers.
func listTimestampTypes(out io.Writer, device string) error {
	if device == "" {
		return fmt.Errorf("--list-time-stamp-types: give -i DEVICE")
	}
	t, err := capture.Resolve(device, "")
	if err != nil {
		return err
	}
	types, err := t.TimestampTypes()
	if err != nil {
		return err
	}
	via := ""
	if t.Device.SoftRoCE && t.Name != t.Netdev {
		// What is offered is the netdev's: the capture runs there.
		via = "software RoCE, captured on " + t.Netdev + " with AF_PACKET; "
	}
	fmt.Fprintf(out, "Time stamp types for %s (%suse option -j to set):\n", device, via)
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

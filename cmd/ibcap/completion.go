package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/cmddoc"
)

// completers complete the values of ibcap's flags (ibcap __complete -i "").
// The values come from where the flags' parsers take them, or from what
// the device offers (-j, -y: what -J, -L list).
var completers = cmddoc.Completers{
	"interface":            cmddoc.Values(interfaceValues),
	"device":               cmddoc.Values(rdmaDeviceValues),
	"time-stamp-type":      cmddoc.Values(timestampTypeValues),
	"format":               cmddoc.Values(formatValues),
	"time-stamp-precision": cmddoc.Fixed(cmddoc.Value{Name: "nano"}, cmddoc.Value{Name: "micro"}),
	"opcode":               cmddoc.List(cmddoc.Opcodes()),
	"direction": cmddoc.Fixed(
		cmddoc.Value{Name: "in", Means: "received"}, cmddoc.Value{Name: "out", Means: "sent"},
		cmddoc.Value{Name: "inout", Means: "both (the default)"}),
	"linktype": cmddoc.Values(linkTypeValues),
}

// interfaceValues are what -D lists: each RDMA port as DEVICE:PORT, each
// network interface, and any.
func interfaceValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	devs, _ := capture.ListRDMADevices(capture.SysfsRoot()) // none listed when sysfs cannot be read
	for _, d := range devs {
		for _, p := range d.Ports {
			vs = append(vs, cmddoc.Value{Name: fmt.Sprintf("%s:%d", d.Name, p.Num), Means: portMeans(d, p)})
		}
	}
	for _, n := range capture.ListNetdevs() {
		state := "down"
		if n.Up {
			state = "up"
		}
		vs = append(vs, cmddoc.Value{Name: n.Name, Means: "network interface, " + state})
	}
	return append(vs, cmddoc.Value{Name: capture.AnyDevice, Means: "every interface"})
}

// portMeans describes an RDMA port as -D does: link layer, state, rate.
func portMeans(d capture.RDMADevice, p capture.RDMAPort) string {
	var parts []string
	for _, s := range []string{p.LinkLayer, p.State, p.Rate} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return "RDMA port (" + strings.Join(parts, ", ") + "), " + capturedBy(d, p)
}

// rdmaDeviceValues are the RDMA devices, for ibdump's -d.
func rdmaDeviceValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	devs, _ := capture.ListRDMADevices(capture.SysfsRoot())
	for _, d := range devs {
		vs = append(vs, cmddoc.Value{Name: d.Name, Means: fmt.Sprintf("RDMA device, %d ports", len(d.Ports))})
	}
	return vs
}

// timestampTypeValues are the types the -i device offers (what -J lists),
// or every type before -i is given.
func timestampTypeValues(cmd *cobra.Command) []cmddoc.Value {
	types := []string{capture.TimestampHost, capture.TimestampAdapter, capture.TimestampAdapterUnsynced}
	if f := cmd.Flags().Lookup("interface"); f != nil && f.Value.String() != "" {
		if t, err := capture.Resolve(f.Value.String(), ""); err == nil {
			if offered, err := t.TimestampTypes(); err == nil {
				types = offered
			}
		}
	}
	vs := make([]cmddoc.Value, len(types))
	for i, t := range types {
		vs[i] = cmddoc.Value{Name: t, Means: timestampTypeDescriptions[t]}
	}
	return vs
}

// linkTypeValues are the link types the -i device can be written with
// (what -L lists); none before -i is given.
func linkTypeValues(cmd *cobra.Command) []cmddoc.Value {
	f := cmd.Flags().Lookup("interface")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	t, err := capture.Resolve(f.Value.String(), "")
	if err != nil {
		return nil
	}
	choices, err := linkTypeChoices(t)
	if err != nil {
		return nil
	}
	vs := make([]cmddoc.Value, len(choices))
	for i, c := range choices {
		vs[i] = cmddoc.Value{Name: c.name, Means: c.words}
	}
	return vs
}

// formatValues are the file formats -w writes.
func formatValues(*cobra.Command) []cmddoc.Value {
	var vs []cmddoc.Value
	for f := capture.FormatAuto; f <= capture.FormatERFRaw; f++ {
		vs = append(vs, cmddoc.Value{Name: f.String()})
	}
	return vs
}

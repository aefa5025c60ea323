package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/termtext"
)

// listDevices prints what -D shows: RDMA ports first (from sysfs, which
// needs no libibverbs), then netdevs, then any. When there are RDMA devices
// the verbs sniffer captures but it cannot run, it says why after the
// listing, as its error.
func listDevices(out io.Writer) error {
	devs, err := capture.ListRDMADevices(capture.SysfsRoot())
	if err != nil {
		return err
	}
	if err := printDevices(out, devs, capture.ListNetdevs()); err != nil {
		return err
	}
	if needsVerbs(devs) {
		if err := capture.VerbsAvailable(); err != nil {
			return fmt.Errorf("the RDMA devices above cannot be captured: %w", err)
		}
	}
	return nil
}

func printDevices(out io.Writer, devs []capture.RDMADevice, nets []capture.Netdev) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	// The numbers are what -i takes in place of a name (-i 2), as tcpdump's.
	num := 0
	fmt.Fprintln(tw, "#\tRDMA DEVICE\tLINK LAYER\tSTATE\tPHYS STATE\tRATE\tLID\tNETDEV\tCAPTURED BY")
	if len(devs) == 0 {
		fmt.Fprintln(tw, "\t(none)\t\t\t\t\t\t\t")
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			num++
			lid := "-"
			if p.LinkLayer == "InfiniBand" {
				lid = fmt.Sprintf("0x%x", p.LID)
			}
			fmt.Fprintf(tw, "%d\t%s:%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", num, termtext.Escape(d.Name), p.Num, orDash(p.LinkLayer), orDash(p.State),
				orDash(p.PhysState), orDash(p.Rate), lid, orDash(p.Netdev), capturedBy(d, p))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tNETWORK INTERFACE\tSTATE\tMTU")
	for _, n := range nets {
		num++
		state := "down"
		if n.Up {
			state = "up"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\n", num, termtext.Escape(n.Name), state, n.MTU)
	}
	// Last, as in tcpdump -D: the pseudo-device of every interface.
	fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", num+1, capture.AnyDevice, "(every interface, Linux cooked v2 records)", "-")
	return tw.Flush()
}

// capturedBy says how ibcap -i captures an RDMA port.
func capturedBy(d capture.RDMADevice, p capture.RDMAPort) string {
	if d.SoftRoCE {
		return "software RoCE: AF_PACKET on " + orDash(p.Netdev)
	}
	return "verbs sniffer"
}

// needsVerbs says whether any of devs is captured by the verbs sniffer.
func needsVerbs(devs []capture.RDMADevice) bool {
	for _, d := range devs {
		if !d.SoftRoCE {
			return true
		}
	}
	return false
}

// orDash is s as the table shows it (sysfs' words, escaped), "-" for none.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return termtext.Escape(s)
}

// targetNote is the one line ibcap says of what it captures when the
// device name alone would mislead: software RoCE is captured on its
// netdev, and a hardware RoCE port's netdev misses what the device handles
// itself.
func targetNote(t capture.Target) string {
	switch {
	case t.Device.SoftRoCE && t.Name != t.Netdev:
		return fmt.Sprintf("%s is software RoCE (rdma_rxe) on %s, which carries every packet it sends and receives: "+
			"capturing them there with AF_PACKET", t.Device.Name, t.Netdev)
	case t.BypassesKernel():
		return fmt.Sprintf("%s is the netdev of RDMA port %s:%d; RoCE traffic the RDMA device handles "+
			"in hardware bypasses the kernel, and AF_PACKET sees only what passes through it. "+
			"For all the port's RoCE traffic: ibcap -i %s:%d", t.Name, t.Device.Name, t.Port.Num, t.Device.Name, t.Port.Num)
	}
	return ""
}

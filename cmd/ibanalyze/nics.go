package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/fleet"
	"github.com/ibscope/ibscope/internal/units"
)

func init() {
	addFleetCommand(&cobra.Command{
		Use:   "nics",
		Short: "Per host and NIC: packet and byte rates, drops, CNP/ECN, errors, capture health",
		Long: `nics shows, for each agent's captured NIC: the RoCE/IB packets and wire bytes
per second it analysed, CNPs and ECN-CE marks per second, the packets
dropped before ibcap took them (kernel ring, device, completion errors),
errors (NAKs, retransmissions, PSN gaps and the RDMA port's error counters),
the RDMA port's own received and transmitted bits per second where a capture
has a port (all its traffic: a hardware RoCE port's netdev sees only what
passes through the kernel), and the capture's health (what went wrong over
the range, "ok" if nothing).` + fleetLong,
		Example: `  ibanalyze nics                                per host and NIC: pkt/s, rate, CNP/s, ECN/s, drops, errors
  ibanalyze nics --json --prometheus http://prom:9090`,
	}, fetchNICs, printNICs)
}

// nicsReport is nics's JSON: the range the figures are over, and the NICs.
type nicsReport struct {
	RangeSeconds float64     `json:"range_s"`
	NICs         []fleet.NIC `json:"nics"`
}

func fetchNICs(c *fleet.Client, ctx context.Context, o fleet.Options) (*nicsReport, error) {
	nics, err := c.NICs(ctx, o)
	if err != nil {
		return nil, err
	}
	if nics == nil {
		nics = []fleet.NIC{}
	}
	return &nicsReport{o.Range.Seconds(), nics}, nil
}

func printNICs(w io.Writer, r *nicsReport) {
	nics := r.NICs
	if len(nics) == 0 {
		fmt.Fprintln(w, "no agents")
		return
	}
	// The port's own rates, where an agent's capture has an RDMA port: all
	// of its traffic, beside what was analysed (a hardware RoCE port's
	// netdev sees only what passes through the kernel).
	ports := false
	for i := range nics {
		ports = ports || nics[i].PortRxBytesPerS != nil || nics[i].PortTxBytesPerS != nil
	}
	header := []string{"host", "nic", "state", "pkt/s", "rate"}
	if ports {
		header = append(header, "port rx", "port tx")
	}
	t := table{header: append(header, "CNP/s", "ECN/s", "drops", "errors", "health"), leftCols: 3, leftLast: true}
	for i := range nics {
		n := &nics[i]
		h := "ok"
		if len(n.Health) > 0 {
			h = strings.Join(n.Health, ", ")
		}
		row := []string{n.Host, dashIfEmpty(n.Device), string(n.State), perSecond(n.PacketsPerS), units.FormatBitRate(8 * n.BytesPerS)}
		if ports {
			row = append(row, portRate(n.PortRxBytesPerS), portRate(n.PortTxBytesPerS))
		}
		t.add(append(row, perSecond(n.CNPsPerS), perSecond(n.ECNCEPerS), rangeCount(n.Drops()), rangeCount(n.Errors()), h)...)
	}
	t.write(w)
}

// portRate is a port counter's byte rate in bits per second, "-" for a
// capture without an RDMA port.
func portRate(bytesPerS *float64) string {
	if bytesPerS == nil {
		return "-"
	}
	return units.FormatBitRate(8 * *bytesPerS)
}

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
errors (NAKs, retransmissions, PSN gaps and the RDMA port's error counters)
and the capture's health (what went wrong over the range, "ok" if
nothing).` + fleetLong,
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
	t := table{header: []string{"host", "nic", "state", "pkt/s", "rate", "CNP/s", "ECN/s", "drops", "errors", "health"}, leftCols: 3, leftLast: true}
	for i := range nics {
		n := &nics[i]
		h := "ok"
		if len(n.Health) > 0 {
			h = strings.Join(n.Health, ", ")
		}
		t.add(n.Host, dashIfEmpty(n.Device), string(n.State), perSecond(n.PacketsPerS), units.FormatBitRate(8*n.BytesPerS),
			perSecond(n.CNPsPerS), perSecond(n.ECNCEPerS), rangeCount(n.Drops()), rangeCount(n.Errors()), h)
	}
	t.write(w)
}

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
	var o fleetOpts
	cmd := &cobra.Command{
		Use:   "nics",
		Short: "Per host and NIC: packet and byte rates, drops, CNP/ECN, errors, capture health",
		Long: `nics shows, for each agent's captured NIC: the RoCE/IB packets and wire bytes
per second it analysed, CNPs and ECN-CE marks per second, the packets
dropped before ibcap took them (kernel ring, device, completion errors),
errors (NAKs, retransmissions, PSN gaps and the RDMA port's error counters)
and the capture's health (what went wrong over the range, "ok" if
nothing).` + fleetLong,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, opts, err := o.client()
			if err != nil {
				return err
			}
			nics, err := c.NICs(context.Background(), opts)
			if err != nil {
				return err
			}
			if nics == nil {
				nics = []fleet.NIC{}
			}
			return writeReport(cmd.OutOrStdout(), o.json,
				func(w io.Writer) error {
					return writeJSON(w, struct {
						RangeSeconds float64     `json:"range_s"`
						NICs         []fleet.NIC `json:"nics"`
					}{opts.Range.Seconds(), nics})
				},
				func(w io.Writer) { printNICs(w, nics) })
		},
	}
	addFleetFlags(cmd.Flags(), &o)
	rootCmd.AddCommand(cmd)
}

func printNICs(w io.Writer, nics []fleet.NIC) {
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

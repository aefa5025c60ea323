package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibscope/ibscope/fleet"
	"github.com/ibscope/ibscope/internal/units"
)

func init() {
	addFleetCommand(&cobra.Command{
		Use:   "links",
		Short: "The directed traffic matrix: source host/NIC to destination host/NIC, with rates and problems",
		Long: `links maps each flow's source and destination (IP, GID or LID) to the host
and NIC whose agent owns that address (ibscope_address_info) and adds the
flows up per link: packets and wire bytes per second, bytes, CNPs, ECN-CE
marks, NAKs, retransmissions and PSN gaps over the range. An address no
agent owns is shown as it is. A link both of whose ends capture is seen by
two agents: it shows the larger of their figures, not the sum. "other" is
an agent's flows past its --metrics-flows, whose ends are not known.` + fleetLong,
		Example: `  ibanalyze links                               source -> destination host/NIC: pkt/s, rate, bytes, problems
  ibanalyze links --range 10m --lookback 1h`,
	}, (*fleet.Client).Links, printLinks)
}

func printLinks(w io.Writer, l *fleet.Links) {
	if len(l.Links) == 0 {
		fmt.Fprintln(w, "no links")
		return
	}
	t := table{header: []string{"src", "dst", "pkt/s", "rate", "bytes", "problems", "seen by"}, leftCols: 2, leftLast: true}
	for i := range l.Links {
		k := &l.Links[i]
		var p []string
		for _, c := range []struct {
			name string
			v    float64
		}{{"CNP", k.CNPs}, {"ECN-CE", k.ECNCE}, {"NAK", k.NAKs}, {"retx", k.Retransmissions}, {"gap", k.PSNGaps}} {
			if c.v >= 0.5 {
				p = append(p, rangeCount(c.v)+" "+c.name)
			}
		}
		t.add(k.Src.String(), k.Dst.String(), perSecond(k.PacketsPerS), units.FormatBitRate(8*k.BytesPerS),
			units.FormatBytes(uint64(max(0, k.Bytes))), dashIfEmpty(strings.Join(p, ", ")), strings.Join(k.ObservedBy, " "))
	}
	t.write(w)
}

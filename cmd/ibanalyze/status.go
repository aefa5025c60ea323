package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/fleet"
	"github.com/ibscope/ibscope/internal/units"
)

// fleetOpts are the flags status, nics and links share.
type fleetOpts struct {
	url        string
	json       bool
	rangeNs    units.DurationNs
	lookback   units.DurationNs
	maxReplyMB int64
	maxSeries  int
}

// client is the Prometheus client the flags describe.
func (o *fleetOpts) client() (*fleet.Client, error) {
	if o.maxReplyMB < 1 || o.maxReplyMB > fleet.MaxMaxReplyBytes>>20 {
		return nil, fmt.Errorf("--max-reply-mb %d: want 1 to %d", o.maxReplyMB, fleet.MaxMaxReplyBytes>>20)
	}
	if o.maxSeries < 1 || o.maxSeries > fleet.MaxMaxSeries {
		return nil, fmt.Errorf("--max-series %d: want 1 to %d", o.maxSeries, fleet.MaxMaxSeries)
	}
	c, err := fleet.NewClient(o.url)
	if err != nil {
		return nil, fmt.Errorf("--prometheus: %w", err)
	}
	c.MaxReplyBytes, c.MaxSeries = o.maxReplyMB<<20, o.maxSeries
	return c, nil
}

func addFleetFlags(f *pflag.FlagSet, o *fleetOpts) {
	f.StringVar(&o.url, "prometheus", fleet.DefaultURL, "the Prometheus server that scrapes the ibcap agents (`URL`)")
	f.BoolVar(&o.json, "json", false, "JSON output")
	o.rangeNs = units.DurationNs(fleet.DefaultRange)
	f.Var(&o.rangeNs, "range", "rates and counts over this `DURATION` (at least two scrapes)")
	o.lookback = units.DurationNs(fleet.DefaultLookback)
	f.Var(&o.lookback, "lookback", "list agents seen this far back (`DURATION`), stopped and stale ones included")
	f.Int64Var(&o.maxReplyMB, "max-reply-mb", fleet.DefaultMaxReplyBytes>>20, "refuse a Prometheus reply larger than this (`MB`): it is read as it arrives, never past the bound")
	f.IntVar(&o.maxSeries, "max-series", fleet.DefaultMaxSeries, "refuse a Prometheus reply of more series than this (`N`)")
}

// addFleetCommand gives cmd the fleet flags and a run that asks the
// Prometheus server with fetch and writes its answer as JSON or with
// printText, then adds cmd to the root.
func addFleetCommand[R any](cmd *cobra.Command, fetch func(*fleet.Client, context.Context, fleet.Options) (R, error), printText func(io.Writer, R)) {
	var o fleetOpts
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := o.client()
		if err != nil {
			return err
		}
		r, err := fetch(c, context.Background(), fleet.Options{Range: time.Duration(o.rangeNs), Lookback: time.Duration(o.lookback)})
		if err != nil {
			return err
		}
		return writeReport(cmd.OutOrStdout(), o.json, func(w io.Writer) error { return writeJSON(w, r) }, func(w io.Writer) { printText(w, r) })
	}
	addFleetFlags(cmd.Flags(), &o)
	rootCmd.AddCommand(cmd)
}

const fleetLong = `

Agents are ibcap --metrics processes that a Prometheus server scrapes
(--prometheus; see the README's "Watch a cluster"). An agent is alive when
its last scrape succeeded, stopped when it said so on SIGINT/SIGTERM
(ibscope_capture_stopped 1), stale when its series ended without that
(killed, crashed, unreachable). Rates and counts are over --range; agents
are listed for --lookback.`

func init() {
	addFleetCommand(&cobra.Command{
		Use:   "status",
		Short: "The ibcap agents Prometheus scrapes: alive, stale, stopped, and their totals",
		Long: `status counts the agents alive, stale and stopped, adds up their packet and
byte rates, CNPs, ECN marks, drops and errors, and lists each agent.` + fleetLong,
		Example: `  ibanalyze status                              agents alive, stale, stopped; totals of rates, drops, errors
  ibanalyze status --prometheus http://prom:9090 --range 5m`,
	}, (*fleet.Client).Status, printStatus)
}

func printStatus(w io.Writer, s *fleet.Status) {
	fmt.Fprintf(w, "agents: %d alive, %d stale, %d stopped\n", s.Alive, s.Stale, s.Stopped)
	fmt.Fprintf(w, "over %s: %s pkt/s, %s, %s CNP/s, %s ECN-CE/s, %s drops, %s errors\n",
		units.FormatNs(int64(s.RangeSeconds*1e9)), perSecond(s.PacketsPerS), units.FormatBitRate(8*s.BytesPerS),
		perSecond(s.CNPsPerS), perSecond(s.ECNCEPerS), rangeCount(s.Drops), rangeCount(s.Errors))
	if len(s.Agents) == 0 {
		return
	}
	t := table{header: []string{"host", "device", "state", "instance", "job", "running", "version"}, leftCols: 7}
	for _, a := range s.Agents {
		t.add(a.Host, a.Device, string(a.State), a.Instance, a.Job, units.FormatNs(int64(a.ElapsedSeconds*1e9)), a.Version)
	}
	fmt.Fprintln(w)
	t.write(w)
}

// perSecond writes a per-second figure with one decimal.
func perSecond(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// rangeCount writes an increase() over the range, which is extrapolated, as a
// whole number.
func rangeCount(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// dashIfEmpty is s, or "-" for an empty cell.
func dashIfEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

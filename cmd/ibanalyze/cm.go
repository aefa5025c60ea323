package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type cmOpts struct {
	json     bool
	window   int
	maxConns int
	interval intervalFlag
}

func init() {
	var o cmOpts
	cmd := &cobra.Command{
		Use:   "cm FILE [FILE...]",
		Short: "Connections the communication manager set up and tore down: ends, QPs, starting PSNs, service, REQ to REP to RTU times, rejects",
		Long: `cm reads the communication management MADs of a capture (QP1; every RC
connection on InfiniBand, and every rdma_cm connection on RoCE too) and
lists each connection: its active end (the REQ's sender) and passive end,
their communication IDs, QPs and the PSNs they start their requests at,
the service ID (and, for rdma_cm, the IP addresses and ports its private
data carries), the time from REQ to REP and from REP to RTU, MRAs, a
reject with its reason, path changes (LAP), disconnects (DREQ, DREP), and
its state:

  established   REQ, REP and RTU seen
  rejected      a REJ, with its reason (IBA table 112)
  disconnected  a DREQ or DREP seen
  incomplete    a REQ (and maybe its REP) and nothing after: never completed
  unseen_setup  messages of a connection whose REQ the capture does not hold

flows uses the same messages to start a connection's PSN sequences afresh.
Several files are read as one capture in timestamp order; - is standard
input. Memory: about 300 bytes a connection, at most --max-connections.

` + intervalHelp,
		Example: `  ibanalyze cm out.pcap                         connections: ends, QPs, PSNs, REQ>REP>RTU, rejects
  ibanalyze cm --json out.pcap`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCM(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "JSON output")
	addWindowFlag(f, &o.window)
	f.IntVar(&o.maxConns, "max-connections", analyze.DefaultMaxConnections,
		fmt.Sprintf("keep at most `N` connections apart; the messages of later ones are only counted (at most %d)", analyze.MaxConnectionsLimit))
	addIntervalFlag(f, &o.interval, "cm")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runCM(stdout io.Writer, paths []string, o cmOpts) error {
	if err := checkWindow(o.window); err != nil {
		return err
	}
	a, err := analyze.NewCMAnalysis(o.maxConns)
	if err != nil {
		return fmt.Errorf("--max-connections: %w", err)
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, CM: true})
	if err != nil {
		return err
	}
	run, err := runStreamed(stdout, paths, "cm", in, o.interval, o.json, analysis(a),
		func(w io.Writer, r *analyze.CMReport) error {
			return writeReport(w, o.json, func(w io.Writer) error { return writeJSON(w, r) }, func(w io.Writer) { writeCMText(w, r) })
		})
	if err != nil {
		return err
	}
	r := run.report
	if r.Input.Packets == 0 {
		return noPackets(r.Input)
	}
	warnInput(r.Input)
	if len(r.Messages) == 0 {
		warnf("no communication management MADs in %s (UD packets on QP1 of class 7)", strings.Join(r.Input.Files, ", "))
	}
	if r.MaxConnections > 0 {
		warnf("more than %d connections: %s of later ones only counted; --max-connections raises the bound", r.MaxConnections, units.Count(r.OtherMessages, "message"))
	}
	return in.damaged(run.reports.totals(r))
}

func writeCMText(w io.Writer, r *analyze.CMReport) {
	in := r.Input
	var msgs []string
	for _, name := range []string{"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"} {
		if n := r.Messages[name]; n > 0 {
			msgs = append(msgs, fmt.Sprintf("%d %s", n, name))
		}
	}
	kinds := "" // "(3 REQ, 3 REP)", none with no message
	if len(msgs) > 0 {
		kinds = " (" + strings.Join(msgs, ", ") + ")"
	}
	fmt.Fprintf(w, "%s: %s, %s%s, %s: %d established, %d rejected, %d never completed%s\n",
		strings.Join(in.Files, ", "), units.Count(in.Frames, "frame"), units.Count(sumMessages(r.Messages), "CM message"), kinds,
		units.Count(len(r.Connections), "connection"), r.Established, r.Rejected, r.Incomplete, unusable(in))
	if len(r.Connections) == 0 {
		return
	}
	t := table{leftCols: 3, indent: "  ", header: []string{"active", "passive", "state", "service", "active qp/psn", "passive qp/psn", "req>rep", "rep>rtu", "mra"}}
	for _, c := range r.Connections {
		active, passive := c.Active, c.Passive
		if c.ActiveIP != "" {
			active, passive = hostPort(c.ActiveIP, c.ActivePort), hostPort(c.PassiveIP, c.PassivePort)
		}
		state := c.State
		if c.RejectReasonName != "" {
			state += " " + c.RejectReasonName + " (" + strconv.Itoa(int(c.RejectReason)) + ")"
		}
		service := "-"
		if c.ServiceID != 0 {
			service = "0x" + strconv.FormatUint(c.ServiceID, 16)
		}
		t.add(active, passive, state, service,
			qpPSN(c.ActiveQPN, c.ActivePSN, c.REQNs != 0), qpPSN(c.PassiveQPN, c.PassivePSN, c.REPNs != 0),
			durOrDash(c.REQToREPNs), durOrDash(c.REPToRTUNs), strconv.Itoa(c.MRAs))
	}
	t.write(w)
}

func sumMessages(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func hostPort(ip string, port uint16) string {
	if strings.Contains(ip, ":") {
		return "[" + ip + "]:" + strconv.Itoa(int(port))
	}
	return ip + ":" + strconv.Itoa(int(port))
}

func qpPSN(qp, psn uint32, seen bool) string {
	if !seen {
		return "-"
	}
	return fmt.Sprintf("0x%06x/%d", qp, psn)
}

func durOrDash(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return units.FormatNs(ns)
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/plots"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/protostate"
	"github.com/spf13/cobra"
)

type flowsOpts struct {
	json     bool
	plot     string
	top      int
	window   int
	maxFlows int
	noCRC    bool
	rate     rateFlag
	interval intervalFlag
}

func init() {
	var o flowsOpts
	cmd := &cobra.Command{
		Use:   "flows FILE [FILE...]",
		Short: "Per-flow health: packets, messages, throughput, PSN gaps, retransmissions, NAKs, CNP/ECN, CRC, ACK latency",
		Long: `flows reports, per flow (IB: SLID, DLID, DestQP; RoCE: source, destination,
DestQP): packets, wire bytes, messages (first/middle/last/only, and RDMA
READ, atomic and FLUSH requests; each PSN once: a message resent go-back-N or after
an RNR NAK counts once), throughput
over time, the opcode mix, PSN gaps (missing and lost), duplicate PSNs
(retransmissions), out-of-order PSNs, NAKs by kind (PSN sequence error, RNR
with its timer, remote access, remote operational, invalid request), CNPs,
ECN-CE marks, FECN/BECN, ICRC/VCRC failures, and ACK latency percentiles
(from a request with AckReq to the ACK on the reverse flow that covers its
PSN). PSN arithmetic is modulo 2^24.

A QP direction carries two PSN sequences, judged apart: its own requests
(SEND, RDMA WRITE, RDMA READ and atomic requests) and its responses to the
peer's requests (ACKs and atomic ACKs, which carry the PSN of the request
they acknowledge, and RDMA READ responses, which take the READ request's
PSNs). The table's lost, dup and ooo add both; the details below it give
each. ACKs coalesce, so the response sequence may jump between messages;
inside a READ response its PSNs must follow one another. A PSN more than
65,536 from its sequence after its QP direction was idle for 1 s begins a
new sequence (a QP number reused by a new connection), counted as such, not
as a gap or a retransmission.

Frame bytes are the frames as captured; wire bytes what they took on the
link (RoCE: the frame plus FCS, preamble and inter-frame gap, 24 bytes).
rate is the mean: wire bytes over the flow's first to last packet, the last
packet's bytes left out (two packets sent back to back at the line rate
read the line rate, not twice it). peak is the highest rate over 100
consecutive packets of the flow (windows counted from its first packet,
each ending at the next window's first packet, whose bytes it leaves out;
the last full window at its own last packet; a flow of fewer packets: over
all of them, so its peak is its rate; in the final report the packets after
the last whole window, fewer than 100, as part of it, so that no rate is
above its peak), both at most the link rate where it
is known (--rate, or the speed the capture records): the same figure
however long the capture and with or without --interval.

Memory: about 280 bytes per flow while the capture is read. Past
--max-flows flows, the packets of later flows are counted together in one
flow named "other" (without PSN sequence or ACK matching), with a warning.
The JSON is written one flow at a time.

Several files are read as one capture in timestamp order (rotated pieces).

` + intervalHelp + `Packets are analysed --window packets behind the reading: on a slow live
stream a smaller --window brings reports sooner.`,
		Example: `  ibanalyze flows out.pcap                      PSN gaps, retransmissions, NAKs, CNP/ECN, ACK latency
  ibanalyze flows --rate 100G --plot flows.png out.pcap
  ibanalyze flows -Y 'src == 10.0.0.0/24 || pcp == 3' --from +2s --to +3s out.pcap`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runFlows(cmd.OutOrStdout(), args, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "JSON output")
	f.StringVar(&o.plot, "plot", "", "draw throughput over time to `FILE` (.png, .svg, .pdf)")
	f.IntVar(&o.top, "top", 20, "text output and plot: the `N` busiest flows (0: all)")
	addWindowFlag(f, &o.window)
	f.IntVar(&o.maxFlows, "max-flows", analyze.DefaultMaxFlows, fmt.Sprintf("keep at most `N` flows apart, about %d bytes each; packets of later ones are counted together as \"other\" (at most %d)", analyze.FlowStateBytes, analyze.MaxFlowsLimit))
	addRateFlag(f, &o.rate, "no peak is above", "none")
	f.BoolVar(&o.noCRC, "no-crc", false, "do not verify ICRC/VCRC (faster; CRC failures are then not counted)")
	addIntervalFlag(f, &o.interval, "flows")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runFlows(stdout io.Writer, paths []string, o flowsOpts) error {
	if err := checkMaxFlows(o.maxFlows); err != nil {
		return err
	}
	if o.top < 0 {
		return fmt.Errorf("--top %d: want 0 (all) or more", o.top)
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	if err := checkWindow(o.window); err != nil {
		return err
	}
	rate, _, ok, err := o.rate.resolve(paths)
	if err != nil {
		return err
	}
	opts := analyze.FlowsOptions{MaxFlows: o.maxFlows}
	if ok {
		opts.LinkGbps = rate.DataGbps
	}
	in, err := newInput(analyze.StreamOptions{WindowPackets: o.window, CheckCRC: !o.noCRC, CM: true})
	if err != nil {
		return err
	}
	run, err := runStreamed(stdout, paths, "flows", in, o.interval, o.json, analysis(analyze.NewFlowsAnalysis(opts)),
		func(w io.Writer, r *analyze.FlowsReport) error { return writeFlowsReport(w, r, o) })
	if errors.Is(err, analyze.ErrNoPackets) {
		return noPackets(run.stream.Input())
	}
	if err != nil {
		return err
	}
	r, rs := run.report, run.reports
	warnInput(r.Input)
	if r.MaxFlows > 0 {
		warnf("more than %s: the packets of those after the first %d (%s) are counted together as %q, without PSN sequences or ACK matching; --max-flows raises the bound (about %d bytes a flow)",
			units.Count(r.MaxFlows, "flow"), r.MaxFlows, units.Count(r.OtherPackets, "packet"), "other", analyze.FlowStateBytes)
	}
	if err := rs.totals(r); err != nil {
		return err
	}
	if o.plot != "" {
		var series []plots.Line
		for _, f := range r.Top(plotFlows(r.NumFlows(), o.top, analyze.ByFlow)) {
			ts := plots.Line{Name: f.Key.String()}
			for j, g := range f.ThroughputGbps {
				ts.XS = append(ts.XS, float64(int64(j)*r.ThroughputBinNs)/1e9)
				ts.YS = append(ts.YS, g)
			}
			series = append(series, ts)
		}
		title := fmt.Sprintf("throughput per flow (%s bins): %s", units.FormatNs(r.ThroughputBinNs), strings.Join(r.Input.Files, ", "))
		if err := plots.Lines(o.plot, title, "Gb/s on the wire", series); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// writeFlowsReport writes the text or the JSON (one flow at a time)
// through one buffered writer.
func writeFlowsReport(out io.Writer, r *analyze.FlowsReport, o flowsOpts) error {
	w := bufio.NewWriter(out)
	var err error
	if o.json {
		err = r.WriteJSON(w)
	} else {
		writeFlowsText(w, r, o.top, !o.noCRC)
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	return err
}

func writeFlowsText(w io.Writer, r *analyze.FlowsReport, top int, crc bool) {
	in := r.Input
	twice := ""
	if in.SeenTwice > 0 {
		twice = fmt.Sprintf(" (%d frames recorded twice, leaving one interface and arriving at another, counted once)", in.SeenTwice)
	}
	fmt.Fprintf(w, "%s: %s, %s%s, %s%s\n", termtext.Escape(strings.Join(in.Files, ", ")), units.Count(in.Frames, "frame"), units.Count(in.Packets, "IB/RoCE packet"), twice,
		units.Count(r.NumFlows(), "flow"), unusable(in))
	if !crc {
		fmt.Fprintln(w, "CRCs not checked (--no-crc)")
	}
	flows := r.Top(top)
	if len(flows) < r.NumFlows() {
		fmt.Fprintf(w, "the %d busiest flows shown (--top 0 for all)\n", top)
	}
	fmt.Fprintln(w, "frame bytes: as captured; wire bytes: on the link (RoCE: + FCS, preamble, inter-frame gap = 24 per frame)")
	fmt.Fprintln(w, "lost, dup, ooo: request and response PSN sequences together (details below)")
	peak := "rate: wire bytes but the last packet's over first to last packet; peak: the highest rate over 100 consecutive packets"
	if r.LinkGbps > 0 {
		peak += ", both at most the link's " + units.FormatBitRate(r.LinkGbps*1e9)
	}
	fmt.Fprintln(w, peak)
	fmt.Fprintln(w)
	writeFlowsTable(w, flows)
	peers := connectionPeers(flows)
	for _, f := range flows {
		writeFlowDetail(w, f, r.ThroughputBinNs, peers[f])
	}
}

// connectionPeers pairs the flows shown that are the two ways of one CM
// connection: the same REQ (service ID and active end's communication
// ID), one from the active end and one from the passive end, between the
// same two ends swapped.
func connectionPeers(flows []*analyze.FlowHealth) map[*analyze.FlowHealth]*analyze.FlowHealth {
	type end struct {
		conn     analyze.FlowConnection
		src, dst string
	}
	ends := func(k analyze.GroupKey) (string, string) {
		if k.SLID != nil && k.DLID != nil {
			return strconv.Itoa(int(*k.SLID)), strconv.Itoa(int(*k.DLID))
		}
		return k.Src, k.Dst
	}
	byEnd := map[end]*analyze.FlowHealth{}
	for _, f := range flows {
		if f.Connection != nil {
			src, dst := ends(f.Key)
			byEnd[end{*f.Connection, src, dst}] = f
		}
	}
	peers := map[*analyze.FlowHealth]*analyze.FlowHealth{}
	for e, f := range byEnd {
		other := end{e.conn, e.dst, e.src}
		other.conn.FromActive = !e.conn.FromActive
		if p := byEnd[other]; p != nil && p.Key.Transport == f.Key.Transport {
			peers[f] = p
		}
	}
	return peers
}

// writeFlowsTable is the one-line-a-flow table: counts, rates, losses and
// ACK latency percentiles.
func writeFlowsTable(w io.Writer, flows []*analyze.FlowHealth) {
	t := table{leftCols: 1, header: []string{"flow", "packets", "frame bytes", "wire bytes", "msgs", "rate", "peak", "lost", "dup", "ooo",
		"NAK", "RNR", "CNP", "ECN-CE", "CRC", "ack p50", "ack p99"}}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	for _, f := range flows {
		var naks, rnr uint64
		for _, n := range f.NAKs {
			naks += n.Count
		}
		for _, n := range f.RNRNAKs {
			rnr += n.Count
		}
		p50, p99 := "-", "-"
		if f.AckLatencyNs != nil {
			p50, p99 = units.FormatNs(f.AckLatencyNs.P50), units.FormatNs(f.AckLatencyNs.P99)
		}
		t.add(f.Key.String(), u(f.Packets), u(f.FrameBytes), u(f.WireBytes), u(f.Messages.Total), units.FormatBitRate(f.MeanGbps*1e9), units.FormatBitRate(f.PeakGbps*1e9),
			u(f.PSN.Lost+f.ResponsePSN.Lost), u(f.PSN.Duplicates+f.ResponsePSN.Duplicates), u(f.PSN.OutOfOrder+f.ResponsePSN.OutOfOrder),
			u(naks), u(rnr), u(f.CNPs), u(f.ECNCE), u(f.ICRCBad+f.VCRCBad), p50, p99)
	}
	t.write(w) // a write error sticks in the buffered writer and comes out of its Flush
}

// writeFlowDetail is a flow's paragraph below the table: the connection
// (peer: its other way, when shown), opcodes, throughput over time,
// messages, PSN sequences, NAKs, congestion marks, bad CRCs and ACK
// latency.
func writeFlowDetail(w io.Writer, f *analyze.FlowHealth, binNs int64, peer *analyze.FlowHealth) {
	fmt.Fprintf(w, "\n%s\n", f.Key)
	if c := f.Connection; c != nil {
		writeFlowConnection(w, c, peer)
	}
	var ops []string
	for _, op := range f.Opcodes {
		ops = append(ops, fmt.Sprintf("%s %d", op.Name, op.Packets))
	}
	fmt.Fprintf(w, "  opcodes: %s\n", strings.Join(ops, ", "))
	if line, lineBinNs := sparkline(f.ThroughputGbps, binNs); line != "" {
		fmt.Fprintf(w, "  throughput per %s from the capture's start (peak over 100 packets %s): %s\n", units.FormatNs(lineBinNs), units.FormatBitRate(f.PeakGbps*1e9), line)
	}
	m := f.Messages
	resent := ""
	if m.Resent > 0 {
		resent = fmt.Sprintf("; %d message starts resent, counted once", m.Resent)
	}
	fmt.Fprintf(w, "  messages: %d (first %d, middle %d, last %d, only %d, READ, atomic and FLUSH requests %d%s)\n",
		m.Total, m.First, m.Middle, m.Last, m.Only, m.Requests, resent)
	for _, sq := range []struct {
		name string
		p    protostate.PSNStats
	}{{"request", f.PSN}, {"response", f.ResponsePSN}} {
		if p := sq.p; p != (protostate.PSNStats{}) {
			fmt.Fprintf(w, "  %s PSNs: %d gaps skipping %d PSNs, %d later filled out of order, %d lost; %d duplicates (retransmissions)",
				sq.name, p.Gaps, p.Missing, p.OutOfOrder, p.Lost, p.Duplicates)
			if p.NewSequences > 0 {
				fmt.Fprintf(w, "; %d new sequences (QP reused)", p.NewSequences)
			}
			fmt.Fprintln(w)
		}
	}
	for _, n := range f.NAKs {
		fmt.Fprintf(w, "  NAK %s: %d\n", n.Name, n.Count)
	}
	for _, n := range f.RNRNAKs {
		fmt.Fprintf(w, "  RNR NAK timer %d (%s): %d\n", n.Timer, units.FormatNs(n.DelayNs), n.Count)
	}
	if f.FECN+f.BECN > 0 {
		fmt.Fprintf(w, "  FECN %d, BECN %d\n", f.FECN, f.BECN)
	}
	if f.ICRCBad+f.VCRCBad > 0 {
		fmt.Fprintf(w, "  bad ICRC %d, bad VCRC %d\n", f.ICRCBad, f.VCRCBad)
	}
	if l := f.AckLatencyNs; l != nil {
		fs := units.FormatNs
		fmt.Fprintf(w, "  ACK latency (%d answered, ACKs on %s): min %s p50 %s p90 %s p99 %s p99.9 %s max %s\n",
			l.Count, f.AckPeer, fs(l.Min), fs(l.P50), fs(l.P90), fs(l.P99), fs(l.P999), fs(l.Max))
	}
	if f.Late > 0 {
		fmt.Fprintf(w, "  %d packets out of order beyond the reorder window\n", f.Late)
	}
}

// writeFlowConnection names the CM connection of a flow in decode's words
// (the REQ's "comm" and "sid", rdma_cm's ports), which end's packets the
// flow carries, and the flow the other way.
func writeFlowConnection(w io.Writer, c *analyze.FlowConnection, peer *analyze.FlowHealth) {
	line := fmt.Sprintf("  connection: REQ comm 0x%x", c.ActiveCommID)
	if c.ServiceID != 0 {
		line += fmt.Sprintf(" sid 0x%x", c.ServiceID)
	}
	if c.ActivePort != 0 || c.PassivePort != 0 {
		line += fmt.Sprintf(" (ports %d -> %d)", c.ActivePort, c.PassivePort)
	}
	if c.FromActive {
		line += "; sent by the active end, to the QP the REP named"
	} else {
		line += "; sent by the passive end, to the QP the REQ named"
	}
	if peer != nil {
		line += "; the other way: " + peer.Key.String()
	}
	fmt.Fprintln(w, line)
}

// sparkColumns is the widest throughput sparkline in the text output.
const sparkColumns = 64

var sparkLevels = []rune(" ▁▂▃▄▅▆▇█")

// sparkline draws a throughput series in at most sparkColumns characters,
// merging neighbouring bins (averaging their rates); it returns the line and
// the time each character spans.
func sparkline(gbps []float64, binNs int64) (string, int64) {
	if len(gbps) == 0 {
		return "", binNs
	}
	per := (len(gbps) + sparkColumns - 1) / sparkColumns
	var cols []float64
	var peak float64
	for i := 0; i < len(gbps); i += per {
		var sum float64
		part := gbps[i:min(i+per, len(gbps))]
		for _, g := range part {
			sum += g
		}
		cols = append(cols, sum/float64(len(part)))
		peak = max(peak, sum/float64(len(part)))
	}
	var b strings.Builder
	for _, c := range cols {
		lvl := 0
		if peak > 0 {
			lvl = int(c / peak * float64(len(sparkLevels)-1))
			if c > 0 && lvl == 0 {
				lvl = 1 // any traffic shows
			}
		}
		b.WriteRune(sparkLevels[lvl])
	}
	return b.String(), binNs * int64(per)
}

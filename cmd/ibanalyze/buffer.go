package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type bufferOpts struct {
	json       bool
	series     bool
	plot       string
	rate       rateFlag
	cutThrough bool
	maxPkts    int
	interval   intervalFlag
}

func init() {
	var o bufferOpts
	cmd := &cobra.Command{
		Use:   "buffer SENDER-CAPTURE... RECEIVER-CAPTURE",
		Short: "Estimate the buffer between senders and a receiver from data packets alone",
		Long: `buffer matches each sender capture's data packets with the receiver capture
(by SLID, DLID, QP and PSN), removes the clock offset (the smallest
receive-minus-send time, which also absorbs the uncongested latency), and
follows occupancy(t) = blocks injected - blocks delivered. Under congestion it
rises to a plateau: the buffer in front of the congested output is full. The
estimate adds the packets the switch holds while forwarding (two packet times
of drain for store-and-forward, one with --cut-through) and reports the
buffer as a whole number of the sender's packets: the middle of the interval
[K, K+1) packets, which is as fine as packet counting can resolve.

No flow-control packets are needed; when a capture has them, 'ibanalyze
credits' reads the buffer exactly.

` + intervalHelp + `The sender captures are read first, whole; the reports so far follow the
receiver capture's packet time.`,
		Example: `  ibanalyze buffer s1.pcapng s2.pcapng r.pcapng   switch buffer from data packets alone
  ibanalyze buffer --rate HDR --json s1.pcapng r.pcapng`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBuffer(cmd.OutOrStdout(), args[:len(args)-1], args[len(args)-1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "JSON report")
	f.BoolVar(&o.series, "series", false, "with --json, include each sender's occupancy over time (downsampled)")
	f.StringVar(&o.plot, "plot", "", "draw each sender's occupancy over time, its plateau and estimate, to `FILE` (.png, .svg, .pdf)")
	addRateFlag(f, &o.rate, "of the link into the receiver", "inferred from back-to-back packets")
	f.IntVar(&o.maxPkts, "max-packets", analyze.DefaultMaxPackets, maxPacketsHelp("buffer", 80))
	f.BoolVar(&o.cutThrough, "cut-through", false, "the switch forwards packets while receiving them (holds one packet time, not two)")
	addIntervalFlag(f, &o.interval, "buffer estimate")
	addSelectFlags(f, &selected, true)
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

func runBuffer(w io.Writer, senders []string, receiver string, o bufferOpts) error {
	if err := checkMaxPacketsFlag(o.maxPkts); err != nil {
		return err
	}
	if err := checkPlot(o.plot); err != nil {
		return err
	}
	opts := analyze.BufferOptions{CutThrough: o.cutThrough, MaxPackets: o.maxPkts}
	r, _, ok, err := o.rate.resolve([]string{receiver})
	if err != nil {
		return err
	}
	if ok {
		opts.NsPerByte = r.NsPerByte()
	}
	if err := stdinOnce(append(slices.Clone(senders), receiver)); err != nil {
		return err
	}
	a, err := analyze.NewBufferAnalysis(opts)
	if err != nil {
		return err
	}
	if err := stopOnSignal(senders, []string{receiver}); err != nil {
		return err
	}
	in, err := newInput(analyze.StreamOptions{})
	if err != nil {
		return err
	}
	ss, err := in.open(senders)
	if err != nil {
		return err
	}
	defer ss.Close()
	recv, err := in.open([]string{receiver})
	if err != nil {
		return err
	}
	defer recv.Close()
	rs := newReports(w, o.interval, o.json, func(w io.Writer, rep *analyze.BufferReport) error {
		sent, received := ss.Input(), recv.Input()
		rep.SenderInput, rep.ReceiverInput = &sent, &received
		return writeReport(w, o.json, func(w io.Writer) error { return writeBufferJSON(w, rep, o.series) }, func(w io.Writer) { writeBufferText(w, rep) })
	})
	// analyze.Buffer, with the options of the command's runs.
	_, err = analyze.Run(ss, a.Sent(), analyze.RunOptions[[]analyze.BufferSender]{Stop: readingStopped})
	var rep *analyze.BufferReport
	if err == nil {
		rep, err = analyze.Run(recv, a, rs.runOptions(nil))
	}
	if err != nil {
		return tooManyPackets(err)
	}
	for _, wn := range rep.Warnings {
		warnf("%s", wn)
	}
	// The text first: a picture with nothing to draw leaves the report.
	if err := rs.totals(rep); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotBuffer(rep, o.plot); err != nil {
			return err
		}
	}
	return in.damaged(nil)
}

// writeBufferJSON writes the report, with the occupancy series if asked
// (a copy without them otherwise: --plot draws them).
func writeBufferJSON(w io.Writer, rep *analyze.BufferReport, series bool) error {
	if !series {
		c := *rep
		c.Senders = slices.Clone(rep.Senders)
		for i := range c.Senders {
			c.Senders[i].Series = nil
		}
		rep = &c
	}
	return writeJSON(w, rep)
}

func writeBufferText(w io.Writer, rep *analyze.BufferReport) {
	fmt.Fprintf(w, "receiver %s: %d data packets matched, %d sent and not seen there\n", rep.Receiver, rep.Matched, rep.Unmatched)
	for _, in := range []*analyze.Input{rep.ReceiverInput, rep.SenderInput} {
		if in != nil && unusable(*in) != "" {
			fmt.Fprintf(w, "%s: %s\n", termtext.Escape(strings.Join(in.Files, ", ")), strings.TrimPrefix(unusable(*in), "; "))
		}
	}
	for _, s := range rep.Senders {
		fmt.Fprintf(w, "\nsender %s: %s, %d data packets, %d matched; offset %s\n", termtext.Escape(s.File), units.Count(s.Flows, "flow"), s.Packets, s.Matched, units.FormatNs(s.OffsetNs))
		if !s.Congested {
			fmt.Fprintln(w, "  "+s.NoEstimate)
			continue
		}
		fmt.Fprintf(w, "  plateau          %s to %s after its first packet (%s long) at %d blocks = %.2f packets of %d bytes\n",
			units.FormatNs(s.PlateauStartNs-s.FirstNs), units.FormatNs(s.PlateauEndNs-s.FirstNs), units.FormatNs(s.PlateauEndNs-s.PlateauStartNs),
			s.PlateauBlocks, float64(s.PlateauBlocks)/float64(s.PacketBlocks), s.PacketBytes)
		fmt.Fprintf(w, "  drain            one packet every %s at the receiver; %.2f packets held while forwarding\n",
			units.FormatNs(s.DrainNs), s.HeldPackets)
		fmt.Fprintf(w, "  buffer           %d packets of %d blocks: estimate %d bytes (%s), between %d and %d bytes\n",
			s.BufferPackets, s.PacketBlocks, s.EstimateBytes, units.FormatBytes(uint64(max(0, s.EstimateBytes))), s.LowBytes, s.HighBytes)
	}
}

// maxPacketsHelp describes --max-packets for a command that keeps each
// data packet, bytesEach bytes of it.
func maxPacketsHelp(cmd string, bytesEach int) string {
	return fmt.Sprintf("stop past `N` data packets: %s keeps each one (up to %d bytes; at most %d)", cmd, bytesEach, analyze.MaxPacketsLimit)
}

func checkMaxPacketsFlag(n int) error {
	if n < 1 || n > analyze.MaxPacketsLimit {
		return fmt.Errorf("--max-packets %d: want 1 to %d", n, analyze.MaxPacketsLimit)
	}
	return nil
}

// tooManyPackets adds the flag that raises the bound to the error.
func tooManyPackets(err error) error {
	if errors.Is(err, analyze.ErrTooManyPackets) {
		return fmt.Errorf("%w, or raise --max-packets", err)
	}
	return err
}

// Command ibsim runs ibscope's link-level InfiniBand simulator: it reads a
// scenario (YAML or JSON) or takes a preset, and writes ERF captures,
// perfquery-style telemetry and truth.json (the ground truth) into a
// directory.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ibscope/ibscope/internal/cmddoc"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/internal/version"
	"github.com/ibscope/ibscope/sim"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

var (
	outDir       string
	preset       string
	seed         int64
	quantizeNs   int64
	snapBytes    int
	truthPackets bool
	listPresets  bool
	printOnly    bool
)

var rootCmd = &cobra.Command{
	Use:   "ibsim [SCENARIO.yaml|SCENARIO.json]",
	Short: "Simulate InfiniBand links with credit flow control, or RoCE with PFC, and write captures, telemetry and ground truth",
	Long: `ibsim simulates hosts, input-queued switches and links with credit-based
flow control and writes, into the output directory: one ERF pcap per tap
(data and flow-control packets, interface 0 = sent by the tapped port,
1 = received; --snap N keeps each packet's first N bytes, the ERF wlen its
length on the wire; a tap file named *.pcapng is pcapng, its interface
named after the port), perfquery.txt (port counters with PortXmitWait, one
snapshot per period, each stamped "# ts_ns=") and truth.json.

With link_layer: ethernet the links carry RoCEv2 frames, switch inputs
pause their upstream neighbours by PFC (switches[].pfc: xoff_bytes,
xon_bytes, headroom_bytes, pause_quanta, refresh_ns), flows[].ifa_every
sends IFA 2.0 probes that each switch stamps with its residence time and
queue depth, and truth.json lists every pause, per-hop queueing and probe
(docs/sim.md).

Every output stays inside the output directory (names in the scenario must
be relative, without ".."; no two may share a name) and appears there only
when the whole run has succeeded: a failed or interrupted run leaves none of
its files and replaces none of an earlier run's. A write error stops the run
at once. Numbers out of these ranges are refused before anything is
written, naming the key:
` + limitsHelp(sim.Limits) + `
A scenario holds at most:
` + limitsHelp(sim.SizeLimits) + `
and a run is refused if its flows send more than ` + fmt.Sprint(sim.MaxDataPackets) + ` data packets, take
more than ` + fmt.Sprint(uint64(sim.MaxEvents)) + ` simulator events across their paths (a send and an
arrival a hop for each packet), or imply more than ` + fmt.Sprint(sim.MaxPeriodicLines) + ` FCP timer
events or telemetry samples over the shortest the run can be (the last start, tail_ns and the time
the longest flow takes across its path), or if its captures would exceed ` + fmt.Sprint(sim.MaxCaptureBytes>>30) + ` GiB.
SIGINT or SIGTERM stops a run at once, at any size, and removes its files.

Presets: ` + fmt.Sprint(sim.PresetNames()),
	Example: `  ibsim --list-presets
  ibsim --preset incast2015 -o out/             two SDR senders into one receiver, 32 KiB per VL
  ibsim --preset incast2015 --snap 128 -o out/  taps keep headers only: 53 MB of captures, not 565
  ibsim --preset incast2015-roce -o out/        the same incast on 10 GbE RoCEv2 through a PFC switch
  ibsim scenario.yaml -o out/                   see sim/testdata/incast.yaml in the source
  ibsim --preset incast2015 --print             the scenario with its defaults, as YAML`,
	Args:          cobra.MaximumNArgs(1),
	SilenceUsage:  true,
	SilenceErrors: true,
	RunE:          run,
}

func init() {
	f := rootCmd.Flags()
	f.StringVarP(&outDir, "out", "o", "", "output directory (required unless --print or --list-presets)")
	f.StringVarP(&preset, "preset", "p", "", "run a preset instead of a scenario file")
	f.Int64Var(&seed, "seed", 0, "override the scenario's seed")
	f.Int64Var(&quantizeNs, "quantize-ns", 0, "override every tap's timestamp step in ns (1000 mimics ibdump, 0 keeps ns)")
	f.IntVar(&snapBytes, "snap", 0, "keep only the first N bytes of each packet at every tap that sets no snap_bytes, as ibcap -s (128 keeps the headers; 0 keeps all)")
	f.BoolVar(&truthPackets, "truth-packets", false, "list every data packet's queueing delay in truth.json")
	f.BoolVar(&listPresets, "list-presets", false, "list the presets and exit")
	f.BoolVar(&printOnly, "print", false, "print the scenario (defaults filled in) as YAML and exit")
	rootCmd.Version = version.Read().String()
	f.Bool("version", false, version.FlagUsage)
	rootCmd.SetVersionTemplate(version.Template)
}

// limitsHelp lists limits, one key a line.
func limitsHelp(limits []sim.Limit) string {
	var b strings.Builder
	for _, l := range limits {
		fmt.Fprintf(&b, "  %-24s %s to %s %s\n", l.Key, strconv.FormatFloat(l.Min, 'f', -1, 64), strconv.FormatFloat(l.Max, 'f', -1, 64), l.Unit)
	}
	return b.String()
}

func main() {
	if err := registerCompletions(); err != nil {
		fmt.Fprintln(os.Stderr, "ibsim:", err)
		os.Exit(1)
	}
	cmddoc.Main(rootCmd, manual) // "ibsim __docs DIR": man page and completions (make install)
	err := rootCmd.Execute()
	outfile.AwaitSignalExit() // a run whose outputs a signal removed ends with its status
	if err != nil {
		fmt.Fprintln(os.Stderr, "ibsim:", termtext.Lines(err.Error()))
		os.Exit(1)
	}
}

func run(cmd *cobra.Command, args []string) error {
	if listPresets {
		for _, n := range sim.PresetNames() {
			fmt.Println(n)
		}
		return nil
	}
	s, err := scenario(cmd, args)
	if err != nil {
		return err
	}
	if printOnly {
		if err := s.Validate(); err != nil {
			return err
		}
		return yaml.NewEncoder(os.Stdout).Encode(s)
	}
	if outDir == "" {
		return errors.New("--out DIR is required")
	}
	start := time.Now()
	defer outfile.RemoveOnSignal(func(sig os.Signal, _ int) {
		fmt.Fprintf(os.Stderr, "ibsim: %v: stopped; partial output removed\n", sig)
	})()
	t, err := sim.Run(s, outDir)
	if err != nil {
		return err
	}
	printRun(t, outDir, time.Since(start))
	return nil
}

// scenario is the scenario to run, from its file or --preset, with the
// command line's --seed, --quantize-ns, --snap and --truth-packets applied.
func scenario(cmd *cobra.Command, args []string) (*sim.Scenario, error) {
	var s *sim.Scenario
	var err error
	switch {
	case preset != "" && len(args) > 0:
		return nil, errors.New("give a scenario file or --preset, not both")
	case preset != "":
		s, err = sim.Preset(preset)
	case len(args) == 1:
		s, err = sim.LoadScenario(args[0])
	default:
		return nil, errors.New("give a scenario file or --preset NAME (see --list-presets)")
	}
	if err != nil {
		return nil, err
	}
	if cmd.Flags().Changed("seed") {
		s.Seed = seed
	}
	if cmd.Flags().Changed("quantize-ns") {
		if quantizeNs < 0 {
			return nil, fmt.Errorf("--quantize-ns %d: want 0 (keep ns) or a positive step", quantizeNs)
		}
		for i := range s.Taps {
			s.Taps[i].QuantizeNs = quantizeNs
		}
	}
	if snapBytes < 0 || (snapBytes > 0 && snapBytes < sim.MinSnapBytes) || snapBytes > 65535 {
		return nil, fmt.Errorf("--snap %d: want 0 (whole packets) or %d to 65535 bytes (at least the LRH and BTH)", snapBytes, sim.MinSnapBytes)
	}
	for i := range s.Taps {
		if s.Taps[i].SnapBytes == 0 {
			s.Taps[i].SnapBytes = snapBytes
		}
	}
	s.TruthPackets = s.TruthPackets || truthPackets
	return s, nil
}

// printRun says what the run wrote and what the truth holds: taps,
// telemetry, links, ports' buffers, pauses and waits, flows and hops.
func printRun(t *sim.Truth, outDir string, elapsed time.Duration) {
	fmt.Printf("%s: %d data packets, %d events, %.3f s simulated in %.2f s\n", t.Scenario, t.DataPackets, t.Events,
		float64(t.EndNs-t.StartNs)/1e9, elapsed.Seconds())
	for _, tp := range t.Taps {
		fmt.Printf("  tap %-6s %s (%d frames)\n", tp.Port, filepath.Join(outDir, tp.File), tp.Frames)
	}
	if t.Telemetry != nil {
		fmt.Printf("  telemetry %s (%d snapshots every %d ns)\n", filepath.Join(outDir, t.Telemetry.File), t.Telemetry.Samples, t.Telemetry.PeriodNs)
	}
	for _, l := range t.Links {
		if l.Gbps > 0 {
			w := sim.RoCEFrameWireBytes(t.MTUBytes)
			fmt.Printf("  link  %s <-> %s %d GbE: %.4g ns per byte (an MTU frame of %d bytes with preamble and gap every %.4g ns)\n",
				l.A, l.B, l.Gbps, l.NsPerByte, w, float64(w)*l.NsPerByte)
			continue
		}
		fmt.Printf("  link  %s <-> %s %s %dx: %.4g ns per byte (an MTU packet of %d bytes every %.4g ns), symbol %.4g ns\n",
			l.A, l.B, l.Rate, l.Lanes, l.NsPerByte, t.MTUBytes+26, float64(t.MTUBytes+26)*l.NsPerByte, l.SymbolNs)
	}
	for _, p := range t.Ports {
		for _, c := range p.PFC {
			fmt.Printf("  port %-6s PFC priority %d: xoff %d, xon %d, headroom %d bytes; pause %d quanta (%d ns), refresh %d ns: sent %d XOFF, %d XON; most queued %d bytes, %d headroom overflows\n",
				p.Port, c.Priority, c.XOFFBytes, c.XONBytes, c.HeadroomBytes, c.PauseQuanta, c.PauseNs, c.RefreshNs, c.XOFFFrames, c.XONFrames, c.MaxQueuedBytes, c.HeadroomOverflows)
		}
		if p.Switch && t.LinkLayer == "" {
			fmt.Printf("  port %-6s receive buffer per VL %v bytes\n", p.Port, p.VLBufferBytes)
		}
	}
	printPauses(t)
	for _, p := range t.Ports {
		if p.XmitWaitTicks == 0 {
			continue
		}
		fmt.Printf("  port %-6s PortXmitWait %d ticks of %g ns (%g symbols), waited %d ns in %d waits\n",
			p.Port, p.XmitWaitTicks, t.TickNs, p.TickSymbols, p.XmitWaitNs, p.Waits)
		var longest sim.Interval
		for _, iv := range p.Congestion {
			if iv.EndNs-iv.StartNs > longest.EndNs-longest.StartNs {
				longest = iv
			}
		}
		if len(p.Congestion) > 0 {
			fmt.Printf("  port %-6s longest congestion episode %d ns, from %s (episodes: %d)\n", p.Port, longest.EndNs-longest.StartNs,
				units.FormatNs(longest.StartNs-t.StartNs), len(p.Congestion))
		}
	}
	for _, f := range t.Flows {
		fmt.Printf("  flow  %s -> %s: %d packets, %s .. %s, mean queueing %d ns, max %d ns\n", f.Src, f.Dst, f.Packets,
			units.FormatNs(f.FirstNs-t.StartNs), units.FormatNs(f.LastNs-t.StartNs), f.MeanQueueNs, f.MaxQueueNs)
	}
	for _, h := range t.Hops {
		fmt.Printf("  hop   %s -> %s priority %d: %d packets, mean residence %d ns, max %d ns, mean queue %d bytes\n",
			h.In, h.Out, h.Priority, h.Packets, h.MeanResidenceNs, h.MaxResidenceNs, h.MeanQueueBytes)
	}
	if len(t.Probes) > 0 {
		fmt.Printf("  probes %d IFA probes delivered (truth.json lists each hop)\n", len(t.Probes))
	}
	fmt.Printf("  truth %s\n", filepath.Join(outDir, sim.TruthFile))
}

// printPauses sums, per paused port and priority, the pauses of an
// Ethernet run.
func printPauses(t *sim.Truth) {
	type key struct {
		port string
		prio int
	}
	type sum struct {
		ns, pauses int64
		ends       map[string]int
	}
	var order []key
	sums := map[key]*sum{}
	for _, p := range t.Pauses {
		k := key{p.Port, p.Priority}
		s := sums[k]
		if s == nil {
			s = &sum{ends: map[string]int{}}
			sums[k] = s
			order = append(order, k)
		}
		s.ns += p.PausedNs
		s.pauses++
		s.ends[p.End]++
	}
	for _, k := range order {
		s := sums[k]
		fmt.Printf("  port %-6s paused %d ns on priority %d in %d pauses (ended by xon %d, expiry %d, end of run %d)\n",
			k.port, s.ns, k.prio, s.pauses, s.ends[sim.PauseEndXON], s.ends[sim.PauseEndExpiry], s.ends[sim.PauseEndRun])
	}
}

// Command ibcap captures InfiniBand and RoCE traffic to pcap, pcapng or ERF
// files: from RDMA devices through a verbs sniffer QP, from Ethernet
// netdevs through an AF_PACKET ring; without -w it prints a decoded line
// per packet, as tcpdump, and -r reads a capture file instead of a device.
// It is also Wireshark's extcap program for these devices (extcap.go). It
// holds flags and output only; the capture itself is package capture's.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/cmddoc"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/internal/version"
)

type flags struct {
	device       string
	ibdumpDev    string // -d, ibdump's device flag
	file         string
	count        uint64
	duration     time.Duration
	snapLenBytes int
	ringKiB      int
	rotateMB     int64
	rotateSec    int
	maxFiles     int
	format       string
	qps, lids    []string
	opcodes      []string
	list         bool
	quiet        bool
	user         string
	all          bool
	filterExpr   string // -f, or the arguments after the flags
	packetBuf    bool   // -U
	tsType       string // -j
	listTsTypes  bool   // -J
	tsPrecision  string
	noPromisc    bool // -p
	port         int  // --port: the RDMA port of -i DEVICE
	telemetry    time.Duration
	metrics      metricsFlags
	extcap       extcapFlags
	ibdump       ibdumpFlags
	// tcpdump's
	readFile      string // -r
	verbose       int    // -v
	linkLevel     bool   // -e
	numeric       bool   // -n: accepted; addresses are always numbers
	lineBuffered  bool   // -l
	listLinkTypes bool   // -L
	linkType      string // -y
	direction     string // -Q
	filterFile    string // -F
	postRotate    string // -z
}

func main() {
	root := newRoot()
	if err := cmddoc.Register(root, completers); err != nil {
		fmt.Fprintln(os.Stderr, "ibcap:", err)
		os.Exit(1)
	}
	cmddoc.Main(root, manual) // "ibcap __docs DIR": man page and completions (make install)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ibcap:", termtext.Lines(err.Error()))
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "ibcap -i DEVICE [-w FILE] [FILTER EXPRESSION]",
		Short: "Capture InfiniBand and RoCE traffic",
		Long: `ibcap captures InfiniBand and RoCE packets with nanosecond timestamps and
accounts for every one: captured, written, filtered, dropped by the kernel or
by the device.

A filter expression (tcpdump's syntax, pcap-filter(7), compiled by libpcap)
says which frames are captured, in place of the default, RoCE only; the
--qp, --lid and --opcode header filters apply to what it keeps.

Native InfiniBand is written as ERF records (what Wireshark opens); RoCE as
Ethernet frames. Without -w, as tcpdump, ibcap prints one decoded line per
packet (-v adds the IP header's fields, -e the Ethernet addresses); -r FILE
reads a capture file instead of a device, to print it or, with -w, to copy
what the filters keep. SIGINT or SIGTERM stop the capture after draining the
ring.

In Wireshark, ibcap is an extcap program (make install links it into
Wireshark's extcap folder): each device appears as ibcap-NAME.`,
		Example: `  ibcap -D                              list RDMA devices and network interfaces
  ibcap -i mlx5_0 -w out.pcap           verbs sniffer on port 1 of mlx5_0
  ibcap -i mlx5_0:2 -w out.pcap         port 2
  ibcap -d mlx5_0 -i 2 -w out.pcap      the same, as ibdump takes it
  ibcap -i eth2 -w roce.pcap            RoCE on a netdev (AF_PACKET)
  ibcap -i eth2 -w - | wireshark -k -i -
  ibcap -i eth2 -w x.pcap udp port 4791 and host 10.0.0.1
  ibcap -i eth2 -v                      print each RoCE packet, decoded, as tcpdump
  ibcap -r x.pcap --qp 0x12 -w qp.pcap  copy one QP's packets out of a file
  ibcap -i eth2 -C 100 -z gzip -w r.pcap  compress each file once rotation closes it`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, args []string) error { return dispatch(cmd, &f, args) },
	}
	fl := cmd.Flags()
	addRootFlags(fl, &f)
	cmd.SetFlagErrorFunc(flagHint)
	cmd.Version = version.Read().String()
	fl.Bool("version", false, version.FlagUsage)
	cmd.SetVersionTemplate(version.Template)
	return cmd
}

// dispatch does what the command line asks. The order matters: -D and
// Wireshark's extcap calls answer without a capture; ibdump's and
// tcpdump's spellings (-d, -i NUMBER, --port, -F, the expression after
// the flags) are turned into ibcap's own before -J and -L list what the
// device named offers; only then does a capture run.
func dispatch(cmd *cobra.Command, f *flags, args []string) error {
	if f.list {
		return listDevices(os.Stdout)
	}
	if f.extcap.asked() {
		runCapture, err := extcapCall(os.Stdout, f)
		if err != nil || !runCapture {
			return err
		}
	} else if flag := extcapOnly(&f.extcap); flag != "" {
		return fmt.Errorf("%s is for Wireshark's extcap calls (with --extcap-dlts, --extcap-config or --capture); ibcap's own capture takes -i and -w", flag)
	}
	if err := ibdumpFlagsMapped(cmd.Flags(), f); err != nil {
		return err
	}
	if err := ibdumpDevice(f); err != nil {
		return err
	}
	if f.ibdumpDev == "" && f.readFile == "" {
		if err := interfaceByNumber(f); err != nil {
			return err
		}
	}
	if err := portFlag(f); err != nil {
		return err
	}
	if err := filterFromFile(f, args); err != nil {
		return err
	}
	if err := filterExpression(f, args); err != nil {
		return err
	}
	if f.listTsTypes {
		return listTimestampTypes(os.Stdout, f.device)
	}
	if f.listLinkTypes {
		return listLinkTypes(os.Stdout, f.device)
	}
	if err := checkPrecision(f.tsPrecision); err != nil {
		return err
	}
	return run(cmd.Context(), f)
}

// addRootFlags declares ibcap's flags in the order --help and the man
// page list them (SortFlags is off): where to capture from and to first,
// then printing, stopping, files, header filters and the rest, each
// group's flags from its own file last.
func addRootFlags(fl *pflag.FlagSet, f *flags) {
	fl.SortFlags = false
	fl.StringVarP(&f.device, "interface", "i", "", "RDMA device (mlx5_0, mlx5_0:2 for port 2), network interface (eth2), or the number -D gives either")
	fl.StringVarP(&f.ibdumpDev, "device", "d", "", "RDMA device, as ibdump's -d: -i is then the port number (-d mlx5_0 -i 2 is -i mlx5_0:2)")
	fl.StringVarP(&f.file, "write", "w", "", "file to write; - writes to stdout; without -w, ibcap prints one decoded line per packet")
	fl.StringVarP(&f.readFile, "read", "r", "", "read packets from this capture file (pcap, pcapng, ERF; - is stdin) instead of a device: print them, or with -w copy what the filters keep")
	fl.CountVarP(&f.verbose, "verbose", "v", "printing: add the IP header's DSCP, ECN, TTL, flow label and UDP source port")
	fl.BoolVarP(&f.linkLevel, "link-level", "e", false, "printing: add the Ethernet addresses and VLAN tags")
	fl.BoolVarP(&f.numeric, "numeric", "n", false, "accepted for tcpdump's sake: ibcap prints addresses as numbers always")
	fl.BoolVarP(&f.lineBuffered, "line-buffered", "l", false, "printing: write each line as its packet comes, with -r too (live it is the default), as tcpdump -l")
	fl.Uint64VarP(&f.count, "count", "c", 0, "stop after writing this many packets")
	fl.Var((*units.DurationNs)(&f.duration), "duration", "stop after this long (e.g. 30s, 5m)")
	fl.IntVarP(&f.snapLenBytes, "snaplen", "s", 0, "keep at most this many bytes of each packet (128 keeps the headers); 0 keeps all")
	fl.IntVarP(&f.ringKiB, "buffer-size", "B", 0, fmt.Sprintf("receive ring size in KiB (default %d; AF_PACKET uses 1 MiB blocks, at least 4)", capture.DefaultRingBytes>>10))
	fl.Int64VarP(&f.rotateMB, "file-size", "C", 0, "start a new file after this many MB (1,000,000 bytes); files are named FILE-00000.ext, FILE-00001.ext, ...")
	fl.IntVarP(&f.rotateSec, "rotate-seconds", "G", 0, "start a new file every this many seconds of packet time")
	fl.IntVarP(&f.maxFiles, "file-count", "W", 0, "keep at most this many files, reusing the names in a ring (with -C or -G)")
	fl.StringVarP(&f.postRotate, "postrotate-command", "z", "", "run this command with each file's name once rotation (-C, -G) closes it, as tcpdump -z (e.g. gzip); not on the last file, as tcpdump's")
	fl.StringVar(&f.format, "format", "auto", "file format: pcap, pcapng, erf-pcap (pcap of ERF records, link type 197), erf-raw (a raw .erf file, as tshark -F erf) or ib247 (auto: pcapng for -w *.pcapng, erf-raw for *.erf, otherwise pcap, with ERF records for native IB)")
	fl.StringSliceVar(&f.qps, "qp", nil, "keep packets to these destination QPs (decimal or 0x hex; repeat or comma-separate)")
	fl.StringSliceVar(&f.lids, "lid", nil, "keep native IB packets from or to these LIDs")
	fl.StringSliceVar(&f.opcodes, "opcode", nil, "keep packets with these BTH opcodes (RC_SEND_ONLY, ... or a number)")
	fl.BoolVarP(&f.list, "list-interfaces", "D", false, "list RDMA devices (ports, link layer, state, rate, netdev) and network interfaces")
	fl.BoolVarP(&f.packetBuf, "packet-buffered", "U", false, "write each packet out as soon as it is captured (for a reader of -w - that follows live); otherwise at least every second")
	fl.StringVarP(&f.tsType, "time-stamp-type", "j", "", "where timestamps come from: host, adapter (RDMA devices' default) or adapter_unsynced (a NIC's hardware clock); -J lists a device's")
	fl.BoolVarP(&f.listTsTypes, "list-time-stamp-types", "J", false, "list the time stamp types the -i device offers")
	fl.StringVar(&f.tsPrecision, "time-stamp-precision", "nano", "timestamp precision of the file: nano or micro (pcap's 0xa1b2c3d4 magic, pcapng's if_tsresol 6)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no status line and no final report")
	fl.StringVarP(&f.user, "relinquish-privileges", "Z", "", "switch to this user once the capture is open")
	fl.StringVarP(&f.filterFile, "filter-file", "F", "", "read the filter expression from this file (# starts a comment line)")
	fl.StringVarP(&f.direction, "direction", "Q", "", "keep packets that went this way: in, out or inout (AF_PACKET; ibdump's rx and tx too)")
	fl.BoolVarP(&f.listLinkTypes, "list-data-link-types", "L", false, "list the link types the -i device can be written with")
	fl.StringVarP(&f.linkType, "linktype", "y", "", "write (or print from) this link type (-L lists them): INFINIBAND on an InfiniBand port is --format ib247")
	fl.StringVarP(&f.filterExpr, "filter", "f", "", "capture filter in tcpdump's syntax, e.g. \"udp port 4791\" (or give it after the flags); replaces the RoCE-only default")
	fl.BoolVar(&f.all, "all", false, "capture every frame, not only RoCE (netdevs and RDMA Ethernet ports)")
	fl.BoolVarP(&f.noPromisc, "no-promiscuous-mode", "p", false, "leave the network interface out of promiscuous mode (on by default on a netdev, as tcpdump)")
	fl.Bool("promisc", true, "")
	fl.MarkDeprecated("promisc", "promiscuous mode is on by default on a netdev; -p turns it off")
	fl.IntVar(&f.port, "port", 0, "the RDMA port of -i DEVICE: -i mlx5_0 --port 2 is -i mlx5_0:2")
	addTelemetryFlag(fl, f)
	addMetricsFlags(fl, &f.metrics)
	addExtcapFlags(fl, &f.extcap)
	addIbdumpFlags(fl, &f.ibdump)
}

func run(parent context.Context, f *flags) error {
	p, err := planCapture(f)
	if err != nil {
		return err
	}
	format, filter, target := p.format, p.filter, p.target
	// Made before the capture opens, which tells it what happens to the
	// interface (Config.Notice).
	// Without -w (and --metrics), as tcpdump: a decoded line per packet
	// on stdout, and no status line among them.
	printing := f.file == "" && f.metrics.addr == ""
	live := f.readFile == ""
	status := newStatusLine(os.Stderr, !f.quiet && !printing && isTerminal(os.Stderr))
	src, err := openSource(f, p, status)
	if err != nil {
		return err
	}
	defer src.Close()
	var printer *packetPrinter
	var post *postRotate
	if printing {
		printer = startPrinter(os.Stdout, decode.SummaryOptions{Verbose: f.verbose > 0, Link: f.linkLevel}, live || f.lineBuffered)
		format = printFormat(format, f.linkType != "")
	} else if f.postRotate != "" {
		post = &postRotate{command: f.postRotate}
	}
	w, err := openWriter(f, format, target, src, printer, post)
	if err != nil {
		if printer != nil {
			printer.finish()
		}
		return err
	}

	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.file == "-" || printing {
		// When stdout's reader goes away (wireshark closed, head -c), a
		// write fails with EPIPE instead of SIGPIPE killing ibcap before
		// it can report what it captured.
		sigpipe := make(chan os.Signal, 1)
		signal.Notify(sigpipe, syscall.SIGPIPE)
		defer signal.Stop(sigpipe)
	}
	stopTelemetry, err := startTelemetry(f, p.tel)
	if err != nil {
		w.Close()
		return err
	}
	lm, err := startMetrics(f, target, src, filter, func() int { return len(w.Files()) })
	if err != nil {
		w.Close()
		return errors.Join(err, stopTelemetry())
	}
	if !f.quiet {
		announce(os.Stderr, f, src, w, format, live, printing)
	}
	rep, runErr := capture.Run(ctx, lm.source(src), w, capture.RunOptions{
		Count:          f.count,
		Duration:       f.duration,
		Filter:         filter,
		Status:         lm.status(status.update),
		Direction:      p.dir,
		PacketBuffered: f.packetBuf || (printing && (live || f.lineBuffered)),
	})
	status.clear()
	runErr, closeErr := closeOutput(w, printer, runErr)
	return errors.Join(reportRun(f, rep, w, runErr, closeErr), stopTelemetry(), lm.finish(rep), post.finish())
}

// capturePlan is what the flags ask of a capture, checked and looked up
// before anything is opened.
type capturePlan struct {
	format capture.Format
	filter *capture.Filter
	dir    decode.Direction
	target capture.Target  // what -i names, or the -r file
	tel    *capture.Target // --telemetry's port, nil without it
}

// planCapture checks the flags and looks up what -i names once: the
// backend, RDMA port and netdev that the capture, its notes, --telemetry
// and --metrics all use (a file, -r, is its own target). Every mistake
// it finds, --telemetry's included, is found before a capture file is
// created.
func planCapture(f *flags) (capturePlan, error) {
	var p capturePlan
	var err error
	if p.format, p.filter, err = checkFlags(f); err != nil {
		return p, err
	}
	if p.dir, err = parseDirection(f.direction); err != nil {
		return p, err
	}
	p.target = capture.Target{Name: f.readFile}
	if f.readFile == "" {
		if p.target, err = capture.Resolve(f.device, ""); err != nil {
			return p, err
		}
	}
	if err := checkDirection(f, p.target); err != nil {
		return p, err
	}
	if p.format, err = linkTypeFormat(f, p.target, p.format); err != nil {
		return p, err
	}
	if p.tel, err = telemetryTarget(f, p.target); err != nil {
		return p, err
	}
	return p, nil
}

// announce says on stderr what the capture reads and where it goes, once
// the source and the writer are open: the device and file as they turned
// out, and the format with the link type the writer chose.
func announce(stderr io.Writer, f *flags, src capture.Source, w *capture.Writer, format capture.Format, live, printing bool) {
	switch {
	case !live:
		fmt.Fprintf(stderr, "ibcap: reading %s, link type %d\n", src.Device(), src.LinkType())
	case printing:
		fmt.Fprintf(stderr, "ibcap: capturing on %s, link type %s, printing each packet (-w FILE writes them)\n", src.Device(), linkTypeNamed(w.LinkType()))
	default:
		fmt.Fprintf(stderr, "ibcap: capturing on %s to %s (%s)\n", src.Device(), outputName(f), describeFormat(format.ForFile(f.file), w.LinkType(), f.tsPrecision))
	}
}

// closeOutput closes the writer and then the printer once the capture
// has stopped, and sorts out which error is whose: a write error Run met
// is not reported twice, and when the printer failed (stdout gone), its
// error replaces the closed pipe the capture met because of it.
func closeOutput(w *capture.Writer, printer *packetPrinter, runErr error) (error, error) {
	closeErr := w.Close()
	if errors.Is(runErr, closeErr) {
		closeErr = nil // the write error Run met, which Close returns again
	}
	if printer != nil {
		if err := printer.finish(); err != nil {
			runErr, closeErr = err, nil
		}
	}
	return runErr, closeErr
}

// checkFlags checks what the flags ask before anything is opened, and
// returns the file format and the header filter they give.
func checkFlags(f *flags) (capture.Format, *capture.Filter, error) {
	var format capture.Format
	if err := checkReadFile(f); err != nil {
		return format, nil, err
	}
	if f.postRotate != "" && f.rotateMB == 0 && f.rotateSec == 0 {
		return format, nil, fmt.Errorf("-z %s runs on each file rotation closes: give -C or -G too", f.postRotate)
	}
	if f.file == "" && (f.rotateMB > 0 || f.rotateSec > 0) {
		// Said before the capture opens, not as "cannot rotate ... stdout".
		return format, nil, errors.New("-C and -G start new files of -w FILE: give -w (without it ibcap prints each packet)")
	}
	if err := f.metrics.check(); err != nil {
		return format, nil, err
	}
	format, err := capture.ParseFormat(f.format)
	if err != nil {
		return format, nil, err
	}
	if f.format == capture.FormatERFOldName && !f.quiet {
		fmt.Fprintln(os.Stderr, "ibcap: note: --format erf is the old name of erf-pcap: a pcap of ERF records (link type 197), "+
			"not the raw .erf file tshark -F erf writes (that is --format erf-raw)")
	}
	filter, err := parseFilter(f)
	if err != nil {
		return format, nil, err
	}
	if err := checkNumbers(f); err != nil {
		return format, nil, err
	}
	return format, filter, nil
}

// openSource opens the capture on the plan's target, notes what the user
// should know of it, and drops privileges (-Z) once it is open.
func openSource(f *flags, p capturePlan, status *statusLine) (capture.Source, error) {
	target, filter := p.target, p.filter
	notice := func(msg string) {
		if !f.quiet {
			status.note("ibcap: " + msg)
		}
	}
	if f.readFile != "" {
		return capture.OpenFile(f.readFile, &capture.Config{SnapLenBytes: f.snapLenBytes, FilterExpr: f.filterExpr, Notice: notice})
	}
	src, err := capture.OpenTarget(target, &capture.Config{
		SnapLenBytes:  f.snapLenBytes,
		RingBytes:     f.ringKiB << 10,
		All:           f.all,
		FilterExpr:    f.filterExpr,
		TimestampType: f.tsType,
		Promiscuous:   !f.noPromisc && target.Netdev != "", // a netdev's, as tcpdump's: not any's, not a verbs port's
		Direction:     p.dir,
		Notice:        notice,
	})
	if err != nil {
		return nil, err
	}
	if len(filter.LIDs) > 0 && src.LinkType() != decode.LinkTypeInfiniBand {
		src.Close()
		return nil, fmt.Errorf("--lid: %s gives Ethernet (RoCE) frames, which carry no LID, so nothing would be written; "+
			"filter RoCE by --qp or --opcode", src.Device())
	}
	if note := targetNote(target); note != "" && !f.quiet {
		fmt.Fprintln(os.Stderr, "ibcap: note: "+note)
	}
	if f.user != "" {
		if err := capture.DropPrivileges(f.user); err != nil {
			src.Close()
			return nil, err
		}
	}
	return src, nil
}

// openWriter creates the output (-w, or nothing with --metrics alone) in
// the format asked, with what a pcapng file says of its capture.
func openWriter(f *flags, format capture.Format, target capture.Target, src capture.Source, printer *packetPrinter, post *postRotate) (*capture.Writer, error) {
	snap := f.snapLenBytes
	if snap == 0 {
		snap = capture.DefaultSnapLenBytes
	}
	path, out := f.file, io.Writer(nil)
	switch {
	case printer != nil:
		path, out = "-", printer.pipe()
	case path == "":
		path, out = "-", io.Discard // --metrics alone: capture and count, write nothing
	}
	var fileDone func(string)
	if post != nil {
		fileDone = post.fileDone
	}
	w, err := capture.NewWriter(capture.WriterConfig{
		Path:          path,
		Stdout:        out,
		Format:        format,
		LinkType:      src.LinkType(),
		SnapLenBytes:  snap,
		RotateBytes:   f.rotateMB * 1_000_000,
		RotateEveryNs: int64(f.rotateSec) * 1e9,
		MaxFiles:      f.maxFiles,
		Micro:         f.tsPrecision == "micro",
		// What a pcapng file says of its capture, as dumpcap's do.
		SectionOptions:   sectionOptions(),
		InterfaceOptions: interfaceOptions(f, target, src),
		Counts:           capture.InterfaceCounts(src),
		FileDone:         fileDone,
	})
	if err != nil {
		if f.user != "" && errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%w (the file is created after switching to user %s, as with tcpdump -Z)", err, f.user)
		}
		return nil, err
	}
	return w, nil
}

// reportRun tells on stderr how the capture ended (unless --quiet): the
// report and the files written. It returns the run's and the close's
// errors, but none when the reader of stdout (or of Wireshark's FIFO)
// closed the pipe: that ended the capture as a count or a signal would.
func reportRun(f *flags, rep capture.Report, w *capture.Writer, runErr, closeErr error) error {
	pipe := f.file == "-" || f.file == "" || f.extcap.fifo != "" // stdout (written or printed), or Wireshark's FIFO
	readerGone := pipe && (errors.Is(runErr, syscall.EPIPE) || errors.Is(closeErr, syscall.EPIPE))
	if readerGone {
		runErr, closeErr = nil, nil // the reader's choice to stop, as a count or a signal would be
	}
	if !f.quiet {
		if readerGone {
			fmt.Fprintln(os.Stderr, "ibcap: the reader of stdout closed the pipe: capture stopped")
		}
		if f.readFile != "" {
			// A file has no drops nor a capture time to tell.
			done := fmt.Sprintf("written (%s)", units.Count(rep.Bytes, "byte"))
			if f.file == "" {
				done = "printed"
			}
			fmt.Fprintf(os.Stderr, "%s read from %s: %d %s, %d filtered out\n", units.Count(rep.Captured, "packet"), f.readFile, rep.Written, done, rep.Filtered)
		} else {
			fmt.Fprint(os.Stderr, rep.String())
		}
		if files := w.Files(); f.maxFiles > 0 && len(files) > f.maxFiles {
			fmt.Fprintf(os.Stderr, "%d files, the last %d kept (-W): the newest is %s\n", len(files), f.maxFiles, files[len(files)-1])
		} else if len(files) > 1 {
			fmt.Fprintf(os.Stderr, "%d files: %s ... %s\n", len(files), files[0], files[len(files)-1])
		}
	}
	return errors.Join(runErr, closeErr)
}

// Bounds of the numeric flags: beyond them a value is a typo (or would
// overflow once turned into bytes or ns).
const (
	maxRingKiB     = 16 << 20      // -B: a 16 GiB ring
	maxRotateMB    = 1_000_000_000 // -C: a petabyte per file
	maxRotateSec   = 366 * 86400   // -G: a year of packet time per file
	maxFiles       = 1_000_000     // -W
	maxDurationStr = "a year"
	maxDuration    = 366 * 24 * time.Hour // --duration
)

// checkNumbers refuses numeric flags out of range, naming the flag. 0 keeps
// each one's meaning of "no limit" or "the default".
func checkNumbers(f *flags) error {
	switch {
	case f.duration < 0 || f.duration > maxDuration:
		return fmt.Errorf("--duration %v: want 0 (no limit) up to %s", f.duration, maxDurationStr)
	case f.snapLenBytes < 0 || f.snapLenBytes > capture.DefaultSnapLenBytes:
		return fmt.Errorf("-s %d: want 0 (whole packets) up to %d bytes", f.snapLenBytes, capture.DefaultSnapLenBytes)
	case f.ringKiB < 0 || f.ringKiB > maxRingKiB:
		return fmt.Errorf("-B %d: want 0 (the default %d KiB) up to %d KiB", f.ringKiB, capture.DefaultRingBytes>>10, maxRingKiB)
	case f.rotateMB < 0 || f.rotateMB > maxRotateMB:
		return fmt.Errorf("-C %d: want 0 (no size rotation) up to %d MB", f.rotateMB, maxRotateMB)
	case f.rotateSec < 0 || f.rotateSec > maxRotateSec:
		return fmt.Errorf("-G %d: want 0 (no time rotation) up to %d seconds", f.rotateSec, maxRotateSec)
	case f.maxFiles < 0 || f.maxFiles > maxFiles:
		return fmt.Errorf("-W %d: want 0 (keep every file) up to %d files", f.maxFiles, maxFiles)
	}
	return nil
}

func parseFilter(f *flags) (*capture.Filter, error) {
	var flt capture.Filter
	for _, s := range f.qps {
		qp, err := capture.ParseQP(s)
		if err != nil {
			return nil, fmt.Errorf("--qp: %w", err)
		}
		flt.QPs = append(flt.QPs, qp)
	}
	for _, s := range f.lids {
		lid, err := capture.ParseLID(s)
		if err != nil {
			return nil, fmt.Errorf("--lid: %w", err)
		}
		flt.LIDs = append(flt.LIDs, lid)
	}
	for _, s := range f.opcodes {
		op, err := decode.ParseOpcode(s)
		if err != nil {
			return nil, fmt.Errorf("--opcode: %w", err)
		}
		flt.Opcodes = append(flt.Opcodes, op)
	}
	return &flt, nil
}

// sectionOptions describe the machine and the program in a pcapng file's
// section header, and name the host in a comment (which export's tables
// carry on as ibscope.capture_hosts).
func sectionOptions() []capfile.NgOption {
	opts := []capfile.NgOption{
		capfile.NgString(capfile.NgOptSHBHardware, runtime.GOARCH),
		capfile.NgString(capfile.NgOptSHBOS, osName()),
		capfile.NgString(capfile.NgOptSHBUserAppl, version.Application("ibcap")),
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		opts = append(opts, capfile.NgCaptureHost(host))
	}
	return opts
}

// osName is the operating system and, on Linux, its kernel release.
func osName() string {
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return runtime.GOOS + " " + strings.TrimSpace(string(rel))
	}
	return runtime.GOOS
}

// interfaceOptions describe the capture's interface in a pcapng file: its
// name as -i gave it (mlx5_0:1, eth2, rxe0), the device, port, link layer
// and rate, and the filter that chose the frames.
func interfaceOptions(f *flags, t capture.Target, src capture.Source) []capfile.NgOption {
	desc := "network interface " + src.Device() + " (AF_PACKET)"
	hardware := ""
	switch {
	case f.readFile != "":
		desc = "read from the capture file " + f.readFile
	case t.Backend == capture.BackendVerbs:
		desc = fmt.Sprintf("RDMA device %s port %d, %s link layer, %s", t.Device.Name, t.Port.Num, t.Port.LinkLayer, t.Port.Rate)
		hardware = t.Device.Name
	case t.Device.SoftRoCE && t.Name != t.Netdev:
		desc = fmt.Sprintf("RDMA device %s port %d, software RoCE on network interface %s (AF_PACKET), %s",
			t.Device.Name, t.Port.Num, t.Netdev, t.Port.Rate)
		hardware = t.Device.Name
	case t.Name == capture.AnyDevice:
		desc = "every network interface (AF_PACKET, Linux cooked v2 records naming each frame's interface)"
	}
	opts := []capfile.NgOption{
		capfile.NgString(capfile.NgOptIfName, cmp.Or(f.device, f.readFile)),
		capfile.NgString(capfile.NgOptIfDescription, desc),
	}
	switch {
	case f.filterExpr != "":
		opts = append(opts, capfile.NgFilter(f.filterExpr))
	case !f.all && f.readFile == "" && (src.LinkType() == decode.LinkTypeEthernet || src.LinkType() == decode.LinkTypeLinuxSLL2):
		opts = append(opts, capfile.NgFilter(capture.RoCEFilterExpr))
	}
	opts = append(opts, capfile.NgString(capfile.NgOptIfOS, osName()))
	if hardware != "" {
		opts = append(opts, capfile.NgString(capfile.NgOptIfHardware, hardware))
	}
	return opts
}

func describeFormat(f capture.Format, linkType int, precision string) string {
	if f == capture.FormatAuto {
		f = capture.FormatPcap // what auto writes, with ERF records for native IB
	}
	if f == capture.FormatERFRaw {
		return "erf-raw, ERF records with no pcap header, ns timestamps"
	}
	unit := "ns"
	if precision == "micro" {
		unit = "us"
	}
	return fmt.Sprintf("%s, link type %d, %s timestamps", f, linkType, unit)
}

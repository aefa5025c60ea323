package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/filter"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/spf13/cobra"
)

type decodeOpts struct {
	count   int
	json    bool
	noCRC   bool
	summary bool
	// lineBuffered writes each frame as it is decoded (-l, as tcpdump's),
	// as it does anyway when the input is a pipe, a FIFO or a terminal.
	lineBuffered bool
	summaryOpts  decode.SummaryOptions // -e, -v
}

func init() {
	var o decodeOpts
	cmd := &cobra.Command{
		Use:   "decode FILE...",
		Short: "Print every IB/RoCE frame: one line each, or JSON Lines with --json",
		Long: `decode reads pcap or pcapng captures (Ethernet, ERF, LINKTYPE_INFINIBAND,
Linux SLL/SLL2) and prints each InfiniBand or RoCE frame: time, addresses,
transport, opcode, QP, PSN, lengths and CRC status. Frames that are not IB or
RoCE are counted and skipped. A frame cut by the snap length (ibcap -s) has
its headers decoded and its CRCs left unchecked; stderr says how many frames
were cut and names the first. The exit code is non-zero when any file or frame
could not be decoded (a frame cut inside its headers is one).

` + selectHelp + `

When the input is a pipe, a FIFO or a terminal (ibcap -w - -U | ibanalyze
decode -), each frame is written as it comes; -l does so for any input.`,
		Example: `  ibanalyze decode capture.pcap               one line per frame
  ibanalyze decode --json capture.pcap        JSON Lines, one object per frame
  ibanalyze decode --summary *.pcap           per file: frames, decoded, skipped, errors, bad CRCs
  ibanalyze decode -e -v capture.pcap         + MACs, VLAN tags, DSCP, ECN, TTL, UDP source port
  ibanalyze decode -Y 'qp == 0x11 && opcode == "RC_SEND_ONLY"' capture.pcap
  ibcap -i eth2 -w - -U | ibanalyze decode -  live: each frame as it comes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDecode(cmd.OutOrStdout(), args, o) },
	}
	cmd.Flags().IntVarP(&o.count, "count", "c", 0, "stop after `N` frames per file (with --select, --from or --to: N selected) (0: all)")
	addSelectFlags(cmd.Flags(), &selected, false)
	cmd.Flags().BoolVar(&o.json, "json", false, "JSON Lines, one object per frame (the decode contract)")
	cmd.Flags().BoolVar(&o.noCRC, "no-crc", false, "do not verify ICRC/VCRC/LPCRC")
	cmd.Flags().BoolVarP(&o.summaryOpts.Link, "link", "e", false, "text: each frame's Ethernet addresses and VLAN tags (ID, PCP), as tcpdump -e")
	cmd.Flags().BoolVarP(&o.summaryOpts.Verbose, "verbose", "v", false, "text: each RoCEv2 frame's DSCP, ECN, TTL or hop limit, IPv6 flow label and UDP source port, as tcpdump -v")
	cmd.Flags().BoolVarP(&o.lineBuffered, "line-buffered", "l", false, "write each frame as it is decoded (the default when the input is a pipe, a FIFO or a terminal)")
	cmd.Flags().BoolVar(&o.summary, "summary", false, "print only each file's counts (frames, decoded, skipped, errors, bad CRCs)")
	takesCaptures(cmd)
	rootCmd.AddCommand(cmd)
}

// decodeTally counts what one file held.
type decodeTally struct {
	frames, decoded, skipped, errors, cut, icrcBad, vcrcBad int
	// cutHeaders counts the cut frames that lost part of their headers (no
	// whole BTH): those are failures, not just unchecked CRCs.
	cutHeaders int
	// firstCut names the first frame cut by the snap length, for the warning.
	firstCut string
}

func (t decodeTally) String() string {
	return fmt.Sprintf("%s, %d IB/RoCE decoded, %d skipped (not IB/RoCE), %d could not be decoded, %d cut by the snap length (CRCs not checked), %d bad ICRC, %d bad VCRC/LPCRC",
		units.Count(t.frames, "frame"), t.decoded, t.skipped, t.errors, t.cut, t.icrcBad, t.vcrcBad)
}

// maxWarnings bounds the per-file messages on stderr about frames that could
// not be decoded; the count is always reported.
const maxWarnings = 20

func runDecode(stdout io.Writer, paths []string, o decodeOpts) error {
	sel, err := selected.selection()
	if err != nil {
		return err
	}
	nworkers, err := workers(!o.summary || readAheadPays(paths))
	if err != nil {
		return err
	}
	if sel != nil {
		sel.Count = o.count
	}
	var format func([]byte, *decode.Frame, error) []byte // the lines, on the workers with -j
	if !o.summary {
		format = o.line
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	defer w.Flush()
	failed := false
	for _, path := range paths {
		if !decodePath(w, path, o, sel, nworkers, format) {
			failed = true
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if failed {
		return errReported
	}
	return nil
}

// decodePath prints the frames of one file, on a stream of its own (each
// file is printed and counted on its own), then its counts, and reports
// whether it went well: not when the file could not be opened or read to
// its end, or has frames that could not be decoded or were cut inside
// their IB headers.
func decodePath(w *bufio.Writer, path string, o decodeOpts, sel *filter.Selection, nworkers int, format func([]byte, *decode.Frame, error) []byte) bool {
	var damaged error
	// decodeFile reads the frames' heads only (the lines are
	// Format's), unless a filter reads more: on the workers, the
	// frames then stay in their cores' caches.
	heads := sel == nil || sel.Filter == nil || sel.Filter.HeadOnly()
	// A filter on the Ethernet, IP and BTH fields has --summary decode
	// the heads with those fields (HeadFields), on the caller's
	// goroutine: the workers' heads cross without them.
	var headFields decode.HeadFields
	if o.summary && !heads {
		if hf, ok := sel.Filter.Head(); ok {
			headFields = hf
		}
	}
	// --summary counts from the heads alone; of every frame, on the
	// workers with -j, a batch at a time (tallyBatches).
	var project func(int) capfile.Projection
	if o.summary && sel == nil && o.count == 0 {
		project = func(int) capfile.Projection { return new(summaryBatch) }
	}
	// --summary with a filter alone has the stream test it (Keep) on each
	// frame it decodes without error: tested here, with the selection's
	// tests of what is not set, it cost a third more.
	var keep func(*decode.Frame) bool
	if o.summary {
		keep = sel.FilterOnly()
	}
	s, err := capfile.OpenStream([]string{path}, capfile.StreamOptions{CheckCRC: !o.noCRC, Undecoded: true, Untimed: true, Workers: nworkers, Format: format, Map: true,
		Project: project, Keep: keep, Heads: heads, HeadsOnly: heads && o.summary || headFields != 0, HeadFields: headFields, OnFileError: func(err error) { damaged = err }})
	if err != nil { // a file never opened has no counts to report
		warnf("%v", err)
		return false
	}
	fo := o
	fo.lineBuffered = o.lineBuffered || liveInput(path)
	var fileSel *filter.Selection
	if sel != nil {
		c := *sel // each file counted and timed on its own
		fileSel = &c
	}
	var t decodeTally
	if project != nil && s.Batched() {
		t = tallyBatches(s, path, o.json)
	} else {
		t, err = decodeFile(w, s, path, fo, fileSel, keep != nil)
	}
	s.Close()
	fileErrors := 0
	if damaged != nil {
		fileErrors = 1
	}
	if err == nil {
		err = damaged // what came before it was printed
	}
	if err != nil {
		warnf("%v", err)
	}
	// A snap length is chosen on purpose (headers only, at high rates), so
	// frames cut after their headers are reported, not failed.
	if t.cut > 0 {
		warnf("%s: %s cut by the snap length, CRCs not checked; the first is %s", path, units.Count(t.cut, "frame"), t.firstCut)
	}
	if t.cutHeaders > 0 {
		warnf("%s: %s cut inside the IB headers (no whole BTH): the snap length is too short for them", path, units.Count(t.cutHeaders, "frame"))
	}
	switch {
	case o.summary && o.json:
		writeJSON(w, map[string]any{"file": path, "frames": t.frames, "decoded": t.decoded, "skipped": t.skipped,
			"errors": t.errors, "cut": t.cut, "cut_headers": t.cutHeaders, "file_errors": fileErrors, "icrc_bad": t.icrcBad, "vcrc_bad": t.vcrcBad})
	case o.summary:
		fmt.Fprintf(w, "%s: %s\n", termtext.Escape(path), t)
	case !o.json || t.errors > 0 || t.cut > 0 || err != nil:
		warnf("%s: %s", path, t)
	}
	return err == nil && t.errors == 0 && t.cutHeaders == 0
}

// decodeFile decodes, counts and prints the frames of s, those sel selects;
// streamKept says s was opened with sel's filter as its Keep (a filter
// alone: decodePath), which then has left out the frames it decoded
// whole and did not select.
func decodeFile(w *bufio.Writer, s *capfile.Stream, path string, o decodeOpts, sel *filter.Selection, streamKept bool) (decodeTally, error) {
	var t decodeTally
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	prog := newProgress(path, size, o.json)
	defer prog.done()
	for o.count == 0 || sel != nil || t.frames < o.count {
		f, _, err := s.Next()
		if err == io.EOF {
			break
		}
		// The stream left out what streamKept says; a frame with an
		// error it hands out to be tested here.
		if sel != nil && (err == nil && !streamKept || err != nil && f.Decoded()) {
			keep, done := sel.Keep(f)
			if done {
				break
			}
			if !keep {
				continue
			}
		}
		// Next returns no error but a *DecodeError (Undecoded); a type
		// assertion, unlike errors.As(err, &de), does not move de to the heap:
		// that was an allocation per frame, and the GC cycles it brought.
		de, _ := err.(*capfile.DecodeError)
		if de != nil {
			t.failed(path, de)
		}
		t.frames++
		if t.frames&0x3FFF == 0 {
			prog.update(t.frames, f.Offset)
		}
		// What a frame counts as: summaryBatch.Project counts the same
		// on the workers (TestJobsSameDecodeSummary), apart from this
		// loop, whose every instruction each frame pays for.
		if err == nil && !f.Decoded() {
			t.skipped++
			continue
		}
		if err == nil {
			t.decoded++
		}
		if f.Truncated() {
			t.cut++
			if f.Has&(decode.HasBTH|decode.HasPFC|decode.HasPause) == 0 && f.Transport != decode.TransportLink {
				t.cutHeaders++
			}
			if t.cut == 1 {
				t.firstCut = cutFrame(f.Number, f.Offset, f.CapLen, f.WireLen)
			}
		}
		if f.Has&decode.CRCsCheck != 0 {
			if f.Has&decode.HasICRC != 0 && !f.ICRCOK {
				t.icrcBad++
			}
			if f.Has&decode.HasVCRC != 0 && !f.VCRCOK {
				t.vcrcBad++
			}
		}
		if o.summary {
			continue
		}
		if _, err := w.Write(s.Text()); err != nil {
			return t, fmt.Errorf("write output: %w", err)
		}
		if o.lineBuffered {
			if err := w.Flush(); err != nil {
				return t, fmt.Errorf("write output: %w", err)
			}
		}
	}
	return t, nil
}

// line is frame f's line, err the error the stream gave with it (a
// *capfile.DecodeError or nil): text, or a JSON object with --json, none
// for a frame that is not IB or RoCE. The stream's workers run it on the frames as they decode them.
func (o decodeOpts) line(dst []byte, f *decode.Frame, err error) []byte {
	if err == nil && !f.Decoded() {
		return dst
	}
	msg := ""
	if de, _ := err.(*capfile.DecodeError); de != nil { // no errors.As: de would move to the heap
		msg = de.Err.Error()
	}
	if o.json {
		return append(f.AppendJSON(dst, msg), '\n')
	}
	return f.AppendSummaryWith(dst, msg, o.summaryOpts)
}

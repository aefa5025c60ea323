package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
)

// tcpdump's hands: the flags a tcpdump user reaches for, where ibcap has
// a meaning for them.

// maxFilterFileBytes bounds -F's file: a filter expression, not a data set.
const maxFilterFileBytes = 1 << 20

// filterFromFile takes -F FILE, the filter expression read from a file as
// tcpdump's -F: lines starting with # are comments. It refuses an
// expression given as well (-f or after the flags), where tcpdump
// silently ignores it.
func filterFromFile(f *flags, args []string) error {
	if f.filterFile == "" {
		return nil
	}
	if f.filterExpr != "" || len(args) > 0 {
		return fmt.Errorf("-F %s and a filter expression (-f or after the flags): give one", f.filterFile)
	}
	fh, err := os.Open(f.filterFile)
	if err != nil {
		return fmt.Errorf("-F: %w", err)
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxFilterFileBytes+1))
	if err != nil {
		return fmt.Errorf("-F: read %s: %w", f.filterFile, err)
	}
	if len(b) > maxFilterFileBytes {
		return fmt.Errorf("-F %s: more than %d bytes; a filter expression is shorter", f.filterFile, maxFilterFileBytes)
	}
	var words []string
	for _, l := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			words = append(words, t)
		}
	}
	if len(words) == 0 {
		return fmt.Errorf("-F %s: no filter expression in the file", f.filterFile)
	}
	f.filterExpr = strings.Join(words, " ")
	return nil
}

// parseDirection takes -Q: in, out or inout (tcpdump's words), and
// ibdump's rx and tx (its --direction).
func parseDirection(s string) (decode.Direction, error) {
	switch s {
	case "", "inout":
		return decode.DirectionUnknown, nil
	case "in", "rx":
		return decode.DirectionInbound, nil
	case "out", "tx":
		return decode.DirectionOutbound, nil
	}
	return 0, fmt.Errorf("-Q %q: want in, out or inout", s)
}

// checkDirection refuses -Q where the capture cannot tell which way a
// packet went: the verbs sniffer, and a file.
func checkDirection(f *flags, t capture.Target) error {
	if f.direction == "" || f.direction == "inout" {
		return nil
	}
	switch {
	case f.readFile != "":
		return fmt.Errorf("-Q %s and -r: a capture file's packets are chosen by direction only live; a pcapng file's direction is in tshark's frame.packet_flags_direction", f.direction)
	case t.Backend == capture.BackendVerbs:
		return fmt.Errorf("-Q %s: the verbs sniffer on %s does not say which way a packet went; capture the port's netdev (-i %s) for -Q, or choose by address with a filter expression", f.direction, t.Name, orDash(t.Port.Netdev))
	}
	return nil
}

// linkTypeChoice is one link type -L lists for a device and -y picks: the
// pcap name, what it is, and the --format that writes it.
type linkTypeChoice struct {
	name, words string
	format      capture.Format
}

// linkTypeChoices are the link types ibcap can write a target's packets
// with, the default first.
func linkTypeChoices(t capture.Target) ([]linkTypeChoice, error) {
	switch {
	case t.Backend == capture.BackendVerbs && t.Port.LinkLayer == "InfiniBand":
		return []linkTypeChoice{
			{"ERF", "InfiniBand in ERF records, what Wireshark opens", capture.FormatAuto},
			{"INFINIBAND", "InfiniBand, LRH first (LINKTYPE_INFINIBAND 247)", capture.FormatIB247},
		}, nil
	case t.Name == capture.AnyDevice:
		return []linkTypeChoice{{"LINUX_SLL2", "Linux cooked v2", capture.FormatAuto}}, nil
	}
	return []linkTypeChoice{{"EN10MB", "Ethernet", capture.FormatAuto}}, nil
}

// listLinkTypes prints what -y takes on the device, as tcpdump -L.
func listLinkTypes(out io.Writer, device string) error {
	if device == "" {
		return errors.New("-L: give -i DEVICE")
	}
	t, err := capture.Resolve(device, "")
	if err != nil {
		return err
	}
	choices, err := linkTypeChoices(t)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Data link types for %s (use option -y to set):\n", device)
	for _, c := range choices {
		fmt.Fprintf(out, "  %s (%s)\n", c.name, c.words)
	}
	return nil
}

// linkTypeFormat is the file format -y NAME asks of the target, given
// --format's.
func linkTypeFormat(f *flags, t capture.Target, format capture.Format) (capture.Format, error) {
	if f.linkType == "" {
		return format, nil
	}
	choices, err := linkTypeChoices(t)
	if err != nil {
		return format, err
	}
	var names []string
	for _, c := range choices {
		names = append(names, c.name)
		if !strings.EqualFold(c.name, f.linkType) {
			continue
		}
		if c.format == capture.FormatAuto || c.format == format {
			return format, nil
		}
		if format != capture.FormatAuto {
			return format, fmt.Errorf("-y %s is --format %v; --format %v was given too", f.linkType, c.format, format)
		}
		return c.format, nil
	}
	return format, fmt.Errorf("-y %s: %s offers %s (ibcap -L -i %s)", f.linkType, t.Name, strings.Join(names, ", "), t.Name)
}

// printFormat is the format the packets to print are handed to the
// printer in: pcap of the link type -y chose, as tcpdump prints what its
// -y asks the device for: -y INFINIBAND (--format ib247) LRH first,
// otherwise pcap (ERF records for native IB). --format alone only says
// how -w writes, so without -y it changes nothing here.
func printFormat(format capture.Format, byLinkType bool) capture.Format {
	if byLinkType && format == capture.FormatIB247 {
		return format
	}
	return capture.FormatPcap
}

// linkTypeNamed is a link type's number and the name -L and -y use for it,
// as tcpdump's "link-type EN10MB (Ethernet)" says it.
func linkTypeNamed(lt int) string {
	name := map[int]string{decode.LinkTypeEthernet: "EN10MB", decode.LinkTypeERF: "ERF",
		decode.LinkTypeInfiniBand: "INFINIBAND", decode.LinkTypeLinuxSLL2: "LINUX_SLL2"}[lt]
	if name == "" {
		return strconv.Itoa(lt)
	}
	return fmt.Sprintf("%d (%s)", lt, name)
}

// postRotate runs -z's command on each file rotation closes, as tcpdump
// -z: "CMD FILE", started at once beside the capture; finish waits for
// all of them and says which failed.
type postRotate struct {
	command string
	mu      sync.Mutex
	running sync.WaitGroup
	failed  []string
}

func (p *postRotate) fileDone(name string) {
	cmd := exec.Command(p.command, name)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		p.fail(fmt.Sprintf("%s %s: %v", p.command, name, err))
		return
	}
	p.running.Add(1)
	go func() {
		defer p.running.Done()
		if err := cmd.Wait(); err != nil {
			p.fail(fmt.Sprintf("%s %s: %v", p.command, name, err))
		}
	}()
}

func (p *postRotate) fail(msg string) {
	p.mu.Lock()
	p.failed = append(p.failed, msg)
	p.mu.Unlock()
}

// finish waits for the commands still running and returns an error
// naming those that failed.
func (p *postRotate) finish() error {
	if p == nil {
		return nil
	}
	p.running.Wait()
	if len(p.failed) == 0 {
		return nil
	}
	return fmt.Errorf("-z: %d of the commands failed: %s", len(p.failed), strings.Join(p.failed, "; "))
}

// checkReadFile checks -r against the flags of a live capture: a file is
// read instead of a device, so -i and what only a device has are refused.
func checkReadFile(f *flags) error {
	if f.readFile == "" {
		if f.device == "" {
			return errors.New("no device: give -i DEVICE (ibcap -D lists them), or -r FILE to read a capture file")
		}
		return nil
	}
	switch {
	case f.device != "":
		return fmt.Errorf("-r %s and -i %s: read a file or capture on a device; give one", f.readFile, f.device)
	case f.telemetry != 0:
		return fmt.Errorf("--telemetry and -r %s: counters are sampled during a live capture only", f.readFile)
	case f.metrics.addr != "":
		return fmt.Errorf("--metrics and -r %s: for a file's figures use ibanalyze (flows, ipd)", f.readFile)
	case f.tsType != "":
		return fmt.Errorf("-j and -r %s: a file's timestamps are what it holds", f.readFile)
	case f.linkType != "":
		// -y picks among a device's link types (-L); tcpdump ignores it
		// with -r, where it would only mislead.
		return fmt.Errorf("-y %s and -r %s: a file's packets are in the link type it holds; --format chooses how -w writes them", f.linkType, f.readFile)
	}
	return checkNotInput(f.readFile, f.file)
}

// checkNotInput refuses -w naming the file -r reads (under any name, or a
// hard link): a capture file is written in place, so writing it would
// truncate the input while it is read and lose every packet past what was
// already buffered.
func checkNotInput(in, out string) error {
	if in == capfile.Stdin || out == "" || out == "-" {
		return nil
	}
	fi, err := os.Stat(in)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // the open that follows says what is wrong; a device or FIFO is not truncated
	}
	if fo, err := os.Stat(out); err == nil && os.SameFile(fi, fo) {
		return fmt.Errorf("-r %s and -w %s are the same file: writing it would destroy what is being read; write to another file", in, out)
	}
	return nil
}

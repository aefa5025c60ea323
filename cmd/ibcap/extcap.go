package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/version"
)

// ibcap is also a Wireshark extcap program: installed (or linked) in
// Wireshark's extcap folder, it lists its devices in Wireshark's and
// tshark's interface lists and captures into the FIFO Wireshark reads.
// Wireshark asks in four calls (extcap(4)): --extcap-interfaces, then per
// interface --extcap-dlts and --extcap-config, then --capture with --fifo
// and the options the user set, each passed as the flag its "call" names;
// and, as the user types a capture filter, --extcap-capture-filter with
// the interface alone, to which nothing printed means valid.
// The options are ibcap's own flags, so a capture from Wireshark is
// ibcap -i DEVICE -w FIFO with them.

// extcapPrefix starts every interface ibcap offers Wireshark, so that
// none has the name of one of dumpcap's own (eth2 is dumpcap's; ibcap-eth2
// is ibcap's RoCE capture on it).
const extcapPrefix = "ibcap-"

// extcapFlags are the flags Wireshark calls an extcap program with.
type extcapFlags struct {
	interfaces bool   // --extcap-interfaces
	dlts       bool   // --extcap-dlts
	config     bool   // --extcap-config
	capture    bool   // --capture
	iface      string // --extcap-interface
	version    string // --extcap-version[=WIRESHARK VERSION]
	fifo       string // --fifo
	filter     string // --extcap-capture-filter
	debug      bool   // --debug: Wireshark's extcap debugging; ibcap says what it does on stderr anyway
}

// extcapVersionAsked is what --extcap-version holds when given with no
// value (Wireshark gives its own version with it).
const extcapVersionAsked = "?"

func addExtcapFlags(fl *pflag.FlagSet, e *extcapFlags) {
	fl.BoolVar(&e.interfaces, "extcap-interfaces", false, "Wireshark extcap: list the interfaces ibcap offers Wireshark (ibcap-DEVICE)")
	fl.BoolVar(&e.dlts, "extcap-dlts", false, "Wireshark extcap: the link type of --extcap-interface")
	fl.BoolVar(&e.config, "extcap-config", false, "Wireshark extcap: the options of --extcap-interface (port, snap length, time stamp type, capture and header filters)")
	fl.StringVar(&e.iface, "extcap-interface", "", "Wireshark extcap: the interface, as --extcap-interfaces names it (ibcap-mlx5_0, ibcap-eth2)")
	fl.StringVar(&e.version, "extcap-version", "", "Wireshark extcap: print ibcap's extcap version line (Wireshark gives its own version)")
	fl.Lookup("extcap-version").NoOptDefVal = extcapVersionAsked
	fl.BoolVar(&e.capture, "capture", false, "Wireshark extcap: capture on --extcap-interface into --fifo (pcap, each packet as it comes)")
	fl.StringVar(&e.fifo, "fifo", "", "Wireshark extcap: the FIFO to write the capture to")
	fl.StringVar(&e.filter, "extcap-capture-filter", "", "Wireshark extcap: Wireshark's capture filter, as -f")
	fl.BoolVar(&e.debug, "debug", false, "Wireshark extcap: accepted for Wireshark's extcap debugging; ibcap says what goes wrong on stderr anyway")
	fl.MarkHidden("debug")
}

// asked says whether Wireshark (or a user) called ibcap as an extcap.
func (e *extcapFlags) asked() bool {
	return e.interfaces || e.dlts || e.config || e.capture || e.version != "" || (e.iface != "" && e.filter != "")
}

// extcapCall answers the extcap call f holds: a listing on out, or, for
// --capture, f set up for the capture into the FIFO, which the caller
// then runs (runCapture true).
func extcapCall(out io.Writer, f *flags) (runCapture bool, err error) {
	e := &f.extcap
	switch {
	case e.interfaces:
		return false, extcapInterfaces(out)
	case e.version != "" && !e.dlts && !e.config && !e.capture:
		return false, extcapVersionLine(out)
	}
	t, err := extcapTarget(e.iface)
	if err != nil {
		return false, err
	}
	switch {
	case e.dlts:
		return false, extcapDLTs(out, t)
	case e.config:
		return false, extcapConfig(out, t)
	case !e.capture && e.filter != "":
		return false, extcapCheckFilter(out, t, e.filter)
	}
	return true, extcapCapture(f, t)
}

// extcapCheckFilter is Wireshark's check of the capture filter box, made
// as the user types: nothing on out means valid, else the first line says
// what is wrong. The expression is compiled by libpcap for the frames the
// capture filters: Ethernet, or native InfiniBand on an InfiniBand port.
func extcapCheckFilter(out io.Writer, it extcapInterface, expr string) error {
	lt := decode.LinkTypeEthernet
	if lts := it.linkTypes(); len(lts) == 1 && lts[0] == decode.LinkTypeERF {
		lt = decode.LinkTypeInfiniBand
	}
	if _, err := capture.CompileFilter(expr, lt, capture.DefaultSnapLenBytes); err != nil {
		_, werr := fmt.Fprintln(out, extcapValue(err.Error()))
		return werr
	}
	return nil
}

func extcapVersionLine(out io.Writer) error {
	_, err := fmt.Fprintf(out, "extcap {version=%s}{display=ibcap: InfiniBand and RoCE capture (ibscope)}\n", extcapValue(version.Read().Module))
	return err
}

// extcapInterface is one interface ibcap offers Wireshark: an RDMA device
// (its ports chosen by the port option), a network interface, or any.
type extcapInterface struct {
	name    string // what -i takes: mlx5_0, eth2, any
	display string
	dev     *capture.RDMADevice // nil for a network interface or any
}

// extcapInterfaces lists what -D lists: the RDMA devices, then the network
// interfaces, then any, each with its link type.
func extcapInterfaces(out io.Writer) error {
	ifs, err := listExtcapInterfaces()
	if err != nil {
		return err
	}
	if err := extcapVersionLine(out); err != nil {
		return err
	}
	for _, it := range ifs {
		if _, err := fmt.Fprintf(out, "interface {value=%s}{display=%s}\n", extcapValue(extcapPrefix+it.name), extcapValue(it.display)); err != nil {
			return err
		}
	}
	return nil
}

func listExtcapInterfaces() ([]extcapInterface, error) {
	devs, err := capture.ListRDMADevices(capture.SysfsRoot())
	if err != nil {
		return nil, err
	}
	var ifs []extcapInterface
	for i := range devs {
		d := &devs[i]
		if len(d.Ports) == 0 {
			continue // nothing to capture
		}
		ifs = append(ifs, extcapInterface{name: d.Name, display: "ibcap: " + describeRDMADevice(*d), dev: d})
	}
	for _, n := range capture.ListNetdevs() {
		ifs = append(ifs, extcapInterface{name: n.Name, display: "ibcap: RoCE on " + n.Name + " (" + netdevWords(devs, n.Name) + ")"})
	}
	ifs = append(ifs, extcapInterface{name: capture.AnyDevice, display: "ibcap: RoCE on every interface (" + linkTypeWords(decode.LinkTypeLinuxSLL2) + ")"})
	return ifs, nil
}

// describeRDMADevice names an RDMA device for Wireshark's list: its ports'
// link layers and what captures it.
func describeRDMADevice(d capture.RDMADevice) string {
	var ports []string
	for _, p := range d.Ports {
		ports = append(ports, fmt.Sprintf("port %d %s", p.Num, linkTypeWords(portLinkType(p))))
	}
	how := "verbs sniffer"
	if d.SoftRoCE {
		how = "software RoCE on " + d.Parent
	}
	return fmt.Sprintf("%s, %s (%s)", d.Name, strings.Join(ports, ", "), how)
}

// netdevWords says what a capture on a network interface holds: Ethernet,
// and whose RoCE netdev it is. A hardware RDMA port's netdev misses the
// RoCE traffic the device handles itself (ibcap -i says so on stderr,
// which an extcap capture keeps quiet), so Wireshark's list points to
// the device's own entry.
func netdevWords(devs []capture.RDMADevice, name string) string {
	words := linkTypeWords(decode.LinkTypeEthernet)
	for _, d := range devs {
		for _, p := range d.Ports {
			switch {
			case p.Netdev != name:
			case d.SoftRoCE:
				return fmt.Sprintf("%s; software RoCE %s", words, d.Name)
			default:
				return fmt.Sprintf("%s; RDMA port %s:%d's traffic bypasses it: %s%s", words, d.Name, p.Num, extcapPrefix, d.Name)
			}
		}
	}
	return words
}

// portLinkType is the pcap link type ibcap writes a port's frames with
// (pcap: ERF records for native InfiniBand).
func portLinkType(p capture.RDMAPort) int {
	if p.LinkLayer == "InfiniBand" {
		return decode.LinkTypeERF
	}
	return decode.LinkTypeEthernet
}

// extcapLinkTypes are the link types ibcap writes, as pcap names them.
var extcapLinkTypes = map[int]struct{ name, words string }{
	decode.LinkTypeEthernet:  {"EN10MB", "Ethernet"},
	decode.LinkTypeERF:       {"ERF", "InfiniBand in ERF records"},
	decode.LinkTypeLinuxSLL2: {"LINUX_SLL2", "Linux cooked v2"},
}

func linkTypeWords(lt int) string { return extcapLinkTypes[lt].words }

// extcapTarget is the interface --extcap-interface names.
func extcapTarget(value string) (extcapInterface, error) {
	if value == "" {
		return extcapInterface{}, errors.New("--extcap-dlts, --extcap-config and --capture need --extcap-interface (ibcap --extcap-interfaces lists them)")
	}
	name, ok := strings.CutPrefix(value, extcapPrefix)
	if !ok {
		return extcapInterface{}, fmt.Errorf("--extcap-interface %s: ibcap's interfaces are named %sDEVICE (ibcap --extcap-interfaces lists them)", value, extcapPrefix)
	}
	ifs, err := listExtcapInterfaces()
	if err != nil {
		return extcapInterface{}, err
	}
	for _, it := range ifs {
		if it.name == name {
			return it, nil
		}
	}
	var names []string
	for _, it := range ifs {
		names = append(names, extcapPrefix+it.name)
	}
	return extcapInterface{}, fmt.Errorf("--extcap-interface %s: no such interface; ibcap offers %s", value, strings.Join(names, ", "))
}

// linkTypes are the link types the interface's captures have: one per
// port link layer of an RDMA device.
func (it extcapInterface) linkTypes() []int {
	switch {
	case it.dev != nil:
		seen := map[int]bool{}
		var lts []int
		for _, p := range it.dev.Ports {
			if lt := portLinkType(p); !seen[lt] {
				seen[lt] = true
				lts = append(lts, lt)
			}
		}
		return lts
	case it.name == capture.AnyDevice:
		return []int{decode.LinkTypeLinuxSLL2}
	}
	return []int{decode.LinkTypeEthernet}
}

func extcapDLTs(out io.Writer, it extcapInterface) error {
	for _, lt := range it.linkTypes() {
		n := extcapLinkTypes[lt]
		if _, err := fmt.Fprintf(out, "dlt {number=%d}{name=%s}{display=%s}\n", lt, n.name, n.words); err != nil {
			return err
		}
	}
	return nil
}

// extcapArg is one option of the interface's configuration dialog: call
// is the ibcap flag Wireshark passes its value with.
type extcapArg struct {
	call, display, typ, tooltip, dflt, rng string
	values                                 []extcapArgValue
}

type extcapArgValue struct {
	value, display string
	dflt           bool
}

// extcapConfig prints the options of the interface's dialog: the RDMA
// port, snap length, time stamp type, capture filter and header filters.
// Wireshark's own capture filter box is passed as --extcap-capture-filter
// instead of the dialog's; given both, they must agree.
func extcapConfig(out io.Writer, it extcapInterface) error {
	args, err := it.args()
	if err != nil {
		return err
	}
	for i, a := range args {
		line := fmt.Sprintf("arg {number=%d}{call=%s}{display=%s}{type=%s}{tooltip=%s}", i, a.call, a.display, a.typ, extcapValue(a.tooltip))
		if a.rng != "" {
			line += "{range=" + a.rng + "}"
		}
		if a.dflt != "" {
			line += "{default=" + a.dflt + "}"
		}
		if _, err := fmt.Fprintln(out, line); err != nil {
			return err
		}
		for _, v := range a.values {
			vl := fmt.Sprintf("value {arg=%d}{value=%s}{display=%s}", i, extcapValue(v.value), extcapValue(v.display))
			if v.dflt {
				vl += "{default=true}"
			}
			if _, err := fmt.Fprintln(out, vl); err != nil {
				return err
			}
		}
	}
	return nil
}

func (it extcapInterface) args() ([]extcapArg, error) {
	var args []extcapArg
	first := it.name
	if it.dev != nil {
		port := extcapArg{call: "--port", display: "RDMA port", typ: "selector", tooltip: "the port of " + it.name + " to capture (-i " + it.name + ":N)"}
		for i, p := range it.dev.Ports {
			port.values = append(port.values, extcapArgValue{
				value:   strconv.Itoa(p.Num),
				display: fmt.Sprintf("%d: %s, %s, %s", p.Num, orDash(p.LinkLayer), orDash(p.State), orDash(p.Rate)),
				dflt:    i == 0,
			})
		}
		args = append(args, port)
		first = fmt.Sprintf("%s:%d", it.dev.Name, it.dev.Ports[0].Num)
	}
	args = append(args, extcapArg{
		call: "--snaplen", display: "Snap length (bytes)", typ: "unsigned", dflt: "0",
		rng:     fmt.Sprintf("0,%d", capture.DefaultSnapLenBytes),
		tooltip: "keep at most this many bytes of each packet (128 keeps the headers); 0 keeps all (-s)",
	})
	t, err := capture.Resolve(first, "")
	if err != nil {
		return nil, err
	}
	types, err := t.TimestampTypes()
	if err != nil {
		return nil, err
	}
	ts := extcapArg{call: "--time-stamp-type", display: "Time stamp type", typ: "selector", tooltip: "where the timestamps come from (-j)"}
	for i, tt := range types {
		ts.values = append(ts.values, extcapArgValue{value: tt, display: tt + ": " + timestampTypeDescriptions[tt], dflt: i == 0})
	}
	args = append(args, ts,
		extcapArg{call: "--filter", display: "Capture filter", typ: "string",
			tooltip: "a filter expression in tcpdump's syntax (pcap-filter(7)), as Wireshark's capture filter box; it replaces the RoCE-only default (-f)"},
		extcapArg{call: "--qp", display: "Destination QPs", typ: "string", tooltip: "keep packets to these destination QPs, comma-separated (--qp)"},
		extcapArg{call: "--opcode", display: "BTH opcodes", typ: "string", tooltip: "keep packets with these BTH opcodes, e.g. RC_SEND_ONLY, comma-separated (--opcode)"})
	lts := it.linkTypes()
	if len(lts) == 1 && lts[0] == decode.LinkTypeERF {
		args = append(args, extcapArg{call: "--lid", display: "LIDs", typ: "string", tooltip: "keep packets from or to these LIDs, comma-separated (--lid)"})
	}
	if it.dev == nil || it.dev.SoftRoCE || lts[0] == decode.LinkTypeEthernet {
		args = append(args, extcapArg{call: "--all", display: "Every frame, not only RoCE", typ: "boolflag", dflt: "false",
			tooltip: "capture every frame; a capture filter replaces the RoCE-only default too (--all)"})
	}
	if (it.dev == nil && it.name != capture.AnyDevice) || (it.dev != nil && it.dev.SoftRoCE) {
		args = append(args, extcapArg{call: "--no-promiscuous-mode", display: "Promiscuous mode off", typ: "boolflag", dflt: "false",
			tooltip: "leave the network interface out of promiscuous mode (-p)"})
	}
	return args, nil
}

// extcapValue keeps a value from breaking the {key=value} sentence it
// goes in: braces become parentheses.
func extcapValue(s string) string {
	return strings.NewReplacer("{", "(", "}", ")", "\n", " ").Replace(s)
}

// extcapCapture is the capture Wireshark asked for: ibcap -i DEVICE -w
// FIFO -U, pcap, with the options Wireshark passed. It says nothing on
// stderr unless something goes wrong: Wireshark shows what it says there
// as an error.
func extcapCapture(f *flags, it extcapInterface) error {
	e := &f.extcap
	if !e.capture {
		return errors.New("--extcap-interface alone: give --extcap-dlts, --extcap-config or --capture --fifo FIFO")
	}
	if e.fifo == "" {
		return errors.New("--capture: give --fifo FIFO, the pipe Wireshark reads")
	}
	// The dialog's --port (checked and joined to the device by portFlag,
	// as given on the command line), else the device's first port.
	f.device = it.name
	if it.dev != nil && f.port == 0 {
		f.device = fmt.Sprintf("%s:%d", it.dev.Name, it.dev.Ports[0].Num)
	}
	if e.filter != "" {
		if f.filterExpr != "" && f.filterExpr != e.filter {
			return fmt.Errorf("two capture filters: Wireshark's %q and the dialog's (-f) %q; give one", e.filter, f.filterExpr)
		}
		f.filterExpr = e.filter
	}
	if err := filterExpression(f, nil); err != nil {
		return err
	}
	f.file, f.format, f.packetBuf, f.quiet = e.fifo, "pcap", true, true
	return nil
}

// extcapOnly names the first flag given of those only an extcap call
// takes, "" when none is: ibcap's own capture refuses them.
func extcapOnly(e *extcapFlags) string {
	switch {
	case e.iface != "":
		return "--extcap-interface"
	case e.fifo != "":
		return "--fifo"
	case e.filter != "":
		return "--extcap-capture-filter"
	}
	return ""
}

package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/termtext"
	"github.com/ibscope/ibscope/protostate"
	"gopkg.in/yaml.v3"
)

// Scenario describes one simulation: topology, traffic, where to tap and
// what to sample. Zero values take the defaults named on each field; Load
// and Validate refuse unknown keys and impossible values, naming the key.
type Scenario struct {
	Name    string `yaml:"name" json:"name"`
	Seed    int64  `yaml:"seed" json:"seed"`         // drives tick phases and message jitter
	EpochNs int64  `yaml:"epoch_ns" json:"epoch_ns"` // wall time of simulated time 0, ns since the Unix epoch; default 2015-06-01T00:00:00Z

	// LinkLayer is LinkInfiniBand (default: LRH packets, credit flow
	// control) or LinkEthernet (RoCEv2 frames, PFC at switch inputs).
	LinkLayer     string  `yaml:"link_layer,omitempty" json:"link_layer,omitempty"`
	Rate          string  `yaml:"rate,omitempty" json:"rate,omitempty"`   // InfiniBand: default link rate, "SDR".."XDR" (protostate.LinkRates); default SDR
	Lanes         int     `yaml:"lanes,omitempty" json:"lanes,omitempty"` // InfiniBand: default link width in lanes (1, 2, 4, 8, 12); default 4
	Gbps          int     `yaml:"gbps,omitempty" json:"gbps,omitempty"`   // Ethernet: default link rate, Gb/s; default 100
	MTUBytes      int     `yaml:"mtu_bytes" json:"mtu_bytes"`             // path MTU: 256, 512, 1024, 2048 or 4096; default 2048
	VLs           int     `yaml:"vls" json:"vls"`                         // data VLs in use (1-15); default 1
	PropagationNs int64   `yaml:"propagation_ns" json:"propagation_ns"`   // default per-link propagation delay; default 5 (1 m of cable)
	TickNs        float64 `yaml:"tick_ns" json:"tick_ns"`                 // PortXmitWait tick length, ns; default 16
	FCPPeriodNs   int64   `yaml:"fcp_period_ns" json:"fcp_period_ns"`     // periodic FCP interval, ns; default 65536 symbol times of the link
	TailNs        int64   `yaml:"tail_ns" json:"tail_ns"`                 // idle time simulated after the last packet, ns; default 2 FCP periods
	// CreditJitterNs delays each credit update (the FCP a receiver sends
	// when it frees buffer) by a random time uniform in [0, CreditJitterNs]:
	// the variable latency of a real credit-return pipeline. Without it,
	// perfectly periodic congestion can phase-lock to the PortXmitWait tick
	// grid, which real clocks never do for long. Default 0.
	CreditJitterNs int64 `yaml:"credit_jitter_ns" json:"credit_jitter_ns"`

	Hosts     []Host     `yaml:"hosts" json:"hosts"`
	Switches  []Switch   `yaml:"switches" json:"switches"`
	Links     []Link     `yaml:"links" json:"links"`
	Flows     []Flow     `yaml:"flows" json:"flows"`
	Taps      []Tap      `yaml:"taps" json:"taps"`
	Telemetry *Telemetry `yaml:"telemetry" json:"telemetry"`

	TruthPackets bool `yaml:"truth_packets" json:"truth_packets"` // list every data packet's queueing delay in the truth file
}

// Host is a channel adapter with one port.
type Host struct {
	Name          string `yaml:"name" json:"name"`
	VLBufferBytes int    `yaml:"vl_buffer_bytes" json:"vl_buffer_bytes"` // receive buffer per data VL, bytes; default 65536
}

// Switch is an input-queued switch: each input port has a receive buffer
// of PortBufferBytes split evenly over BufferVLs VLs (or as VLBufferBytes
// says), and packets wait there until their output port takes them.
type Switch struct {
	Name            string `yaml:"name" json:"name"`
	PortBufferBytes int    `yaml:"port_buffer_bytes" json:"port_buffer_bytes"` // receive buffer per input port, bytes; default 131072
	BufferVLs       int    `yaml:"buffer_vls" json:"buffer_vls"`               // VLs the port buffer is split among; default 4
	VLBufferBytes   []int  `yaml:"vl_buffer_bytes" json:"vl_buffer_bytes"`     // explicit per-VL buffer, bytes; overrides the split
	// PFC is the priority flow control of every input port and priority
	// (Ethernet only; default: PFC's defaults).
	PFC *PFC `yaml:"pfc,omitempty" json:"pfc,omitempty"`
}

// Link layers.
const (
	LinkInfiniBand = "infiniband"
	LinkEthernet   = "ethernet"
)

// PFC is a switch input port's priority flow control (IEEE 802.1Qbb), for
// each priority on its own: when the bytes queued at the input for a priority
// pass XOFFBytes the port sends its upstream neighbour a PFC frame pausing
// that priority for PauseQuanta quanta of 512 bit times, sends it again
// every RefreshNs while still above XOFFBytes, and sends quanta 0 (XON) once
// the queue is down to XONBytes. HeadroomBytes above XOFFBytes absorb what is
// already on its way; a frame arriving beyond them would be dropped by a
// real switch: ibsim keeps it and counts it (truth: headroom_overflows).
type PFC struct {
	XOFFBytes     int   `yaml:"xoff_bytes" json:"xoff_bytes"`         // default 32768
	XONBytes      int   `yaml:"xon_bytes" json:"xon_bytes"`           // default xoff_bytes/2; below xoff_bytes
	HeadroomBytes int   `yaml:"headroom_bytes" json:"headroom_bytes"` // default 16384
	PauseQuanta   int   `yaml:"pause_quanta" json:"pause_quanta"`     // default 65535
	RefreshNs     int64 `yaml:"refresh_ns" json:"refresh_ns"`         // default: half the pause time at the link's rate
	// Priorities sets single priorities apart; a field left 0 takes the
	// value above, but for XONBytes where the switch sets none: half the
	// priority's XOFFBytes, as for the switch's own.
	Priorities []PFCPriority `yaml:"priorities,omitempty" json:"priorities,omitempty"`
	// xonDerived says XONBytes is the default, XOFFBytes/2, not the
	// scenario's (kept across Validate's runs, which may be several).
	xonDerived bool
}

// PFCPriority is one priority's PFC settings, overriding the switch's.
type PFCPriority struct {
	Priority      int   `yaml:"priority" json:"priority"` // 0 to vls-1
	XOFFBytes     int   `yaml:"xoff_bytes" json:"xoff_bytes"`
	XONBytes      int   `yaml:"xon_bytes" json:"xon_bytes"`
	HeadroomBytes int   `yaml:"headroom_bytes" json:"headroom_bytes"`
	PauseQuanta   int   `yaml:"pause_quanta" json:"pause_quanta"`
	RefreshNs     int64 `yaml:"refresh_ns" json:"refresh_ns"`
}

// pfcFor is priority n's settings: the override of n if any, its zero
// fields taking the switch's.
func (c *PFC) pfcFor(n int) PFCPriority {
	p := PFCPriority{Priority: n, XOFFBytes: c.XOFFBytes, XONBytes: c.XONBytes, HeadroomBytes: c.HeadroomBytes,
		PauseQuanta: c.PauseQuanta, RefreshNs: c.RefreshNs}
	for _, o := range c.Priorities {
		if o.Priority != n {
			continue
		}
		for _, f := range []struct{ dst, src *int }{{&p.XOFFBytes, &o.XOFFBytes}, {&p.XONBytes, &o.XONBytes},
			{&p.HeadroomBytes, &o.HeadroomBytes}, {&p.PauseQuanta, &o.PauseQuanta}} {
			if *f.src != 0 {
				*f.dst = *f.src
			}
		}
		if o.XONBytes == 0 && o.XOFFBytes != 0 && (c.xonDerived || c.XONBytes == 0) {
			p.XONBytes = o.XOFFBytes / 2
		}
		if o.RefreshNs != 0 {
			p.RefreshNs = o.RefreshNs
		}
	}
	return p
}

// Link joins two nodes; each end gets the node's next port number (from 1),
// in the order the links are listed.
type Link struct {
	A             string `yaml:"a" json:"a"`
	B             string `yaml:"b" json:"b"`
	Rate          string `yaml:"rate,omitempty" json:"rate,omitempty"`   // InfiniBand; default: the scenario's rate
	Lanes         int    `yaml:"lanes,omitempty" json:"lanes,omitempty"` // InfiniBand; default: the scenario's lanes
	Gbps          int    `yaml:"gbps,omitempty" json:"gbps,omitempty"`   // Ethernet; default: the scenario's gbps
	PropagationNs int64  `yaml:"propagation_ns" json:"propagation_ns"`   // default: the scenario's
}

// Flow is one RC queue pair moving Bytes from Src to Dst as messages of
// MessageBytes, starting at StartNs.
type Flow struct {
	Src          string `yaml:"src" json:"src"`
	Dst          string `yaml:"dst" json:"dst"`
	Op           string `yaml:"op" json:"op"`                       // "write" (RDMA WRITE, default) or "send"
	Bytes        int64  `yaml:"bytes" json:"bytes"`                 // total message data, bytes
	MessageBytes int64  `yaml:"message_bytes" json:"message_bytes"` // per message, bytes; default 1 MiB (at most Bytes)
	StartNs      int64  `yaml:"start_ns" json:"start_ns"`           // simulated time of the first packet, ns
	SL           int    `yaml:"sl" json:"sl"`                       // service level = VL (SL2VL is the identity)
	AckEvery     int    `yaml:"ack_every" json:"ack_every"`         // request an ACK every N packets, 0: last packet of each message only
	JitterNs     int64  `yaml:"jitter_ns" json:"jitter_ns"`         // random pause before each message, uniform in [0, JitterNs], ns
	// IFAEvery makes every Nth data packet an IFA 2.0 probe (Ethernet only):
	// it carries the IFA header and an empty metadata stack, to which each
	// switch on the path adds its residence time and queue depth. 0: none.
	IFAEvery int `yaml:"ifa_every,omitempty" json:"ifa_every,omitempty"`
}

// TapDirection is what a tap sees of its port's traffic.
type TapDirection string

const (
	TapBoth TapDirection = "both" // what the port sends and what it receives
	TapTx   TapDirection = "tx"   // what the port sends
	TapRx   TapDirection = "rx"   // what the port receives
)

// Tap captures at one port, both directions unless Direction says: ERF
// interface 0 holds what the port transmits, interface 1 what it receives.
type Tap struct {
	Port       string       `yaml:"port" json:"port"`               // "node/port", e.g. "sw/1"
	File       string       `yaml:"file" json:"file"`               // pcap file, relative to the output directory; *.pcapng writes pcapng with the interface named after Port
	QuantizeNs int64        `yaml:"quantize_ns" json:"quantize_ns"` // round timestamps down to this step (1000 mimics ibdump); 0 keeps ns
	DataOnly   bool         `yaml:"data_only" json:"data_only"`     // leave out flow-control packets, as ibdump (which never sees them) does
	Direction  TapDirection `yaml:"direction" json:"direction"`     // TapBoth (default), TapTx or TapRx
	// SnapBytes keeps only each packet's first SnapBytes bytes, as ibcap -s
	// does: the ERF record's rlen covers what was kept, its wlen stays the
	// packet's length on the wire and its truncated flag is set (the same
	// record ibcap writes). 0 (default) keeps whole packets; at
	// least 20 (LRH and BTH) otherwise, 58 on Ethernet (the headers through
	// the BTH). 128 keeps every header.
	SnapBytes int `yaml:"snap_bytes" json:"snap_bytes"`
}

// MinSnapBytes is the shortest snap length a tap takes: the LRH (8 bytes)
// and BTH (12 bytes) every analysis reads.
const MinSnapBytes = decode.LRHLen + decode.BTHLen

// MinRoCESnapBytes is the shortest snap length a tap on Ethernet links
// takes: the MAC header with its priority tag, IPv4, UDP and the BTH.
const MinRoCESnapBytes = ethHeaderBytes + ipv4Bytes + udpBytes + bthBytes

// Telemetry samples port counters at a period into a perfquery-style text
// file and, optionally, sysfs-counter sidecars and a final sysfs tree.
type Telemetry struct {
	PeriodNs int64    `yaml:"period_ns" json:"period_ns"` // sample period, ns
	File     string   `yaml:"file" json:"file"`           // perfquery text, relative to the output directory; default "perfquery.txt"
	Ports    []string `yaml:"ports" json:"ports"`         // "node/port" list; default every port
	SysfsDir string   `yaml:"sysfs_dir" json:"sysfs_dir"` // if set, final counters as DIR/class/infiniband/NODE/ports/N/counters/NAME files
	// SidecarDir, if set, gets each port's sysfs counters every period as
	// an ibscope telemetry sidecar (what ibcap --telemetry writes):
	// DIR/NODE-PORT.telemetry.csv.
	SidecarDir string `yaml:"sidecar_dir" json:"sidecar_dir"`
}

// LoadScenario reads a scenario from a .yaml, .yml or .json file; unknown
// keys are errors. The result is validated and has its defaults filled in.
func LoadScenario(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxScenarioBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxScenarioBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: not a scenario", path, MaxScenarioBytes)
	}
	s := &Scenario{}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(s); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	} else {
		var doc yaml.Node
		// An empty document (io.EOF) goes on to validation, which says what is missing.
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if err := checkWholeNumbers(&doc, reflect.TypeFor[Scenario](), ""); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// KeyError is an impossible or missing value in a scenario, with its key.
type KeyError struct {
	Key string // e.g. "links[2].rate"
	Msg string
}

func (e *KeyError) Error() string { return "key " + e.Key + ": " + e.Msg }

func keyErr(key, format string, a ...any) error {
	return &KeyError{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// Validate fills in defaults and checks every value (numbers against
// Limits, output names, the work and output the whole implies), returning a
// *KeyError naming the first bad key.
func (s *Scenario) Validate() error {
	if err := s.checkGlobals(); err != nil {
		return err
	}
	names := map[string]bool{}
	maxPkt := maxPacketBlocks(s.MTUBytes) * blockBytes
	for i := range s.Hosts {
		if err := s.checkHost(&s.Hosts[i], fmt.Sprintf("hosts[%d]", i), names, maxPkt); err != nil {
			return err
		}
	}
	for i := range s.Switches {
		if err := s.checkSwitch(&s.Switches[i], fmt.Sprintf("switches[%d]", i), names, maxPkt); err != nil {
			return err
		}
	}
	if len(s.Hosts) < 2 {
		return keyErr("hosts", "%d hosts: a scenario needs at least 2", len(s.Hosts))
	}
	for i := range s.Links {
		if err := s.checkLink(&s.Links[i], fmt.Sprintf("links[%d]", i), names); err != nil {
			return err
		}
	}
	if len(s.Flows) == 0 {
		return keyErr("flows", "no flows: nothing to simulate")
	}
	for i := range s.Flows {
		if err := s.checkFlow(&s.Flows[i], fmt.Sprintf("flows[%d]", i)); err != nil {
			return err
		}
	}
	for i := range s.Taps {
		if err := s.checkTap(&s.Taps[i], fmt.Sprintf("taps[%d]", i)); err != nil {
			return err
		}
	}
	if err := s.checkTelemetry(); err != nil {
		return err
	}
	if err := s.checkOutputs(); err != nil {
		return err
	}
	return s.checkWorkload()
}

// checkGlobals checks the scenario's own keys and fills their defaults:
// the size, name, epoch, link layer and rate, MTU, VLs and times.
func (s *Scenario) checkGlobals() error {
	// The size first: what follows walks the topology.
	for i, n := range []int{len(s.Hosts), len(s.Switches), len(s.Links), len(s.Flows), len(s.Taps)} {
		if l := SizeLimits[i]; n > int(l.Max) {
			return keyErr(l.Key, "%d %s: at most %d in one scenario", n, l.Unit, int(l.Max))
		}
	}
	// The name is printed and written in truth.json: printable characters
	// only, so that it cannot act on the terminal that shows it.
	if !termtext.IsPlain(s.Name) {
		return keyErr("name", "%q: want printable characters only (no control, format or bidirectional characters)", s.Name)
	}
	if s.EpochNs == 0 {
		s.EpochNs = 1433116800 * 1e9
	}
	if err := checkInt("epoch_ns", s.EpochNs); err != nil {
		return err
	}
	switch s.LinkLayer {
	case "", LinkInfiniBand:
		s.LinkLayer = ""
	case LinkEthernet:
	default:
		return keyErr("link_layer", "%q: want %s or %s", s.LinkLayer, LinkInfiniBand, LinkEthernet)
	}
	if err := s.checkLinkRate("", &s.Rate, &s.Lanes, &s.Gbps, "SDR", 4, 100); err != nil {
		return err
	}
	if s.MTUBytes == 0 {
		s.MTUBytes = 2048
	}
	switch s.MTUBytes {
	case 256, 512, 1024, 2048, 4096:
	default:
		return keyErr("mtu_bytes", "%d: want 256, 512, 1024, 2048 or 4096", s.MTUBytes)
	}
	if s.VLs == 0 {
		s.VLs = 1
	}
	if err := checkInt("vls", int64(s.VLs)); err != nil {
		return err
	}
	if s.ethernet() && s.VLs > decode.PFCPriorities {
		return keyErr("vls", "%d priorities: Ethernet has %d", s.VLs, decode.PFCPriorities)
	}
	if s.PropagationNs == 0 {
		s.PropagationNs = 5
	}
	if err := checkInt("propagation_ns", s.PropagationNs); err != nil {
		return err
	}
	if s.TickNs == 0 {
		s.TickNs = 16
	}
	if err := checkFloat("tick_ns", s.TickNs); err != nil {
		return err
	}
	if s.FCPPeriodNs != 0 {
		if err := checkInt("fcp_period_ns", s.FCPPeriodNs); err != nil {
			return err
		}
	}
	if err := checkInt("tail_ns", s.TailNs); err != nil {
		return err
	}
	return checkInt("credit_jitter_ns", s.CreditJitterNs)
}

// checkHost checks host h (at key) and fills its defaults; names collects
// the names of hosts and switches.
func (s *Scenario) checkHost(h *Host, key string, names map[string]bool, maxPkt int) error {
	if err := checkName(names, h.Name, key+".name"); err != nil {
		return err
	}
	if h.VLBufferBytes == 0 {
		h.VLBufferBytes = 65536
	}
	if err := checkInt(key+".vl_buffer_bytes", int64(h.VLBufferBytes)); err != nil {
		return err
	}
	return checkVLBuffer(h.VLBufferBytes, maxPkt, key+".vl_buffer_bytes")
}

// checkSwitch checks switch w (at key), its PFC and its VL buffers, and
// fills their defaults.
func (s *Scenario) checkSwitch(w *Switch, key string, names map[string]bool, maxPkt int) error {
	if err := checkName(names, w.Name, key+".name"); err != nil {
		return err
	}
	if w.PortBufferBytes == 0 {
		w.PortBufferBytes = 131072
	}
	if w.BufferVLs == 0 {
		w.BufferVLs = 4
	}
	if err := checkInt(key+".port_buffer_bytes", int64(w.PortBufferBytes)); err != nil {
		return err
	}
	if err := checkInt(key+".buffer_vls", int64(w.BufferVLs)); err != nil {
		return err
	}
	if w.BufferVLs < s.VLs {
		return keyErr(key+".buffer_vls", "%d buffer VLs cannot hold the scenario's %d data VLs", w.BufferVLs, s.VLs)
	}
	if len(w.VLBufferBytes) == 0 {
		// Split from the port buffer: a share too small is that key's fault.
		if msg := vlBufferProblem(w.PortBufferBytes/w.BufferVLs, maxPkt); msg != "" {
			return keyErr(key+".port_buffer_bytes", "%d bytes over %d VLs, per VL: %s", w.PortBufferBytes, w.BufferVLs, msg)
		}
		for range s.VLs {
			w.VLBufferBytes = append(w.VLBufferBytes, w.PortBufferBytes/w.BufferVLs)
		}
	}
	if err := s.checkPFC(w, key+".pfc"); err != nil {
		return err
	}
	if len(w.VLBufferBytes) < s.VLs {
		return keyErr(key+".vl_buffer_bytes", "%d entries for %d data VLs", len(w.VLBufferBytes), s.VLs)
	}
	for j, b := range w.VLBufferBytes {
		k := fmt.Sprintf("%s.vl_buffer_bytes[%d]", key, j)
		if err := checkInt(k, int64(b)); err != nil {
			return err
		}
		if err := checkVLBuffer(b, maxPkt, k); err != nil {
			return err
		}
	}
	return nil
}

// checkLink checks link l (at key): its ends are named hosts or switches,
// its rate and propagation delay.
func (s *Scenario) checkLink(l *Link, key string, names map[string]bool) error {
	if !names[l.A] {
		return keyErr(key+".a", "no host or switch named %q", l.A)
	}
	if !names[l.B] {
		return keyErr(key+".b", "no host or switch named %q", l.B)
	}
	if l.A == l.B {
		return keyErr(key+".b", "link from %q to itself", l.A)
	}
	if err := s.checkLinkRate(key+".", &l.Rate, &l.Lanes, &l.Gbps, s.Rate, s.Lanes, s.Gbps); err != nil {
		return err
	}
	if l.PropagationNs == 0 {
		l.PropagationNs = s.PropagationNs
	}
	return checkInt(key+".propagation_ns", l.PropagationNs)
}

// checkFlow checks flow f (at key) and fills its defaults.
func (s *Scenario) checkFlow(f *Flow, key string) error {
	if !s.isHost(f.Src) {
		return keyErr(key+".src", "no host named %q", f.Src)
	}
	if !s.isHost(f.Dst) || f.Dst == f.Src {
		return keyErr(key+".dst", "no other host named %q", f.Dst)
	}
	if f.Op == "" {
		f.Op = "write"
	}
	if f.Op != "write" && f.Op != "send" {
		return keyErr(key+".op", "%q: want write or send", f.Op)
	}
	if err := checkInt(key+".bytes", f.Bytes); err != nil {
		return err
	}
	if f.MessageBytes == 0 {
		f.MessageBytes = min(f.Bytes, 1<<20)
	}
	if err := checkInt(key+".message_bytes", f.MessageBytes); err != nil {
		return err
	}
	if err := checkInt(key+".start_ns", f.StartNs); err != nil {
		return err
	}
	if err := checkInt(key+".sl", int64(f.SL)); err != nil {
		return err
	}
	if f.SL >= s.VLs {
		return keyErr(key+".sl", "SL %d has no data VL (the scenario has %d)", f.SL, s.VLs)
	}
	if err := checkInt(key+".ack_every", int64(f.AckEvery)); err != nil {
		return err
	}
	if err := checkInt(key+".jitter_ns", f.JitterNs); err != nil {
		return err
	}
	if err := checkInt(key+".ifa_every", int64(f.IFAEvery)); err != nil {
		return err
	}
	if f.IFAEvery > 0 && !s.ethernet() {
		return keyErr(key+".ifa_every", "IFA probes are RoCE's: set link_layer: %s", LinkEthernet)
	}
	return nil
}

// checkTap checks tap t (at key) and fills its defaults.
func (s *Scenario) checkTap(t *Tap, key string) error {
	if t.File == "" {
		return keyErr(key+".file", "missing file name")
	}
	if err := checkInt(key+".quantize_ns", t.QuantizeNs); err != nil {
		return err
	}
	if err := checkInt(key+".snap_bytes", int64(t.SnapBytes)); err != nil {
		return err
	}
	if s.ethernet() && t.SnapBytes > 0 && t.SnapBytes < MinRoCESnapBytes {
		return keyErr(key+".snap_bytes", "%d bytes cannot hold a RoCEv2 frame's headers through the BTH (%d bytes); want 0 (whole frames) or at least %d",
			t.SnapBytes, MinRoCESnapBytes, MinRoCESnapBytes)
	}
	if t.SnapBytes > 0 && t.SnapBytes < MinSnapBytes {
		return keyErr(key+".snap_bytes", "%d bytes cannot hold the LRH and BTH (%d bytes); want 0 (whole packets) or at least %d",
			t.SnapBytes, MinSnapBytes, MinSnapBytes)
	}
	if err := s.checkPort(t.Port, key+".port"); err != nil {
		return err
	}
	switch t.Direction {
	case "":
		t.Direction = TapBoth
	case TapBoth, TapTx, TapRx:
	default:
		return keyErr(key+".direction", "%q: want both, tx or rx", t.Direction)
	}
	return nil
}

// checkTelemetry checks the telemetry section, if any, and fills its
// defaults.
func (s *Scenario) checkTelemetry() error {
	t := s.Telemetry
	if t == nil {
		return nil
	}
	if err := checkInt("telemetry.period_ns", t.PeriodNs); err != nil {
		return err
	}
	if t.File == "" {
		t.File = "perfquery.txt"
	}
	for j, p := range t.Ports {
		if err := s.checkPort(p, fmt.Sprintf("telemetry.ports[%d]", j)); err != nil {
			return err
		}
	}
	return nil
}

func checkName(names map[string]bool, name, key string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/ ") || !termtext.IsPlain(name) {
		return keyErr(key, "%q: want a non-empty name of printable characters without '/' or spaces, not . or ..", name)
	}
	if names[name] {
		return keyErr(key, "%q is used twice", name)
	}
	names[name] = true
	return nil
}

// checkVLBuffer refuses a VL buffer that cannot hold one MTU-sized packet,
// or holds more than the 2048 blocks the mod-4096 credit arithmetic allows
// (IBA 7.9.4: a sender may be at most half the FCCL space ahead).
func checkVLBuffer(b, maxPacketBytes int, key string) error {
	if msg := vlBufferProblem(b, maxPacketBytes); msg != "" {
		return keyErr(key, "%s", msg)
	}
	return nil
}

// vlBufferProblem says what is wrong with a VL buffer of b bytes, or "".
func vlBufferProblem(b, maxPacketBytes int) string {
	if b < maxPacketBytes {
		return fmt.Sprintf("%d bytes is smaller than one MTU-sized packet (%d bytes in 64-byte blocks)", b, maxPacketBytes)
	}
	if b > maxVLBufferBytes {
		return fmt.Sprintf("%d bytes is more than 2048 blocks (128 KiB), the most the 12-bit credit counters can advertise", b)
	}
	return ""
}

// ethernet reports whether the scenario's links are Ethernet (RoCE).
func (s *Scenario) ethernet() bool { return s.LinkLayer == LinkEthernet }

// checkLinkRate fills in and checks a link's rate (prefix "links[i]." or ""
// for the scenario's default): an InfiniBand rate and width, or an Ethernet
// rate in Gb/s; the other link layer's keys are refused.
func (s *Scenario) checkLinkRate(prefix string, rate *string, lanes, gbps *int, defRate string, defLanes, defGbps int) error {
	if s.ethernet() {
		if *rate != "" {
			return keyErr(prefix+"rate", "%q is an InfiniBand rate: on Ethernet links give gbps", *rate)
		}
		if *lanes != 0 {
			return keyErr(prefix+"lanes", "%d lanes: on Ethernet links give gbps only", *lanes)
		}
		if *gbps == 0 {
			*gbps = defGbps
		}
		return checkInt(prefix+"gbps", int64(*gbps))
	}
	if *gbps != 0 {
		return keyErr(prefix+"gbps", "%d Gb/s is an Ethernet rate: set link_layer: %s, or give rate and lanes", *gbps, LinkEthernet)
	}
	if *rate == "" {
		*rate = defRate
	}
	if _, err := protostate.ParseLinkRate(*rate); err != nil {
		return keyErr(prefix+"rate", "%v", err)
	}
	if *lanes == 0 {
		*lanes = defLanes
	}
	if !protostate.ValidLinkWidth(*lanes) {
		return keyErr(prefix+"lanes", "%d lanes: want 1, 2, 4, 8 or 12", *lanes)
	}
	return nil
}

// checkPFC fills in and checks a switch's PFC settings (Ethernet only).
func (s *Scenario) checkPFC(w *Switch, key string) error {
	if !s.ethernet() {
		if w.PFC != nil {
			return keyErr(key, "PFC is Ethernet's: set link_layer: %s", LinkEthernet)
		}
		return nil
	}
	if w.PFC == nil {
		w.PFC = &PFC{}
	}
	c := w.PFC
	if c.XOFFBytes == 0 {
		c.XOFFBytes = 32768
	}
	if err := checkInt(key+".xoff_bytes", int64(c.XOFFBytes)); err != nil {
		return err
	}
	if c.XONBytes == 0 {
		c.XONBytes, c.xonDerived = c.XOFFBytes/2, true
	}
	if err := checkInt(key+".xon_bytes", int64(c.XONBytes)); err != nil {
		return err
	}
	if c.XONBytes >= c.XOFFBytes {
		return keyErr(key+".xon_bytes", "%d bytes: want below xoff_bytes (%d)", c.XONBytes, c.XOFFBytes)
	}
	if c.HeadroomBytes == 0 {
		c.HeadroomBytes = 16384
	}
	if err := checkInt(key+".headroom_bytes", int64(c.HeadroomBytes)); err != nil {
		return err
	}
	if c.PauseQuanta == 0 {
		c.PauseQuanta = 0xFFFF
	}
	if err := checkInt(key+".pause_quanta", int64(c.PauseQuanta)); err != nil {
		return err
	}
	if c.RefreshNs != 0 {
		if err := checkInt(key+".refresh_ns", c.RefreshNs); err != nil {
			return err
		}
	}
	seen := map[int]bool{}
	for i, o := range c.Priorities {
		k := fmt.Sprintf("%s.priorities[%d]", key, i)
		if err := checkInt(k+".priority", int64(o.Priority)); err != nil {
			return err
		}
		if o.Priority >= s.VLs {
			return keyErr(k+".priority", "priority %d is not in use (vls: %d)", o.Priority, s.VLs)
		}
		if seen[o.Priority] {
			return keyErr(k+".priority", "priority %d is set twice", o.Priority)
		}
		seen[o.Priority] = true
		for _, f := range []struct {
			name string
			v    int64
		}{{"xoff_bytes", int64(o.XOFFBytes)}, {"xon_bytes", int64(o.XONBytes)}, {"headroom_bytes", int64(o.HeadroomBytes)},
			{"pause_quanta", int64(o.PauseQuanta)}, {"refresh_ns", o.RefreshNs}} {
			if f.v != 0 {
				if err := checkInt(k+"."+f.name, f.v); err != nil {
					return err
				}
			}
		}
		if p := c.pfcFor(o.Priority); p.XONBytes >= p.XOFFBytes {
			return keyErr(k+".xon_bytes", "%d bytes (0 takes the switch's xon_bytes when it sets one): want below this priority's xoff_bytes (%d)", p.XONBytes, p.XOFFBytes)
		}
	}
	return nil
}

func (s *Scenario) isHost(name string) bool {
	for _, h := range s.Hosts {
		if h.Name == name {
			return true
		}
	}
	return false
}

// checkPort checks a "node/port" reference against the links.
func (s *Scenario) checkPort(ref, key string) error {
	node, num, err := splitPortRef(ref)
	if err != nil {
		return keyErr(key, "%v", err)
	}
	ports := 0
	for _, l := range s.Links {
		if l.A == node {
			ports++
		}
		if l.B == node {
			ports++
		}
	}
	if ports == 0 {
		return keyErr(key, "%q: no linked node named %q", ref, node)
	}
	if num < 1 || num > ports {
		return keyErr(key, "%q: node %s has ports 1 to %d", ref, node, ports)
	}
	return nil
}

func splitPortRef(ref string) (string, int, error) {
	node, p, ok := strings.Cut(ref, "/")
	var num int
	if ok {
		_, err := fmt.Sscanf(p, "%d", &num)
		ok = err == nil && fmt.Sprint(num) == p
	}
	if !ok || node == "" {
		return "", 0, fmt.Errorf("%q: want NODE/PORT, e.g. sw/1", ref)
	}
	return node, num, nil
}

package sim

import (
	"encoding/json"
	"io"
)

// Truth is what the simulator knows that a measurement has to estimate. All
// times are ns since the Unix epoch (the scenario's epoch_ns is simulated
// time 0); durations are ns.
type Truth struct {
	Scenario    string  `json:"scenario"`
	LinkLayer   string  `json:"link_layer,omitempty"` // "ethernet" for RoCE; absent for InfiniBand
	Seed        int64   `json:"seed"`
	StartNs     int64   `json:"start_ns"`     // simulated time 0
	EndNs       int64   `json:"end_ns"`       // end of the run (after the idle tail)
	TickNs      float64 `json:"tick_ns"`      // PortXmitWait tick length
	MTUBytes    int     `json:"mtu_bytes"`    // path MTU
	DataPackets int64   `json:"data_packets"` // data packets the flows sent (ACKs not counted)
	Events      uint64  `json:"events"`       // simulator events processed

	Links     []LinkTruth     `json:"links"`
	Ports     []PortTruth     `json:"ports"`
	Flows     []FlowTruth     `json:"flows"`
	Taps      []TapTruth      `json:"taps,omitempty"`
	Telemetry *TelemetryTruth `json:"telemetry,omitempty"`
	Packets   []PacketTruth   `json:"packets,omitempty"`

	// Ethernet only.
	Pauses []PauseTruth `json:"pauses,omitempty"` // every pause, in the order they began (the first MaxTruthPauses to end)
	// PausesLeftOut counts the pauses past MaxTruthPauses, in the ports'
	// paused_ns but not listed.
	PausesLeftOut int          `json:"pauses_left_out,omitempty"`
	Hops          []HopTruth   `json:"hops,omitempty"`   // every way through a switch data packets took
	Probes        []ProbeTruth `json:"probes,omitempty"` // every IFA probe delivered, in delivery order
}

// PauseTruth is one interval during which a transmitter held back a
// priority because its peer (a switch input past XOFF) had paused it by
// PFC: from the arrival of the PFC frame's last byte to the arrival of an
// XON (quanta 0), or to the end of the last pause time it was given.
type PauseTruth struct {
	Port     string `json:"port"` // the paused transmitter, "node/port"
	Peer     string `json:"peer"` // the switch input that paused it
	Priority int    `json:"priority"`
	StartNs  int64  `json:"start_ns"`
	EndNs    int64  `json:"end_ns"`
	PausedNs int64  `json:"paused_ns"` // end minus start, from the simulator's ps
	End      string `json:"end"`       // "xon", "expiry" or "end_of_run"
	Frames   int    `json:"frames"`    // PFC frames with a non-zero time in it (the first and its refreshes)
}

// HopTruth is the queueing of every data packet (probes included, ACKs
// not) one way through a switch: in at In, out at Out, on one priority. Residence is from the packet's last byte arriving to its
// first byte leaving (store-and-forward); queue depth is the bytes queued
// ahead of it at its input, for its priority, when it arrived.
type HopTruth struct {
	Switch          string `json:"switch"`
	In              string `json:"in"`  // input port, "node/port"
	Out             string `json:"out"` // output port
	Priority        int    `json:"priority"`
	Packets         int64  `json:"packets"`
	MeanResidenceNs int64  `json:"mean_residence_ns"` // rounded down
	MaxResidenceNs  int64  `json:"max_residence_ns"`
	MeanQueueBytes  int64  `json:"mean_queue_bytes"` // rounded down
}

// ProbeTruth is one IFA probe's hops, oldest first, as the switches stamped
// them (the probe carries them newest first).
type ProbeTruth struct {
	Flow int             `json:"flow"` // index into flows
	PSN  uint32          `json:"psn"`
	Hops []ProbeHopTruth `json:"hops"`
}

// ProbeHopTruth is one switch's stamp: what the probe's metadata says
// (times cut to whole ns), with the ports by name.
type ProbeHopTruth struct {
	Switch      string `json:"switch"`
	DeviceID    uint32 `json:"device_id"` // the switch's LID
	In          string `json:"in"`
	Out         string `json:"out"`
	RxNs        int64  `json:"rx_ns"` // the probe's last byte arrived, ns since the epoch
	ResidenceNs int64  `json:"residence_ns"`
	QueueBytes  int    `json:"queue_bytes"`
}

// PriorityPFCTruth is one priority of a switch input's PFC: its settings,
// the frames it sent and how full its queue got.
type PriorityPFCTruth struct {
	Priority          int    `json:"priority"`
	XOFFBytes         int    `json:"xoff_bytes"`
	XONBytes          int    `json:"xon_bytes"`
	HeadroomBytes     int    `json:"headroom_bytes"`
	PauseQuanta       int    `json:"pause_quanta"`
	PauseNs           int64  `json:"pause_ns"` // what pause_quanta is at the link's rate
	RefreshNs         int64  `json:"refresh_ns"`
	XOFFFrames        uint64 `json:"xoff_frames"` // PFC frames pausing it
	XONFrames         uint64 `json:"xon_frames"`  // ... and resuming it
	MaxQueuedBytes    int    `json:"max_queued_bytes"`
	HeadroomOverflows uint64 `json:"headroom_overflows"` // frames a real switch would have dropped
}

// LinkTruth is one link.
type LinkTruth struct {
	A             string  `json:"a"` // "node/port"
	B             string  `json:"b"`
	Rate          string  `json:"rate"`
	Lanes         int     `json:"lanes"`
	PropagationNs int64   `json:"propagation_ns"`
	NsPerByte     float64 `json:"ns_per_byte"`    // serialisation time of one byte over all lanes
	SymbolNs      float64 `json:"symbol_ns"`      // one 8-bit symbol on one lane
	Gbps          int     `json:"gbps,omitempty"` // Ethernet: the link's rate
}

// PortTruth is one port: its receive buffers, and its PortXmitWait with the
// waiting behind it.
type PortTruth struct {
	Port          string  `json:"port"` // "node/port"
	Peer          string  `json:"peer"`
	LID           uint16  `json:"lid"` // the LID perfquery names it by (the switch's LID for switch ports)
	Switch        bool    `json:"switch"`
	VLBufferBytes []int   `json:"vl_buffer_bytes"` // receive buffer per data VL, bytes
	SymbolNs      float64 `json:"symbol_ns"`
	TickSymbols   float64 `json:"tick_symbols"` // tick length in symbol times of this port's rate
	// XmitWaitTicks is the final PortXmitWait; XmitWaitNs the total time the
	// port had data and no credits to send it, over Waits separate waits.
	XmitWaitTicks uint64 `json:"xmit_wait_ticks"`
	XmitWaitNs    int64  `json:"xmit_wait_ns"`
	Waits         int    `json:"waits"`
	// Congestion lists the episodes: waits closer together than four
	// MTU-packet times, merged.
	Congestion    []Interval `json:"congestion,omitempty"`
	XmitPkts      uint64     `json:"xmit_pkts"`
	RcvPkts       uint64     `json:"rcv_pkts"`
	XmitDataBytes uint64     `json:"xmit_data_bytes"` // data packets, LRH through VCRC
	RcvDataBytes  uint64     `json:"rcv_data_bytes"`
	// Ethernet: the time each priority was paused by the peer (summing
	// pauses), and a switch input's PFC.
	PausedNs []int64            `json:"paused_ns,omitempty"`
	PFC      []PriorityPFCTruth `json:"pfc,omitempty"` // per priority in use
}

// Interval is one congestion episode on a port.
type Interval struct {
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	WaitNs  int64  `json:"wait_ns"` // time within it the port was waiting for credits
	Ticks   uint64 `json:"ticks"`   // PortXmitWait increase over it
	Waits   int    `json:"waits"`   // separate waits it is made of
}

// FlowTruth is one flow's outcome.
type FlowTruth struct {
	Src         string `json:"src"`
	Dst         string `json:"dst"`
	SLID        uint16 `json:"slid"`
	DLID        uint16 `json:"dlid"`
	DestQP      uint32 `json:"dest_qp"`
	SL          int    `json:"sl"`
	Bytes       int64  `json:"bytes"`
	Packets     int64  `json:"packets"`
	FirstNs     int64  `json:"first_ns"`      // first packet injected
	LastNs      int64  `json:"last_ns"`       // last packet delivered
	MeanQueueNs int64  `json:"mean_queue_ns"` // time in switch buffers per packet, mean (rounded down)
	MaxQueueNs  int64  `json:"max_queue_ns"`
}

// PacketTruth is one data packet's journey (with truth_packets).
type PacketTruth struct {
	Flow      int    `json:"flow"` // index into flows
	PSN       uint32 `json:"psn"`
	InjectNs  int64  `json:"inject_ns"`  // first byte left the source
	DeliverNs int64  `json:"deliver_ns"` // last byte reached the destination
	QueueNs   int64  `json:"queue_ns"`   // time spent waiting in switch input buffers
}

// TapTruth names a capture file and what it shows.
type TapTruth struct {
	Port       string `json:"port"`
	File       string `json:"file"`
	Frames     int    `json:"frames"`
	QuantizeNs int64  `json:"quantize_ns,omitempty"`
	IfaceTx    int    `json:"iface_tx"`             // ERF interface of frames the port sends
	IfaceRx    int    `json:"iface_rx"`             // ... and of frames it receives
	SnapBytes  int    `json:"snap_bytes,omitempty"` // bytes of each packet kept, 0 = all
}

// TelemetryTruth names the telemetry written.
type TelemetryTruth struct {
	File       string   `json:"file"`
	PeriodNs   int64    `json:"period_ns"`
	Samples    int      `json:"samples"`
	Ports      []string `json:"ports"`
	SysfsDir   string   `json:"sysfs_dir,omitempty"`
	SidecarDir string   `json:"sidecar_dir,omitempty"`
}

// Port returns the truth of port "node/n", or nil.
func (t *Truth) Port(name string) *PortTruth {
	for i := range t.Ports {
		if t.Ports[i].Port == name {
			return &t.Ports[i]
		}
	}
	return nil
}

// write writes the truth as indented JSON.
func (t *Truth) write(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

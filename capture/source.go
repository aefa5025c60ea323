package capture

import (
	"errors"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// Source is an open capture: a ring that packets arrive in.
type Source interface {
	// Next returns the next packet. It returns ErrTimeout when none arrived
	// within the poll interval (Config.PollTimeout), so callers can check for
	// a stop request; the packet's Data is valid until the next call.
	Next() (capfile.Packet, error)
	// LinkType is the pcap link type of the packets: decode.LinkTypeEthernet
	// or decode.LinkTypeInfiniBand (native IB, LRH first).
	LinkType() int
	// Stats returns the counters since the Source was opened.
	Stats() (Stats, error)
	// Device names what was opened, for messages ("eth2", "mlx5_0 port 1").
	Device() string
	// Close releases the ring and the device.
	Close() error
}

// Stats are a Source's counters since it was opened, in packets.
type Stats struct {
	// Received counts the packets the backend put into the ring (AF_PACKET:
	// tp_packets, which includes the ones dropped for lack of room).
	Received uint64
	// KernelDrops counts packets the kernel could not put into the ring
	// because it was full (AF_PACKET tp_drops).
	KernelDrops uint64
	// DeviceDrops counts packets the RDMA device dropped because no receive
	// buffer was posted (hw_counters/out_of_buffer, after minus before).
	DeviceDrops uint64
	// DeviceDropsKnown is false when the device has no such counter to read.
	DeviceDropsKnown bool
	// RingEmptied counts the times the verbs backend's receive ring was
	// left with no posted buffer, when the device must drop what arrives
	// (DeviceDrops counts those packets).
	RingEmptied uint64
	// CompletionErrors counts packets the verbs backend lost to a receive
	// completion with an error status (a frame larger than a ring slot).
	// Such an error puts the receive queue in its error state, so the
	// capture stops after it.
	CompletionErrors uint64
	// NotRoCE counts frames dropped in user space because they are not
	// RoCE, or not kept by Config.FilterExpr: on AF_PACKET, the few that
	// reached the ring before the kernel filter was attached; on a verbs
	// port, which has no kernel filter, every frame of the port the filter
	// does not keep. Zero with Config.All.
	NotRoCE uint64
	// KernelFilter is set when a kernel filter keeps frames out of the
	// ring (AF_PACKET, unless Config.All without an expression): the
	// kernel counts no frame it rejects (tp_packets counts what it
	// passed), so NotRoCE, and the Report's Filtered, count only what was
	// filtered in user space, and how many frames the kernel kept out is
	// not known.
	KernelFilter bool
	// RingFilled is how full the receive ring is now, in packets: on
	// AF_PACKET, the frames the kernel put in the ring that Next has not
	// returned yet; on a verbs port, the receive buffers the device filled
	// that are not posted again yet (a completion still in the completion
	// queue counts once polled). Next and Stats are called by one
	// goroutine, so it costs the receive loop nothing: AF_PACKET reads
	// the kernel's count and gopacket's atomic count of frames returned,
	// verbs the ring's own accounting.
	RingFilled uint64
	// RingSlots is how many packets the ring holds when full: the verbs
	// ring's receive buffers; 0 on AF_PACKET, whose TPACKET_V3 blocks (-B
	// bytes) hold as many frames as fit.
	RingSlots uint64
	// LinkDowns counts the times the captured interface went down
	// (AF_PACKET): the capture waited for it to come back up each time
	// (an interface that is down carries no frames).
	LinkDowns uint64
}

// ErrTimeout is returned by Source.Next when no packet arrived in time.
var ErrTimeout = errors.New("capture: no packet within the poll interval")

// ErrVerbsUnavailable is in the error of an RDMA device capture (and of
// VerbsAvailable) when the verbs sniffer cannot run here: libibverbs, which
// it loads at run time, is missing or lacks a function, or the platform is
// not one the binding covers.
var ErrVerbsUnavailable = errors.New("the verbs sniffer needs libibverbs (rdma-core)")

// installVerbsAdvice says what to install for the verbs sniffer.
const installVerbsAdvice = "install libibverbs1 and ibverbs-providers (rdma-core; apt-get install libibverbs1 ibverbs-providers), " +
	"or capture RoCE on the Ethernet netdev with AF_PACKET"

// Config is how to open a Source. The zero value, or nil, means defaults.
type Config struct {
	// SnapLenBytes keeps at most this many bytes of each packet; 0 keeps
	// whole packets (up to DefaultSnapLenBytes).
	SnapLenBytes int
	// RingBytes is the receive ring's size in bytes (-B); 0 means
	// DefaultRingBytes.
	RingBytes int
	// All captures every frame, not only RoCE (AF_PACKET; the kernel filter
	// is left out).
	All bool
	// FilterExpr is a capture filter in tcpdump's syntax (pcap-filter(7),
	// compiled by libpcap: see CompileFilter). It replaces the RoCE filter:
	// the frames it keeps are the frames captured. "" keeps RoCE (or every
	// frame with All). Kept here so writers can record it (pcapng if_filter).
	FilterExpr string
	// TimestampType is where timestamps come from (Target.TimestampTypes
	// lists a device's): "" is the default of its capture path, host on
	// AF_PACKET (a software RoCE device's included), adapter on a verbs
	// port.
	TimestampType string
	// Promiscuous puts the netdev in promiscuous mode (AF_PACKET).
	Promiscuous bool
	// Direction keeps only the frames that went this way (tcpdump -Q), in
	// the kernel filter (AF_PACKET); DirectionUnknown keeps both. Frames
	// that reach the ring before the filter is attached are chosen by
	// RunOptions.Direction.
	Direction decode.Direction
	// PollTimeoutMs is how long Next waits before returning ErrTimeout, in
	// ms; 0 means DefaultPollTimeoutMs.
	PollTimeoutMs int
	// SysfsRoot is the sysfs mount point Open looks devices up under; ""
	// means SysfsRoot() ($IBSCOPE_SYSFS, or /sys). Tests point it at a fake
	// tree.
	SysfsRoot string
	// Notice, when set, is told of what happens to the capture without
	// ending it, one sentence each (AF_PACKET: the interface went down,
	// and came back up). It is called by the goroutine that calls Next.
	Notice func(string)
}

// Defaults for Config's zero fields.
const (
	DefaultSnapLenBytes  = 65535
	DefaultRingBytes     = 64 << 20
	DefaultPollTimeoutMs = 100
)

func (c *Config) withDefaults() Config {
	var d Config
	if c != nil {
		d = *c
	}
	if d.SnapLenBytes <= 0 || d.SnapLenBytes > DefaultSnapLenBytes {
		d.SnapLenBytes = DefaultSnapLenBytes
	}
	if d.RingBytes <= 0 {
		d.RingBytes = DefaultRingBytes
	}
	if d.PollTimeoutMs <= 0 {
		d.PollTimeoutMs = DefaultPollTimeoutMs
	}
	if d.SysfsRoot == "" {
		d.SysfsRoot = SysfsRoot()
	}
	return d
}

// AnyDevice is the name that captures on every network interface, as
// tcpdump -i any does: LINUX_SLL2 records (link type 276), each naming its
// interface by index and its packet type (AF_PACKET; Ethernet interfaces).
const AnyDevice = "any"

// Open opens device for capture: it resolves the name under
// Config.SysfsRoot (Resolve) and opens the target (OpenTarget). An unknown
// name returns an error that lists the devices there are.
func Open(device string, cfg *Config) (Source, error) {
	c := cfg.withDefaults()
	t, err := Resolve(device, c.SysfsRoot)
	if err != nil {
		return nil, err
	}
	return OpenTarget(t, cfg)
}

// OpenTarget opens a resolved target with its backend: the verbs sniffer
// on an RDMA port, an AF_PACKET ring on a netdev (that of a software RoCE
// device included) or on every netdev.
func OpenTarget(t Target, cfg *Config) (Source, error) {
	c := cfg.withDefaults()
	if t.Backend == BackendVerbs {
		return openVerbs(t, c)
	}
	return openAFPacket(t, c)
}

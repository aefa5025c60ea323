package analyze

import (
	"fmt"
	"hash/maphash"
	"io"
	"sync/atomic"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/filter"
)

// The reorder window of a Stream, in packets.
const (
	// DefaultWindowPackets is the window when StreamOptions leaves it 0:
	// packets stamped up to this many packets out of order are put back in
	// order.
	DefaultWindowPackets = 4096
	// MaxWindowPackets bounds the window: the stream holds a ring of the
	// window plus one packets, 160 bytes each (160 MB at this bound;
	// with StreamOptions.Ethernet 64 more, and an IFA probe's hops up to
	// 620 bytes more).
	MaxWindowPackets = 1_000_000
)

// StreamOptions configure a Stream. The zero value is usable.
type StreamOptions struct {
	// WindowPackets bounds the reorder window, in packets (DefaultWindowPackets if 0).
	WindowPackets int
	// CheckCRC verifies ICRC and VCRC (needed for CRC failure counts; costs a pass over each packet).
	CheckCRC bool
	// LinkPackets hands out native IB frames without a BTH too: link-level
	// flow-control packets, which credit accounting reads (Packet.Key.Transport
	// is decode.TransportLink); without it they are counted and skipped.
	LinkPackets bool
	// MACControl hands out PFC and PAUSE frames too (Packet.MACControl;
	// Key.Transport is decode.TransportNone), which the pfc analysis reads;
	// without it they are counted as not IB and skipped. It implies Ethernet.
	MACControl bool
	// Ethernet fills Packet.EthernetFields (addresses, priorities, pause
	// requests, IFA hops), which the pfc and hops analyses read; without
	// it they are all zero, and the other analyses read a packet faster.
	Ethernet bool
	// CM fills Packet.CM on a communication management MAD's packet
	// (decode.MAD.CM), which the cm analysis reads and flows uses to start
	// a connection's PSN sequences afresh (88 bytes a packet of the window).
	CM bool
	// OnDecodeError is told of every frame that could not be decoded, and
	// of every frame without a timestamp (a pcapng simple packet block,
	// whose Err says so); the stream skips the frame and goes on.
	OnDecodeError func(err *capfile.DecodeError)
	// OnFileError is told when a file turns out damaged; the stream stops
	// reading that file and goes on with the others.
	OnFileError func(err error)
	// Stop, once set, ends the reading as at the end of the files
	// (capfile.StreamOptions.Stop): from the open on, which reads up to
	// the first packet, and within any run of frames skipped.
	Stop *atomic.Bool
	// Select, when set, chooses the packets handed out (ibanalyze's
	// --select, --from, --to, -c), in time order before the reorder
	// window; the others are counted in NotSelected. Once its count is
	// reached the reading ends.
	Select *filter.Selection
	// Workers, above 1, decodes regular files on that many goroutines
	// (capfile.StreamOptions.Workers): the packets and counts are the same.
	Workers int
	// KeyOnly says the analysis reads of each packet only TsNs, File,
	// Frame, Offset, Key, OpCode, PSN, Iface, FrameBytes, WireBytes and
	// Late (ipd, ipd --compare): its other fields may be left zero. The
	// common RoCEv2 frame is then decoded only as far as those
	// (decode.Decoder.DecodeHead with HeadFields), on the caller's
	// goroutine or on the workers, unless a filter reads a whole frame.
	KeyOnly bool
	// Map maps large regular files into memory instead of reading them
	// (capfile.StreamOptions.Map, whose rule for the reading goroutine
	// holds).
	Map bool
}

// StreamStats counts what a Stream read and what it did about disorder.
type StreamStats struct {
	capfile.StreamStats
	Packets     int // packets handed out
	NotIB       int // frames that are neither IB nor RoCE, skipped
	LinkPackets int // IB link-level flow-control packets (skipped unless asked for)
	// CutHeaders counts IB/RoCE frames cut by the snap length (or their
	// tool) before their BTH ends: no transport packet to analyse, skipped.
	CutHeaders int
	// Late counts packets that arrived more than the reorder window out of
	// order; they are handed out with Packet.Late set. FirstLate is the first.
	Late      int
	FirstLate capfile.Where
	// SeenTwice counts the second records of frames a Linux capture on
	// every interface saw leaving one interface of the host and arriving at
	// another (seentwice.go): not handed out, the packet counted once.
	SeenTwice int
	// NotSelected counts the packets StreamOptions.Select left out.
	NotSelected int
}

// Stream is the packets of a capfile.Stream (one or more captures merged in
// timestamp order) as Packets, with packets stamped out of order within a
// file sorted back within a bounded window.
type Stream struct {
	in     *capfile.Stream
	sel    *filter.Selection // StreamOptions.Select, nil when it selects all
	window int
	ring   []Packet // sorted by TsNs from head, a circular buffer of window+1 slots (ringAt)
	// ethernet is set when the packets' EthernetFields are filled: each
	// slot then points at its own (they move with the packets), else all
	// at noEthernet, which stays zero.
	ethernet   bool
	noEthernet EthernetFields
	eth        []EthernetFields // each slot's own, with ethernet
	// keyOnly is StreamOptions.KeyOnly: packets read on the caller's
	// goroutine are filled by fillKey.
	keyOnly bool
	// cooked is set when a file is a Linux cooked capture, whose frames
	// seenTwice looks at; a stream of other files skips the call.
	cooked bool
	// cm is set when the packets' CM messages are filled (StreamOptions.CM),
	// the same way: each slot its own, else all at noCM.
	cm   bool
	noCM decode.CMMessage
	cms  []decode.CMMessage // each slot's own, with cm
	// slotsInit counts the ring's slots initSlot has set, from 0.
	slotsInit int
	head      int
	n         int
	stats     StreamStats
	eof       bool
	// final is set by Run before its last report: every packet has been
	// handed out and added (a report so far comes before its packet is).
	final bool

	outStarted bool
	lastOutNs  int64
	twice      seenTwice
	cut        liveCut // reports so far of a live input (livecut.go)
}

// OpenStream opens every capture ("-" for standard input).
func OpenStream(paths []string, opts StreamOptions) (*Stream, error) {
	if err := checkWindow(opts.WindowPackets); err != nil {
		return nil, err
	}
	s := &Stream{}
	in, err := capfile.OpenStream(paths, s.decodeOptions(opts))
	if err != nil {
		return nil, err
	}
	s.start(in, opts)
	return s, nil
}

// Opener opens a new Stream of the same input each time it is called with
// the options an analysis needs (an analysis that reads its input twice,
// such as credits inferring the byte time, calls it twice).
type Opener func(need StreamOptions) (*Stream, error)

// Files opens paths ("-" for standard input, which can be read once) with
// base's window and error callbacks (unless the analysis gives its own) and
// what the analysis needs.
func Files(paths []string, base StreamOptions) Opener {
	return func(need StreamOptions) (*Stream, error) {
		need.WindowPackets = base.WindowPackets
		need.Workers, need.Map = base.Workers, base.Map
		if need.OnDecodeError == nil {
			need.OnDecodeError = base.OnDecodeError
		}
		if need.OnFileError == nil {
			need.OnFileError = base.OnFileError
		}
		need.CheckCRC = need.CheckCRC || base.CheckCRC
		if need.Stop == nil {
			need.Stop = base.Stop
		}
		return OpenStream(paths, need)
	}
}

// NewStream reads captures already open (pipes, standard input, memory)
// as one stream; the Stream closes them.
func NewStream(readers []*capfile.Reader, opts StreamOptions) *Stream {
	s := &Stream{}
	s.start(capfile.NewStream(readers, s.decodeOptions(opts)), opts)
	return s
}

func checkWindow(w int) error {
	if w < 0 || w > MaxWindowPackets {
		return fmt.Errorf("reorder window of %d packets: want 1 to %d packets (0 for the default %d)", w, MaxWindowPackets, DefaultWindowPackets)
	}
	return nil
}

// decodeOptions keeps IB and RoCE transport packets (and link packets when
// asked) and counts the rest.
func (s *Stream) decodeOptions(opts StreamOptions) capfile.StreamOptions {
	s.twice.seed = maphash.MakeSeed() // before the open: the workers print the packets with it
	keepLink, keepMAC := opts.LinkPackets, opts.MACControl
	ethernet, cm := opts.Ethernet || opts.MACControl, opts.CM
	s.keyOnly = opts.KeyOnly
	headsOnly, headFields := keyHeads(opts)
	return capfile.StreamOptions{CheckCRC: opts.CheckCRC, OnDecodeError: opts.OnDecodeError, OnFileError: opts.OnFileError, Stop: opts.Stop,
		Workers: opts.Workers, HeadsOnly: headsOnly, HeadFields: headFields, Map: opts.Map,
		// The frames' heads are all the stream reads of them (Keep, the
		// times, the selection's bounds and count), unless a filter
		// reads more.
		Heads: opts.Select == nil || opts.Select.Filter == nil,
		Project: func(linkType int) capfile.Projection {
			return newPacketBatch(ethernet, cm, opts.KeyOnly, linuxCooked(linkType), s.twice.seed)
		},
		Keep: func(f *decode.Frame) bool {
			switch {
			case keepMAC && f.Has&(decode.HasPFC|decode.HasPause) != 0:
				return true
			case f.Transport == decode.TransportNone:
				s.stats.NotIB++
				return false
			case f.Has&decode.HasBTH == 0 && f.Truncated() && f.Transport != decode.TransportLink:
				s.stats.CutHeaders++
				return false
			case f.Has&decode.HasBTH == 0:
				s.stats.LinkPackets++
				return keepLink && (f.Transport == decode.TransportLink || f.Transport == decode.TransportIB)
			}
			return true
		}}
}

// keyHeads says whether the frames are decoded only as far as their heads
// and which header fields beyond the head (capfile.StreamOptions.HeadsOnly
// and HeadFields): with KeyOnly on the caller's goroutine, what fillKey
// reads of a frame and what the filter reads, if the filter reads no more
// than a head; the same on the workers of frames read ahead, whose Packets
// they make (packetBatch.keyOnly).
func keyHeads(opts StreamOptions) (bool, decode.HeadFields) {
	if !opts.KeyOnly || opts.Ethernet || opts.MACControl || opts.CM || opts.CheckCRC {
		return false, 0
	}
	fields := decode.HeadSrc | decode.HeadDst | decode.HeadOpcode | decode.HeadQP | decode.HeadPSN
	if opts.Select != nil && opts.Select.Filter != nil {
		more, ok := opts.Select.Filter.Head()
		if !ok {
			return false, 0
		}
		fields |= more
	}
	return true, fields
}

func (s *Stream) start(in *capfile.Stream, opts StreamOptions) {
	w := opts.WindowPackets
	if w <= 0 {
		w = DefaultWindowPackets
	}
	w = min(w, MaxWindowPackets) // OpenStream refuses more; here there is no error to return
	// The window's packets and the one handed out last, which stays
	// valid until the next is taken: 4,097 slots of 160 bytes for the
	// default window, each a page fault's worth of the start (a power of
	// two, 8,192, was 320 page faults, twice as many).
	size := w + 1
	s.in, s.window, s.ring = in, w, make([]Packet, size)
	for i := range in.Names() {
		s.cooked = s.cooked || linuxCooked(in.LinkType(i))
	}
	s.ethernet = opts.Ethernet || opts.MACControl
	if s.ethernet {
		s.eth = make([]EthernetFields, size)
	}
	s.cm = opts.CM
	if opts.Select.Active() {
		sel := *opts.Select // a stream's own count and first packet: credits reads twice, ipd --compare two streams
		s.sel = &sel
	}
	if s.cm {
		s.cms = make([]decode.CMMessage, size)
	}
}

// initSlot points ring slot i at its own EthernetFields and CM message,
// or at the stream's zero ones. push does it as the ring first reaches
// the slot (they are reached in order, from 0), so that a capture shorter
// than the window touches only the slots it fills: each 25 slots are a
// page fault of the start.
func (s *Stream) initSlot(i int) {
	s.ring[i].EthernetFields, s.ring[i].CM = &s.noEthernet, &s.noCM
	if s.ethernet {
		s.ring[i].EthernetFields = &s.eth[i]
	}
	if s.cm {
		s.ring[i].CM = &s.cms[i]
	}
	s.slotsInit = i + 1
}

// Close closes every file.
func (s *Stream) Close() error { return s.in.Close() }

// Stats returns the counts so far.
func (s *Stream) Stats() StreamStats {
	st := s.stats
	st.StreamStats = s.in.Stats()
	return st
}

// Names returns the file names, indexed by Packet.File.
func (s *Stream) Names() []string { return s.in.Names() }

// Progress returns bytes read so far and the files' total size.
func (s *Stream) Progress() (doneBytes, totalBytes int64) { return s.in.Progress() }

// ResolutionNs returns the timestamp resolution in ns (capfile.Stream.ResolutionNs).
func (s *Stream) ResolutionNs() int64 { return s.in.ResolutionNs() }

// WindowPackets returns the reorder window, in packets.
func (s *Stream) WindowPackets() int { return s.window }

// Next hands out the next packet in timestamp order, io.EOF after the last.
func (s *Stream) Next(p *Packet) error {
	q := s.next()
	if q == nil {
		return io.EOF
	}
	*p = *q
	return nil
}

// next is Next's packet in its place in the window, valid until the next
// call (nil after the last): Run hands it to the analysis as it is, where a
// copy of its 160 bytes was a twentieth of the ordered work of flows.
func (s *Stream) next() *Packet {
	for s.n < s.window && !s.eof && !s.cut.held {
		f, file, err := s.in.Next()
		if err != nil { // io.EOF: decode errors are skipped, not handed out
			s.eof = true
			break
		}
		if s.sel != nil {
			keep, done := s.sel.Keep(f)
			if done {
				s.eof = true
				break
			}
			if !keep {
				s.stats.NotSelected++
				continue
			}
		}
		pb, k := s.in.Projected()
		if s.cooked && s.seenTwice(f, file, pb, k) {
			s.stats.SeenTwice++
			continue
		}
		s.push(f, file, pb, k)
		s.cutRead(f.TsNs)
	}
	if s.n == 0 {
		return nil
	}
	p := &s.ring[s.head]
	s.head = s.ringAt(s.head, 1)
	s.n--
	if p.Late {
		if s.stats.Late == 0 {
			s.stats.FirstLate = capfile.Where{File: s.in.Names()[p.File], Frame: p.Frame, Offset: p.Offset}
		}
		s.stats.Late++
	} else {
		s.outStarted, s.lastOutNs = true, p.TsNs
	}
	s.cutHandedOut(p.TsNs)
	s.stats.Packets++
	return p
}

// seenTwice reports whether f, from file, is the second record of a frame
// already counted (seentwice.go); pb and k are its packetBatch and index in
// it when it was read ahead.
func (s *Stream) seenTwice(f *decode.Frame, file int, pb capfile.Projection, k int) bool {
	if !printed(f, linuxCooked(s.in.LinkType(file))) {
		return false
	}
	if pb != nil {
		return s.twice.againPrinted(pb.(*packetBatch).prints[k], f, file)
	}
	return s.twice.againPrinted(s.twice.packetPrint(f), f, file)
}

// linuxCooked reports whether a link type records the direction of each
// frame: Linux SLL or SLL2, whose captures may hold a frame twice.
func linuxCooked(linkType int) bool {
	return linkType == decode.LinkTypeLinuxSLL || linkType == decode.LinkTypeLinuxSLL2
}

// push inserts frame f of file into the ring as a Packet, keeping the ring
// sorted (stable for equal times): in-order packets cost nothing beyond the
// copy. A packet stamped before one already handed out cannot be put in
// order any more: it is marked Late and keeps its place in the file's
// order, so that sequence analyses (PSN gaps, duplicates) see it where it
// was captured rather than ahead of the window of packets read before it.
// A later packet moves past a Late one only when it must go before an
// in-order packet read before that one.
func (s *Stream) push(f *decode.Frame, file int, pb capfile.Projection, k int) {
	i := s.ringAt(s.head, s.n)
	if i == s.slotsInit {
		s.initSlot(i)
	}
	if pb != nil {
		pb.(*packetBatch).take(k, &s.ring[i])
		s.ring[i].File, s.ring[i].Frame = file, f.Number // a piece's batch numbers its frames from 1 (packetBatch.Renumber)
	} else if s.keyOnly {
		s.ring[i].fillKey(f, file)
	} else {
		s.ring[i].fill(f, file)
		if s.ethernet {
			s.ring[i].EthernetFields.fill(f)
		}
		if s.cm {
			fillCM(s.ring[i].CM, f)
		}
	}
	s.n++
	if s.outStarted && s.ring[i].TsNs < s.lastOutNs {
		s.ring[i].Late = true
		return
	}
	for k := s.n - 1; k > 0; k-- {
		prev := s.ringAt(i, -1)
		if s.ring[prev].Late {
			if !s.belongsBefore(i, k) {
				break
			}
		} else if s.ring[prev].TsNs <= s.ring[i].TsNs {
			break
		}
		s.ring[prev], s.ring[i] = s.ring[i], s.ring[prev]
		i = prev
	}
}

// ringAt is the ring index d slots after i (before, for d < 0), with
// |d| at most the ring's length.
func (s *Stream) ringAt(i, d int) int {
	i += d
	if i >= len(s.ring) {
		i -= len(s.ring)
	} else if i < 0 {
		i += len(s.ring)
	}
	return i
}

// belongsBefore reports whether the packet at ring index i, with k packets
// before it in the ring, is stamped before the nearest in-order packet that
// precedes it (looking past Late ones).
func (s *Stream) belongsBefore(i, k int) bool {
	for j := s.ringAt(i, -1); k > 0; j, k = s.ringAt(j, -1), k-1 {
		if !s.ring[j].Late {
			return s.ring[j].TsNs > s.ring[i].TsNs
		}
	}
	return false
}

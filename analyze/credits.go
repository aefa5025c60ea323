package analyze

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
)

// Credit accounting from a capture that holds both directions of one link
// with its flow-control packets (FCPs), as a tap at a port sees them: per
// link direction and VL, the sender's FCPs carry its FCTBS (blocks sent
// since link init) and the receiver's FCPs carry its FCCL (blocks received
// plus free buffer blocks), both mod 4096. Credits available to the sender
// are FCCL − FCTBS (mod 4096) at any moment; their maximum, seen while the
// link is idle, is the receiver's whole buffer.

// DefaultSeriesPoints is how many points a downsampled time series (credits
// per direction, buffer occupancy per sender) keeps when the caller does not
// say; MaxSeriesPoints bounds what a caller may ask (40 bytes a point).
const (
	DefaultSeriesPoints = 2000
	MaxSeriesPoints     = 1_000_000
)

// seriesPoints checks a series bound, 0 taking the default.
func seriesPoints(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultSeriesPoints, nil
	case n < 0 || n > MaxSeriesPoints:
		return 0, fmt.Errorf("time series of %d points: want 1 to %d", n, MaxSeriesPoints)
	}
	return n, nil
}

// ErrNoFCP is returned by Credits for a capture without flow-control
// packets: the switch-buffer estimate then needs two captures (Buffer).
var ErrNoFCP = errors.New("no flow-control packets (ERF type 25) in the capture")

// CreditOptions tune Credits. The zero value infers the link's byte time.
type CreditOptions struct {
	// NsPerByte is the serialisation time of one byte on the link, ns (8 /
	// data rate in Gb/s); 0 infers it from back-to-back data packets.
	NsPerByte float64
	// MaxPoints bounds each direction's time series (DefaultSeriesPoints
	// when 0, MaxSeriesPoints at most).
	MaxPoints int
}

// CreditReport is the credit accounting of one capture.
type CreditReport struct {
	File              string  `json:"file"`
	Frames            int     `json:"frames"`
	FCPs              int     `json:"fcps"`
	DataPackets       int     `json:"data_packets"`
	DecodeErrors      int     `json:"decode_errors"`
	NoTime            int     `json:"no_time"`                // frames without a timestamp, skipped
	CutHeaders        int     `json:"cut_headers"`            // frames cut before the end of their BTH, skipped
	FileErrors        int     `json:"file_errors"`            // damaged files (reading stopped)
	NotSelected       int     `json:"not_selected,omitempty"` // frames --select, --from, --to or -c left out
	NsPerByte         float64 `json:"ns_per_byte"`            // byte time used for packet end times
	NsPerByteInferred bool    `json:"ns_per_byte_inferred"`   // true when inferred from the capture
	// TimestampStepNs is the coarsest step every timestamp is a multiple
	// of (1000 for ibdump's microseconds); credit stalls cannot be timed
	// when it is not well below a packet time, and are then reported as -1.
	TimestampStepNs int64        `json:"timestamp_step_ns"`
	Links           []CreditLink `json:"links"`              // one per link direction and VL
	Problems        []string     `json:"problems,omitempty"` // what could not be accounted
	points          int
}

// CreditLink is one link direction and VL: data sent on interface Iface,
// FCCL advertised from interface PeerIface.
type CreditLink struct {
	Iface        int   `json:"iface"`      // ERF interface of the data and of the sender's FCPs
	PeerIface    int   `json:"peer_iface"` // interface of the receiver's FCPs
	VL           int   `json:"vl"`
	DataPackets  int   `json:"data_packets"`
	DataBlocks   int64 `json:"data_blocks"` // 64-byte blocks of the data packets seen
	SenderFCPs   int   `json:"sender_fcps"`
	ReceiverFCPs int   `json:"receiver_fcps"`
	// FCTBS check: at each sender FCP after the first, the FCTBS must have
	// advanced by exactly the blocks of the data packets seen since.
	FCTBSChecks     int             `json:"fctbs_checks"`
	FCTBSMismatches int             `json:"fctbs_mismatches"`
	MissingBlocks   int64           `json:"missing_blocks"` // blocks the sender counted that the capture lacks
	Mismatches      []FCTBSMismatch `json:"mismatches,omitempty"`
	// BufferBlocks is the receive-buffer estimate: the most credits ever
	// available (FCCL − FCTBS), reached when nothing is in flight.
	BufferBlocks  int           `json:"buffer_blocks"`
	BufferBytes   int           `json:"buffer_bytes"`
	BufferAtNs    int64         `json:"buffer_at_ns"`         // first FCP that showed it
	BufferSeen    int           `json:"buffer_seen"`          // FCPs that showed it
	MinCredits    int           `json:"min_credits"`          // fewest blocks available just before a send
	MaxInFlight   int           `json:"max_in_flight"`        // most blocks sent and not yet returned (buffer − credits)
	CreditStallNs int64         `json:"credit_stall_ns"`      // time data waited for credits, -1 when the timestamps are too coarse to tell
	CreditStalls  int           `json:"credit_stalls"`        // separate waits
	StallNote     string        `json:"stall_note,omitempty"` // why credit stalls were not timed
	FirstNs       int64         `json:"first_ns"`
	LastNs        int64         `json:"last_ns"`
	Series        []CreditPoint `json:"series,omitempty"`

	st creditState
}

// FCTBSMismatch is one FCP whose FCTBS disagrees with the data seen.
type FCTBSMismatch struct {
	TsNs     int64 `json:"ts_ns"`
	Frame    int   `json:"frame"`
	Expected int   `json:"expected"` // FCTBS from the last FCP plus the blocks seen since, mod 4096
	Got      int   `json:"got"`
	Blocks   int   `json:"blocks"` // got − expected mod 4096: blocks sent and not captured
}

// CreditPoint is one moment of a link direction's credit state.
type CreditPoint struct {
	TsNs     int64 `json:"ts_ns"`
	FCTBS    int   `json:"fctbs"`
	FCCL     int   `json:"fccl"`
	Credits  int   `json:"credits"`   // FCCL − FCTBS mod 4096, blocks
	InFlight int   `json:"in_flight"` // buffer estimate − credits, blocks (filled at the end)
}

type creditState struct {
	anchored  bool
	fctbs     int // mod 4096, advanced by the data seen
	haveFCCL  bool
	fccl      int
	prevEndNs int64 // when the last data packet's last byte left
	// FCCL updates since the last data packet: a stall ends at the first
	// one that covers the next packet.
	updates []fcclUpdate
	covered bool // an update since the last packet covers any packet
	stride  int
	skip    int
}

type fcclUpdate struct {
	usableNs int64 // when the FCP was wholly received
	fccl     int
}

const maxMismatchesKept = 20

// maxPacketBlocks is the credit cost of the largest IB packet: a 4 KiB MTU
// first RDMA WRITE (LRH 8 + BTH 12 + RETH 16 + 4096 + ICRC 4 + VCRC 2).
const maxPacketBlocks = (decode.LRHLen + decode.BTHLen + decode.RETHLen + decode.MaxMTUBytes + decode.ICRCLen + decode.VCRCLen +
	decode.BlockBytes - 1) / decode.BlockBytes

// blocksOf is the credit cost of a packet of ibBytes, LRH through VCRC:
// 64-byte blocks, rounded up (IBA Vol. 1, 7.9.4; the 2015 study's 2074-byte
// packets took 33).
func blocksOf(ibBytes int) int { return (ibBytes + decode.BlockBytes - 1) / decode.BlockBytes }

// CreditsAnalysis accounts for credits per link direction and VL over a
// stream that hands out link packets (StreamOptions.LinkPackets).
type CreditsAnalysis struct {
	rep       CreditReport
	nsPerByte float64
	inferErr  error // why there is no byte time: not given, or not inferred
	links     map[[2]int]*CreditLink
	step      tsStep
	noDir     *Packet // the first packet whose direction the capture does not record
}

// NewCreditsAnalysis starts the accounting. Without a byte time
// (opts.NsPerByte 0) the buffer is still read from the FCPs, and only the
// credit stalls, which need packet end times, are left out, with a note
// saying why (Credits, which infers the byte time, says why that failed).
func NewCreditsAnalysis(opts CreditOptions) (*CreditsAnalysis, error) {
	points, err := seriesPoints(opts.MaxPoints)
	if err != nil {
		return nil, err
	}
	a := &CreditsAnalysis{rep: CreditReport{NsPerByte: opts.NsPerByte, points: points}, nsPerByte: opts.NsPerByte,
		links: map[[2]int]*CreditLink{}}
	if opts.NsPerByte <= 0 {
		a.inferErr = errNoByteTime
	}
	return a, nil
}

// errNoByteTime is the credit stalls' note when no byte time was given.
var errNoByteTime = errors.New("no byte time: the link rate was not given")

// Credits reads the captures open gives (twice when the byte time is to be
// inferred) and accounts for credits per link direction and VL.
func Credits(open Opener, opts CreditOptions) (*CreditReport, error) {
	if _, err := seriesPoints(opts.MaxPoints); err != nil {
		return nil, err
	}
	inferred := opts.NsPerByte <= 0
	var inferErr error
	if inferred {
		// The first pass is quiet: the second tells of bad frames and files.
		s, err := open(StreamOptions{LinkPackets: true, OnDecodeError: func(*capfile.DecodeError) {}, OnFileError: func(error) {}})
		if err != nil {
			return nil, err
		}
		opts.NsPerByte, inferErr = InferNsPerByte(s)
		s.Close()
	}
	a, err := NewCreditsAnalysis(opts)
	if err != nil {
		return nil, err
	}
	if inferErr != nil {
		a.inferErr = inferErr
	}
	s, err := open(StreamOptions{LinkPackets: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rep, err := Run(s, a, RunOptions[*CreditReport]{})
	if rep != nil {
		rep.NsPerByteInferred = inferred
	}
	return rep, err
}

func (a *CreditsAnalysis) get(iface, vl int) *CreditLink {
	k := [2]int{iface, vl}
	l := a.links[k]
	if l == nil {
		l = &CreditLink{Iface: iface, PeerIface: iface ^ 1, VL: vl, MinCredits: -1}
		l.st.stride = 1
		a.links[k] = l
	}
	return l
}

// Add accounts for one native IB packet: a link packet's FCTBS and FCCL, a
// data packet's blocks.
func (a *CreditsAnalysis) Add(p *Packet) {
	if a.noDir != nil {
		return
	}
	a.step.add(p.TsNs)
	t := p.Key.Transport
	if p.Iface < 0 && (t == decode.TransportLink || t == decode.TransportIB) {
		c := *p
		a.noDir = &c
		return
	}
	switch t {
	case decode.TransportLink:
		a.rep.FCPs++
		// The sender's own FCP: its FCTBS for data it sends on this VL.
		a.get(int(p.Iface), int(p.VL)).senderFCP(p.TsNs, p.Frame, int(p.FCTBS))
		// The same FCP is the receiver's FCCL for the opposite direction.
		a.get(int(p.Iface)^1, int(p.VL)).receiverFCP(p.TsNs+int64(math.Round(decode.LinkFCPLen*a.nsPerByte)), int(p.FCCL), a.rep.points)
	case decode.TransportIB:
		a.rep.DataPackets++
		a.get(int(p.Iface), int(p.VL)).data(p.TsNs, p.IBBytes, a.nsPerByte, a.rep.points)
	}
}

// Err stops the reading at a packet whose direction is not recorded.
func (a *CreditsAnalysis) Err() error {
	if a.noDir != nil {
		return errNoDirection
	}
	return nil
}

var errNoDirection = errors.New("the capture does not record direction, so the two sides' flow-control packets cannot be told apart")

// Report is the accounting so far. It works on copies of the links (their
// series are bounded), so the accounting goes on unchanged.
func (a *CreditsAnalysis) Report(s *Stream) (*CreditReport, error) {
	r := a.rep
	rep := &r
	names := s.Names()
	path := strings.Join(names, ", ")
	st := s.Stats()
	rep.File, rep.Frames, rep.DecodeErrors = path, st.Frames-st.DecodeErrors-st.NoTime, st.DecodeErrors
	rep.NoTime, rep.CutHeaders, rep.FileErrors, rep.NotSelected = st.NoTime, st.CutHeaders, st.FileErrors, st.NotSelected
	if p := a.noDir; p != nil {
		return rep, fmt.Errorf("%s: frame %d: %w", names[p.File], p.Frame, errNoDirection)
	}
	if rep.FCPs == 0 && rep.NotSelected > 0 {
		return rep, fmt.Errorf("%s: %w (none among the frames selected; %d left out)", path, ErrNoFCP, rep.NotSelected)
	}
	if rep.FCPs == 0 {
		return rep, fmt.Errorf("%s: %w", path, ErrNoFCP)
	}
	keys := make([][2]int, 0, len(a.links))
	for k, l := range a.links {
		if l.DataPackets == 0 && l.ReceiverFCPs == 0 {
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	rep.TimestampStepNs = a.step.value()
	for _, k := range keys {
		l := *a.links[k]
		l.Mismatches, l.Series = slices.Clone(l.Mismatches), slices.Clone(l.Series)
		l.st = creditState{}
		l.finish()
		if l.DataPackets > 0 && a.inferErr != nil {
			l.CreditStallNs, l.CreditStalls = -1, -1
			l.StallNote = a.inferErr.Error()
		} else if l.DataPackets > 0 {
			if pktNs := float64(l.DataBlocks*decode.BlockBytes) / float64(l.DataPackets) * a.nsPerByte; float64(4*rep.TimestampStepNs) > pktNs {
				l.CreditStallNs, l.CreditStalls = -1, -1
				l.StallNote = fmt.Sprintf("timestamps in steps of %s are too coarse against packets of about %s", units.FormatNs(rep.TimestampStepNs), units.FormatNs(int64(pktNs)))
			}
		}
		if l.StallNote != "" {
			rep.Problems = append(rep.Problems, fmt.Sprintf("interface %d VL %d: credit stalls not timed: %s", l.Iface, l.VL, l.StallNote))
		}
		if l.DataPackets > 0 && l.ReceiverFCPs == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("interface %d VL %d: %d data packets but no FCCL from the receiver (interface %d)", l.Iface, l.VL, l.DataPackets, l.PeerIface))
		}
		if l.DataPackets > 0 && l.SenderFCPs == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("interface %d VL %d: %d data packets but no FCP from the sender, so no FCTBS to start from", l.Iface, l.VL, l.DataPackets))
		}
		rep.Links = append(rep.Links, l)
	}
	return rep, nil
}

func (l *CreditLink) senderFCP(tsNs int64, frame, fctbs int) {
	l.SenderFCPs++
	s := &l.st
	if s.anchored {
		l.FCTBSChecks++
		if fctbs != s.fctbs {
			l.FCTBSMismatches++
			missing := (fctbs - s.fctbs) & 0xFFF
			l.MissingBlocks += int64(missing)
			if len(l.Mismatches) < maxMismatchesKept {
				l.Mismatches = append(l.Mismatches, FCTBSMismatch{TsNs: tsNs, Frame: frame, Expected: s.fctbs, Got: fctbs, Blocks: missing})
			}
		}
	}
	s.anchored = true
	s.fctbs = fctbs
}

func (l *CreditLink) receiverFCP(usableNs int64, fccl, maxPoints int) {
	l.ReceiverFCPs++
	s := &l.st
	s.haveFCCL = true
	s.fccl = fccl
	// Once an update after the last packet covers the largest packet, the
	// ones after it cannot end a stall: keep only the newest of them, as
	// the state carried into the next gap, so memory stays bounded.
	if n := len(s.updates); n >= 2 && s.covered {
		s.updates[n-1] = fcclUpdate{usableNs, fccl}
	} else {
		s.updates = append(s.updates, fcclUpdate{usableNs, fccl})
		s.covered = s.anchored && len(s.updates) >= 2 && (fccl-s.fctbs)&0xFFF >= maxPacketBlocks
	}
	if !s.anchored {
		return
	}
	c := (fccl - s.fctbs) & 0xFFF
	switch {
	case c > l.BufferBlocks:
		l.BufferBlocks, l.BufferAtNs, l.BufferSeen = c, usableNs, 1
	case c == l.BufferBlocks:
		l.BufferSeen++
	}
	l.point(usableNs, c, maxPoints)
}

func (l *CreditLink) data(tsNs int64, ibBytes int, nsPerByte float64, maxPoints int) {
	s := &l.st
	b := blocksOf(ibBytes)
	if l.DataPackets == 0 {
		l.FirstNs = tsNs
	}
	l.DataPackets++
	l.DataBlocks += int64(b)
	l.LastNs = tsNs
	if s.anchored && s.haveFCCL {
		// Credits when the previous packet ended, then at each FCCL update
		// since: if they were short of this packet, the sender waited from
		// the end of the previous packet until the update that covered it.
		if l.DataPackets > 1 {
			fccl := s.fccl
			if len(s.updates) > 0 {
				fccl = -1
				for i := len(s.updates) - 1; i >= 0; i-- {
					if s.updates[i].usableNs <= s.prevEndNs {
						fccl = s.updates[i].fccl
						break
					}
				}
			}
			if fccl >= 0 && (fccl-s.fctbs)&0xFFF < b {
				for _, u := range s.updates {
					if u.usableNs > s.prevEndNs && (u.fccl-s.fctbs)&0xFFF >= b && u.usableNs <= tsNs {
						l.CreditStallNs += u.usableNs - s.prevEndNs
						l.CreditStalls++
						break
					}
				}
			}
		}
		c := (s.fccl - s.fctbs) & 0xFFF
		if l.MinCredits < 0 || c < l.MinCredits {
			l.MinCredits = c
		}
		s.fctbs = (s.fctbs + b) & 0xFFF
		l.point(tsNs, (s.fccl-s.fctbs)&0xFFF, maxPoints)
	} else if s.anchored {
		s.fctbs = (s.fctbs + b) & 0xFFF
	}
	// Keep the last update as the state carried into the next gap.
	if n := len(s.updates); n > 0 {
		s.updates[0] = s.updates[n-1]
		s.updates = s.updates[:1]
	}
	s.covered = false
	s.prevEndNs = tsNs + int64(math.Round(float64(ibBytes)*nsPerByte))
}

// point records the state, halving the series whenever it doubles the limit.
func (l *CreditLink) point(tsNs int64, credits, maxPoints int) {
	s := &l.st
	if s.skip++; s.skip < s.stride {
		return
	}
	s.skip = 0
	l.Series = append(l.Series, CreditPoint{TsNs: tsNs, FCTBS: s.fctbs, FCCL: s.fccl, Credits: credits})
	if len(l.Series) >= 2*maxPoints {
		for i := range maxPoints {
			l.Series[i] = l.Series[2*i]
		}
		l.Series = l.Series[:maxPoints]
		s.stride *= 2
	}
}

func (l *CreditLink) finish() {
	l.BufferBytes = l.BufferBlocks * decode.BlockBytes
	if l.MinCredits < 0 {
		l.MinCredits = 0
	}
	for i := range l.Series {
		p := &l.Series[i]
		p.InFlight = max(0, l.BufferBlocks-p.Credits)
		l.MaxInFlight = max(l.MaxInFlight, p.InFlight)
	}
	if l.DataPackets > 0 {
		l.MaxInFlight = max(l.MaxInFlight, l.BufferBlocks-l.MinCredits)
	}
}

// tsStep tracks the coarsest power-of-ten step, from 1 ns to 1 ms, that
// every timestamp seen is a multiple of: 1000 for ibdump's microseconds in
// a nanosecond file.
type tsStep struct{ ns int64 }

func (s *tsStep) add(tsNs int64) {
	if s.ns == 0 {
		s.ns = 1e6
	}
	for s.ns > 1 && tsNs%s.ns != 0 {
		s.ns /= 10
	}
}

func (s tsStep) value() int64 { return max(s.ns, 1) }

// inferPackets is how many native IB packets InferNsPerByte looks at.
const inferPackets = 200000

// byteTime finds the link's byte time from the closest-spaced native IB
// packets of one direction: the smallest gap per byte of the earlier
// packet, which back-to-back packets reach.
type byteTime struct {
	n    int
	last map[int8][2]int64
	best float64
}

func newByteTime() *byteTime { return &byteTime{last: map[int8][2]int64{}, best: math.Inf(1)} }

// add takes one packet; it reports false once it has seen enough.
func (b *byteTime) add(p *Packet) bool {
	if p.Key.Transport != decode.TransportIB {
		return true
	}
	if b.n++; b.n > inferPackets {
		return false
	}
	if l, ok := b.last[p.Iface]; ok && p.TsNs > l[0] {
		b.best = min(b.best, float64(p.TsNs-l[0])/float64(l[1]))
	}
	b.last[p.Iface] = [2]int64{p.TsNs, int64(p.IBBytes)}
	return true
}

func (b *byteTime) nsPerByte(names []string) (float64, error) {
	if math.IsInf(b.best, 1) {
		return 0, fmt.Errorf("%s: too few data packets to infer the link's byte time; give the link rate", strings.Join(names, ", "))
	}
	return b.best, nil
}

// InferNsPerByte reads the first 200,000 native IB packets of s for the
// link's byte time (byteTime).
func InferNsPerByte(s *Stream) (float64, error) {
	b := newByteTime()
	var p Packet
	for s.Next(&p) == nil && b.add(&p) {
	}
	return b.nsPerByte(s.Names())
}

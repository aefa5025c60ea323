//go:build linux

package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/decode"
)

// TPACKET_V3 geometry. Packets are packed into blocks; a block reaches user
// space when full or when blockTimeout passes, so the timeout bounds the
// latency at low rates and the block count sets how long a burst the ring
// absorbs while the writer is busy.
const (
	afpBlockBytes   = 1 << 20
	afpFrameBytes   = 1 << 16 // only sizes the kernel's frame count in V3; must cover the snap length
	afpMinBlocks    = 4
	afpBlockTimeout = 10 * time.Millisecond
	// afpAttachMarginNs is how long after the kernel filter's attachment
	// frames are still filtered again in user space: far more than the
	// moment between a frame's filtering and its timestamp.
	afpAttachMarginNs = int64(100 * time.Millisecond)
)

// afpacketSource captures from a netdev through an AF_PACKET TPACKET_V3
// ring (gopacket/afpacket). Timestamps are the kernel's receive time in ns.
type afpacketSource struct {
	tp     *afpacket.TPacket
	dev    string
	snap   int
	filter frameFilter
	// untagged is set when the expression is run on frames without the
	// VLAN tag the kernel stripped (see usesVLAN); scratch holds such a frame.
	untagged bool
	scratch  []byte
	// attachedNs is the host time just after the kernel program was
	// attached, when timestamps are the host's (0 otherwise): a frame
	// stamped later went through the program (see keep).
	attachedNs int64
	notRoCE    uint64 // frames that reached the ring before the kernel filter
	ifindex    int    // dev's index at open, to tell why the socket failed (0 if unknown)
}

func openAFPacket(dev string, c Config) (Source, error) {
	// The filter first: a mistyped expression or a missing libpcap is
	// reported without a socket, and without the privilege to open one.
	prog, filter, err := captureFilter(c, decode.LinkTypeEthernet)
	if err != nil {
		return nil, fmt.Errorf("capture on %s: %w", dev, err)
	}
	untagged := c.FilterExpr != "" && !usesVLAN(c.FilterExpr)
	if c.FilterExpr != "" && !untagged {
		if prog, err = passStrippedTags(prog, c.SnapLenBytes); err != nil {
			return nil, fmt.Errorf("capture on %s: filter %q: %w", dev, c.FilterExpr, err)
		}
	}
	if c.TimestampType != "" && c.TimestampType != TimestampHost {
		types, err := TimestampTypes(dev, c.SysfsRoot)
		if err != nil {
			return nil, err
		}
		if err := checkTimestampType(dev, c.TimestampType, types); err != nil {
			return nil, err
		}
	}
	blocks := max(c.RingBytes/afpBlockBytes, afpMinBlocks)
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(dev),
		afpacket.TPacketVersion3,
		afpacket.OptBlockSize(afpBlockBytes),
		afpacket.OptFrameSize(afpFrameBytes),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(afpBlockTimeout),
		afpacket.OptPollTimeout(time.Duration(c.PollTimeoutMs)*time.Millisecond),
		// Put back the VLAN tag the NIC stripped, so the file shows the
		// frame as it was on the wire (RoCE usually runs on a VLAN for PFC).
		afpacket.OptAddVLANHeader(true),
	)
	if err != nil {
		return nil, afpacketOpenError(dev, err)
	}
	s := &afpacketSource{tp: tp, dev: dev, snap: c.SnapLenBytes, filter: filter, untagged: untagged}
	if ifi, err := net.InterfaceByName(dev); err == nil {
		s.ifindex = ifi.Index
	}
	if c.TimestampType == TimestampAdapterUnsynced {
		if err := useHardwareTimestamps(tp, dev); err != nil {
			tp.Close()
			return nil, fmt.Errorf("capture on %s: %w", dev, err)
		}
	}
	if err := tp.SetBPF(prog); err != nil {
		tp.Close()
		return nil, fmt.Errorf("capture on %s: attach the capture filter: %w", dev, err)
	}
	if c.TimestampType == "" || c.TimestampType == TimestampHost {
		s.attachedNs = time.Now().UnixNano()
	}
	if c.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, fmt.Errorf("capture on %s: promiscuous mode: %w", dev, err)
		}
	}
	return s, nil
}

// sllBeforeFrameBytes is where TPACKET_V3 puts a frame's sockaddr_ll,
// counted back from the frame: the sockaddr_ll follows the 48-byte
// tpacket3_hdr, and an Ethernet frame (14-byte link header) starts at
// TPACKET_ALIGN(48 + 20 + max(14, 16)) - 14 = 82 bytes from the header
// (with TPACKET_V2's 32-byte header, 32 + 34: the same distance).
const sllBeforeFrameBytes = 82 - 48

// direction is which way the frame went through the interface: the
// sll_pkttype the kernel wrote beside it in the ring (PACKET_OUTGOING for
// what the host sent), which gopacket does not hand out. It is read only
// from a frame in the ring: a VLAN-tagged frame may be gopacket's copy
// with the tag the kernel stripped put back (OptAddVLANHeader), and its
// direction stays unknown. The sockaddr_ll's family, hardware type and
// interface index confirm the layout; when they do not match, the
// direction is unknown too.
func (s *afpacketSource) direction(data []byte, ci gopacket.CaptureInfo) decode.Direction {
	if len(data) < 14 || s.ifindex == 0 || len(ci.AncillaryData) > 0 {
		return decode.DirectionUnknown
	}
	switch binary.BigEndian.Uint16(data[12:]) {
	case 0x8100, 0x88a8, 0x9100: // a tag gopacket may have put back in a copy
		return decode.DirectionUnknown
	}
	sll := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), -sllBeforeFrameBytes)), 12)
	ne := binary.NativeEndian
	if ne.Uint16(sll) != unix.AF_PACKET || int(int32(ne.Uint32(sll[4:]))) != s.ifindex || ne.Uint16(sll[8:]) != unix.ARPHRD_ETHER {
		return decode.DirectionUnknown
	}
	switch sll[10] {
	case unix.PACKET_OUTGOING:
		return decode.DirectionOutbound
	case unix.PACKET_HOST, unix.PACKET_BROADCAST, unix.PACKET_MULTICAST, unix.PACKET_OTHERHOST:
		return decode.DirectionInbound
	}
	return decode.DirectionUnknown
}

func afpacketOpenError(dev string, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("capture on %s: %w: an AF_PACKET socket needs CAP_NET_RAW "+privilegeAdvice, dev, err)
	}
	if errors.Is(err, unix.ENOMEM) {
		return fmt.Errorf("capture on %s: %w: the kernel could not allocate the ring; try a smaller -B", dev, err)
	}
	return fmt.Errorf("capture on %s: %w", dev, err)
}

func (s *afpacketSource) Next() (Packet, error) {
	for {
		data, ci, err := s.tp.ZeroCopyReadPacketData()
		if err != nil {
			if errors.Is(err, afpacket.ErrTimeout) {
				return Packet{}, ErrTimeout
			}
			if errors.Is(err, afpacket.ErrPoll) {
				return Packet{}, s.pollError(err)
			}
			return Packet{}, fmt.Errorf("capture on %s: %w", s.dev, err)
		}
		// The socket sees every frame between its creation and the filter's
		// attachment; those few are dropped here by the same rule.
		if !s.keep(data, ci.AncillaryData, ci.Timestamp.UnixNano()) {
			s.notRoCE++
			continue
		}
		dir := s.direction(data, ci)
		if len(data) > s.snap {
			data = data[:s.snap]
		}
		return Packet{Data: data, TsNs: ci.Timestamp.UnixNano(), WireLenBytes: ci.Length, Direction: dir}, nil
	}
}

// keep applies the capture filter in user space. gopacket has put the
// VLAN tag the kernel stripped back into the frame; an expression without
// "vlan" is run on the frame without it, as the kernel ran it.
func (s *afpacketSource) keep(data []byte, ancillary []any, tsNs int64) bool {
	stripped := false
	for _, a := range ancillary {
		if _, ok := a.(afpacket.AncillaryVLAN); ok {
			stripped = true
		}
	}
	// The interpreter costs tens of ns a frame, the RoCE rule a few:
	// an expression is run again only on frames the kernel program may not
	// have decided. The ring stamps a frame right after the filter ran on
	// it (or at receive, before), so one stamped well after the attachment
	// met the program, which decided it unless it passed a tagged frame
	// whole for user space (with "vlan").
	if s.filter.prog != nil && s.attachedNs != 0 && tsNs > s.attachedNs+afpAttachMarginNs && (s.untagged || !stripped) {
		return true
	}
	if s.untagged && stripped && len(data) >= etherHeaderLen+vlanTagLen {
		if et := binary.BigEndian.Uint16(data[etherTypeOffset:]); et == etherTypeVLAN || et == etherTypeQinQ {
			s.scratch = append(append(s.scratch[:0], data[:etherTypeOffset]...), data[etherTypeOffset+vlanTagLen:]...)
			return s.filter.keep(s.scratch)
		}
	}
	return s.filter.keep(data)
}

// pollError says why the socket reports an error: the kernel sets ENETDOWN
// on a packet socket whose interface goes down or is deleted (and ends its
// capture), which poll shows only as POLLERR; the interface's state tells
// the two apart. It must run in the network namespace the capture opened in.
func (s *afpacketSource) pollError(err error) error {
	if s.ifindex == 0 {
		return fmt.Errorf("capture on %s: %w (the interface may have gone down)", s.dev, err)
	}
	ifi, ierr := net.InterfaceByIndex(s.ifindex)
	switch {
	case ierr != nil && strings.Contains(ierr.Error(), "no such network interface"):
		return fmt.Errorf("capture on %s: the interface was deleted (%w)", s.dev, unix.ENODEV)
	case ierr == nil && ifi.Name != s.dev:
		return fmt.Errorf("capture on %s: the interface was deleted or renamed to %s (%w)", s.dev, ifi.Name, unix.ENODEV)
	case ierr == nil && ifi.Flags&net.FlagUp == 0:
		return fmt.Errorf("capture on %s: the interface went down (%w)", s.dev, unix.ENETDOWN)
	case ierr != nil:
		return fmt.Errorf("capture on %s: %w; its state: %w", s.dev, err, ierr)
	}
	return fmt.Errorf("capture on %s: %w", s.dev, err)
}

func (s *afpacketSource) LinkType() int  { return decode.LinkTypeEthernet }
func (s *afpacketSource) Device() string { return s.dev }

func (s *afpacketSource) Stats() (Stats, error) {
	_, v3, err := s.tp.SocketStats()
	if err != nil {
		return Stats{}, fmt.Errorf("capture on %s: socket statistics: %w", s.dev, err)
	}
	return Stats{Received: uint64(v3.Packets()), KernelDrops: uint64(v3.Drops()), NotRoCE: s.notRoCE}, nil
}

func (s *afpacketSource) Close() error {
	s.tp.Close()
	return nil
}

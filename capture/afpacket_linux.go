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
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/capfile"
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
	// afpLinkCheckEvery is how often the interface's state is looked up
	// while it is down: to say when it is back, and to end the capture
	// when it is deleted, which the kernel reports to no socket of an
	// interface that is already down.
	afpLinkCheckEvery = 100 * time.Millisecond
)

// afpacketSource captures from a netdev through an AF_PACKET TPACKET_V3
// ring (gopacket/afpacket). Timestamps are the kernel's receive time in ns.
type afpacketSource struct {
	tp     *afpacket.TPacket
	dev    string // the netdev bound, or AnyDevice
	name   string // what is captured, for messages (Target.Describe)
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
	// kernelFilter is set when the kernel program rejects frames (all but
	// Config.All without an expression), which then go uncounted.
	kernelFilter bool
	ifindex      int // dev's index at open, to tell why the socket failed (0 if unknown)
	// lastBlockRead is set once the socket failed and the ring's last,
	// partly filled block was waited for (Next).
	lastBlockRead bool
	// fd is the socket, to read (and so clear) the error the kernel sets
	// when the interface goes down; -1 if gopacket hides it.
	fd int
	// waitingForLink is set while the interface is down: the socket stays
	// bound to its index and the kernel hooks it in again when it comes
	// back up. linkDowns counts the times it went down; nextLinkCheck is
	// when its state is looked up again.
	waitingForLink bool
	linkDowns      uint64
	nextLinkCheck  time.Time
	notice         func(string) // Config.Notice
	// any is set for AnyDevice: the socket is bound to no interface and
	// each frame becomes a LINUX_SLL2 record, built in rec.
	any bool
	rec []byte
}

func openAFPacket(t Target, c Config) (Source, error) {
	dev, name := t.Netdev, t.Describe()
	if t.Name == AnyDevice {
		dev = AnyDevice
	}
	// The filter first: a mistyped expression or a missing libpcap is
	// reported without a socket, and without the privilege to open one.
	prog, filter, untagged, err := afpacketFilter(c, name)
	if err != nil {
		return nil, err
	}
	any := dev == AnyDevice
	if err := checkAFPacketOptions(t, c, dev, name); err != nil {
		return nil, err
	}
	blocks := max(c.RingBytes/afpBlockBytes, afpMinBlocks)
	bind := dev
	if any {
		bind = "" // gopacket binds an unnamed socket to every interface
	}
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(bind),
		afpacket.TPacketVersion3,
		afpacket.OptBlockSize(afpBlockBytes),
		afpacket.OptFrameSize(afpFrameBytes),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(afpBlockTimeout),
		afpacket.OptPollTimeout(time.Duration(c.PollTimeoutMs)*time.Millisecond),
		// Put back the VLAN tag the NIC stripped, so the file shows the
		// frame as it was on the wire (RoCE usually runs on a VLAN for PFC).
		// With -i any the SLL2 record gets it instead, from the frame's
		// header in the ring, which the frame then has to stay in.
		afpacket.OptAddVLANHeader(!any),
	)
	if err != nil {
		return nil, afpacketOpenError(name, err)
	}
	s := &afpacketSource{tp: tp, dev: dev, name: name, snap: c.SnapLenBytes, filter: filter, untagged: untagged, any: any,
		kernelFilter: !c.All || c.FilterExpr != "" || c.Direction != decode.DirectionUnknown, notice: c.Notice}
	if s.fd, err = tpacketFD(tp); err != nil {
		s.fd = -1 // an interface that goes down then ends the capture
	}
	if ifi, err := net.InterfaceByName(dev); err == nil && !any {
		s.ifindex = ifi.Index
	}
	if c.TimestampType == TimestampAdapterUnsynced {
		if err := useHardwareTimestamps(tp, dev); err != nil {
			tp.Close()
			return nil, fmt.Errorf("capture on %s: %w", name, err)
		}
	}
	if err := tp.SetBPF(prog); err != nil {
		tp.Close()
		return nil, fmt.Errorf("capture on %s: attach the capture filter: %w", name, err)
	}
	if c.TimestampType == "" || c.TimestampType == TimestampHost {
		s.attachedNs = time.Now().UnixNano()
	}
	if c.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, fmt.Errorf("capture on %s: promiscuous mode: %w", name, err)
		}
	}
	return s, nil
}

// afpacketFilter makes the program the kernel runs on each frame of an
// AF_PACKET socket, and the filter user space runs after it. An
// expression that mentions VLANs cannot be decided in the kernel on a
// frame whose tag the NIC stripped: such frames pass whole, and user
// space decides once the tag is back. untagged says the expression does
// not mention VLANs. -Q's direction is a test put before the program.
func afpacketFilter(c Config, name string) (prog []bpf.RawInstruction, filter frameFilter, untagged bool, err error) {
	prog, filter, err = captureFilter(c, decode.LinkTypeEthernet)
	if err != nil {
		return nil, filter, false, fmt.Errorf("capture on %s: %w", name, err)
	}
	untagged = c.FilterExpr != "" && !usesVLAN(c.FilterExpr)
	if c.FilterExpr != "" && !untagged {
		if prog, err = passStrippedTags(prog, c.SnapLenBytes); err != nil {
			return nil, filter, false, fmt.Errorf("capture on %s: filter %q: %w", name, c.FilterExpr, err)
		}
	}
	if c.Direction != decode.DirectionUnknown {
		if prog, err = keepDirection(prog, c.Direction); err != nil {
			return nil, filter, false, fmt.Errorf("capture on %s: %w", name, err)
		}
	}
	return prog, filter, untagged, nil
}

// checkAFPacketOptions refuses, before a socket is opened, what the
// interface cannot do: promiscuous mode or adapter timestamps on -i any
// (both are set per interface), or a timestamp type the interface does
// not offer.
func checkAFPacketOptions(t Target, c Config, dev, name string) error {
	adapter := c.TimestampType != "" && c.TimestampType != TimestampHost
	if dev == AnyDevice && (c.Promiscuous || adapter) {
		return fmt.Errorf("capture on %s: promiscuous mode and adapter timestamps are set per interface: name one with -i", dev)
	}
	if adapter {
		types, err := t.TimestampTypes()
		if err != nil {
			return err
		}
		return checkTimestampType(name, c.TimestampType, types)
	}
	return nil
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
	return pktDirection(sll[10])
}

// A frame's tpacket3_hdr, read for -i any: the sockaddr_ll follows it,
// and the frame starts tp_mac bytes after it, where tp_mac is
// TPACKET_ALIGN(48 + 20 + max(maclen, 16)) - maclen for a link header of
// maclen bytes (see sllBeforeFrameBytes): 82 for an Ethernet header, 78
// with a VLAN tag the sender wrote in line, 74 with two.
const (
	afpHdrStatus       = 20 // tp_status, 32 bits
	afpHdrMac          = 24 // tp_mac, 16 bits
	afpHdrVLANTCI      = 32 // hv1.tp_vlan_tci, 32 bits
	afpHdrVLANTPID     = 36 // hv1.tp_vlan_tpid, 16 bits
	afpHdrSockaddr     = 48 // the sockaddr_ll, after the header
	afpStatusVLANValid = 0x10
	afpStatusTPIDValid = 0x40
	sll2HeaderBytes    = 20
	sll2AddrLen        = 6 // an Ethernet source address
)

var afpEthernetMacOffsets = [...]int{82, 78, 74}

// ringHeader finds the header of a frame of interface ifindex in the ring:
// the offset whose tp_mac says so and whose sockaddr_ll names the
// interface; false when none does (a frame with no Ethernet header).
func ringHeader(data []byte, ifindex int) ([]byte, bool) {
	ne := binary.NativeEndian
	for _, off := range afpEthernetMacOffsets {
		hdr := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), -off)), off)
		sll := hdr[afpHdrSockaddr:]
		if int(ne.Uint16(hdr[afpHdrMac:])) == off && ne.Uint16(sll) == unix.AF_PACKET && int(int32(ne.Uint32(sll[4:]))) == ifindex {
			return hdr, true
		}
	}
	return nil, false
}

// sll2Record turns an Ethernet frame still in the ring into a LINUX_SLL2
// record, as libpcap writes for tcpdump -i any: protocol, interface index,
// ARPHRD type, packet type and source MAC, then the frame after its
// Ethernet header; a tag the kernel stripped comes back as an 802.1Q (or
// 802.1ad) tag after the SLL2 header, the protocol naming it, as one sent
// in line is. Frames of interfaces without an Ethernet header are refused:
// RoCE runs on Ethernet.
func (s *afpacketSource) sll2Record(data []byte, ci gopacket.CaptureInfo, tsNs int64) (capfile.Packet, bool) {
	if len(data) < etherHeaderLen {
		return capfile.Packet{}, false
	}
	hdr, ok := ringHeader(data, ci.InterfaceIndex)
	if !ok {
		return capfile.Packet{}, false
	}
	ne := binary.NativeEndian
	sll := hdr[afpHdrSockaddr:]
	hatype, pkttype := ne.Uint16(sll[8:]), sll[10]
	if hatype != unix.ARPHRD_ETHER && hatype != unix.ARPHRD_LOOPBACK {
		return capfile.Packet{}, false
	}
	proto := binary.BigEndian.Uint16(data[etherTypeOffset:])
	status := ne.Uint32(hdr[afpHdrStatus:])
	tagged := status&afpStatusVLANValid != 0
	if tagged {
		proto = etherTypeVLAN
		if tpid := ne.Uint16(hdr[afpHdrVLANTPID:]); status&afpStatusTPIDValid != 0 && tpid != 0 {
			proto = tpid
		}
	}
	be := binary.BigEndian
	r := be.AppendUint16(s.rec[:0], proto)
	r = be.AppendUint16(r, 0) // reserved
	r = be.AppendUint32(r, uint32(ci.InterfaceIndex))
	r = be.AppendUint16(r, hatype)
	r = append(r, pkttype, sll2AddrLen)
	r = append(r, data[6:12]...) // source MAC
	r = append(r, 0, 0)          // the address field's 8 bytes
	wire := ci.Length - etherHeaderLen + sll2HeaderBytes
	if tagged {
		r = be.AppendUint16(r, uint16(ne.Uint32(hdr[afpHdrVLANTCI:])))
		r = append(r, data[etherTypeOffset:etherHeaderLen]...)
		wire += vlanTagLen
	}
	r = append(r, data[etherHeaderLen:]...)
	s.rec = r
	if len(r) > s.snap {
		r = r[:s.snap]
	}
	return capfile.Packet{Data: r, TsNs: tsNs, WireLenBytes: wire, Direction: pktDirection(pkttype)}, true
}

// pktDirection is the direction of a frame of sll_pkttype t.
func pktDirection(t uint8) decode.Direction {
	switch t {
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

func (s *afpacketSource) Next() (capfile.Packet, error) {
	for {
		if s.waitingForLink {
			if err := s.watchLink(false); err != nil {
				return capfile.Packet{}, err
			}
		}
		data, ci, err := s.tp.ZeroCopyReadPacketData()
		if err != nil {
			if errors.Is(err, afpacket.ErrTimeout) {
				if s.waitingForLink {
					if err := s.watchLink(true); err != nil {
						return capfile.Packet{}, err
					}
				}
				return capfile.Packet{}, ErrTimeout
			}
			if errors.Is(err, afpacket.ErrPoll) {
				if down, err := s.linkWentDown(); err != nil {
					return capfile.Packet{}, err
				} else if down {
					continue
				}
				if !s.lastBlockRead {
					// The kernel hands a TPACKET_V3 block to user space when it
					// is full or its timeout passes. The frames of the block
					// open when the interface was deleted come only with that
					// timeout: wait for it once and read them, or they are lost.
					s.lastBlockRead = true
					time.Sleep(2 * afpBlockTimeout)
					continue
				}
				return capfile.Packet{}, s.pollError(err)
			}
			return capfile.Packet{}, fmt.Errorf("capture on %s: %w", s.name, err)
		}
		// The socket sees every frame between its creation and the filter's
		// attachment; those few are dropped here by the same rule.
		tsNs := ci.Timestamp.UnixNano()
		if !s.keep(data, ci.AncillaryData, tsNs) {
			s.notRoCE++
			continue
		}
		if s.any {
			p, ok := s.sll2Record(data, ci, tsNs)
			if !ok {
				s.notRoCE++ // not an Ethernet interface's frame
				continue
			}
			return p, nil
		}
		dir := s.direction(data, ci)
		if len(data) > s.snap {
			data = data[:s.snap]
		}
		return capfile.Packet{Data: data, TsNs: tsNs, WireLenBytes: ci.Length, Direction: dir}, nil
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

// linkWentDown takes the error the kernel sets on the socket when its
// interface goes down or is deleted (ENETDOWN, which poll shows only as
// POLLERR). An interface that is still there keeps the socket bound to
// its index, and the kernel hooks the socket in again when it comes back
// up: the capture says so and waits for it, reading SO_ERROR to clear the
// error, which poll would otherwise report at once, again and again. The
// frames of the block open when it went down come with the block's
// timeout, as any. It returns false when the interface is gone or its
// state unknown: the capture then ends (pollError).
func (s *afpacketSource) linkWentDown() (bool, error) {
	if s.fd < 0 || s.ifindex == 0 {
		return false, nil
	}
	if st, _ := s.link(); st != linkDown && st != linkUp {
		return false, nil
	}
	errno, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return false, fmt.Errorf("capture on %s: read the socket's error: %w", s.name, err)
	}
	switch {
	case errno == 0:
		return false, nil // not the kernel's word that the interface went down
	case unix.Errno(errno) != unix.ENETDOWN:
		return false, fmt.Errorf("capture on %s: %w", s.name, unix.Errno(errno))
	}
	// Down and already up again when looked at counts as down too: the
	// kernel set the error, so frames were missed meanwhile.
	s.waitingForLink, s.nextLinkCheck = true, time.Now().Add(afpLinkCheckEvery)
	s.linkDowns++
	s.notify("the interface went down; the capture waits for it to come back up")
	return true, nil
}

// watchLink looks at the state of the interface that went down, at most
// every afpLinkCheckEvery: back up, the capture says so and goes on;
// deleted (or renamed), it ends, but only when idle (the ring empty), so
// that every frame taken before is read first.
func (s *afpacketSource) watchLink(idle bool) error {
	now := time.Now()
	if now.Before(s.nextLinkCheck) {
		return nil
	}
	s.nextLinkCheck = now.Add(afpLinkCheckEvery)
	switch st, err := s.link(); {
	case st == linkUp:
		s.waitingForLink = false
		s.notify("the interface is back up; capturing again")
	case st == linkGone && idle:
		return err
	}
	return nil
}

func (s *afpacketSource) notify(msg string) {
	if s.notice != nil {
		s.notice(fmt.Sprintf("capture on %s: %s", s.name, msg))
	}
}

// linkState is what became of the captured interface.
type linkState int

const (
	linkUp      linkState = iota
	linkDown              // still there, not up
	linkGone              // deleted, or renamed: the error says which
	linkUnknown           // its state could not be read: the error says why
)

// link looks up the captured interface by the index it had at open. It
// must run in the network namespace the capture opened in.
func (s *afpacketSource) link() (linkState, error) {
	ifi, err := net.InterfaceByIndex(s.ifindex)
	switch {
	case err != nil && strings.Contains(err.Error(), "no such network interface"):
		return linkGone, fmt.Errorf("capture on %s: the interface was deleted (%w)", s.name, unix.ENODEV)
	case err != nil:
		return linkUnknown, err
	case ifi.Name != s.dev:
		return linkGone, fmt.Errorf("capture on %s: the interface was deleted or renamed to %s (%w)", s.name, ifi.Name, unix.ENODEV)
	case ifi.Flags&net.FlagUp == 0:
		return linkDown, nil
	}
	return linkUp, nil
}

// pollError says why the socket reports an error that the capture cannot
// go on after: the interface was deleted, or its state is unknown.
func (s *afpacketSource) pollError(err error) error {
	if s.ifindex == 0 {
		return fmt.Errorf("capture on %s: %w (the interface may have gone down)", s.name, err)
	}
	switch st, lerr := s.link(); st {
	case linkGone:
		return lerr
	case linkUnknown:
		return fmt.Errorf("capture on %s: %w; its state: %w", s.name, err, lerr)
	case linkDown:
		return fmt.Errorf("capture on %s: the interface went down (%w)", s.name, unix.ENETDOWN)
	}
	return fmt.Errorf("capture on %s: %w", s.name, err)
}

// LinkType is Ethernet, or LINUX_SLL2 for AnyDevice.
func (s *afpacketSource) LinkType() int {
	if s.any {
		return decode.LinkTypeLinuxSLL2
	}
	return decode.LinkTypeEthernet
}

func (s *afpacketSource) Device() string { return s.name }

func (s *afpacketSource) Stats() (Stats, error) {
	// The frames returned first, then the kernel's count: it already
	// counted each of them, so the difference is never below 0.
	returned, _ := s.tp.Stats()
	_, v3, err := s.tp.SocketStats()
	if err != nil {
		return Stats{}, fmt.Errorf("capture on %s: socket statistics: %w", s.name, err)
	}
	// tp_packets counts the dropped frames too.
	inRing := int64(v3.Packets()) - int64(v3.Drops())
	return Stats{Received: uint64(v3.Packets()), KernelDrops: uint64(v3.Drops()), NotRoCE: s.notRoCE, KernelFilter: s.kernelFilter,
		RingFilled: uint64(max(inRing-returned.Packets, 0)), LinkDowns: s.linkDowns}, nil
}

func (s *afpacketSource) Close() error {
	s.tp.Close()
	return nil
}

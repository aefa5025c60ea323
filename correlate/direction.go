package correlate

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/ibscope/ibscope/decode"
)

// dir is a packet's direction as seen from the NIC whose counters the
// telemetry holds.
type dir uint8

const (
	dirTx      dir = iota // the NIC sent it
	dirRx                 // the NIC received it
	dirUnknown            // the capture does not say
)

// Local names the NIC the telemetry describes, so that packets can be split
// into transmitted and received: IP addresses or GIDs (RoCE, GRH) and LIDs
// (native IB).
type Local struct {
	Addrs []netip.Addr
	LIDs  []uint16
}

// ParseLocal reads a list of the local NIC's addresses: comma-separated IP addresses, GIDs (as
// IPv6 addresses) or LIDs ("lid:5" or a plain number).
func ParseLocal(s string) (Local, error) {
	var l Local
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if a, err := netip.ParseAddr(item); err == nil {
			l.Addrs = append(l.Addrs, a.Unmap())
			continue
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(item, "lid:"), 0, 16)
		if err != nil {
			return Local{}, fmt.Errorf("address %q: want an IP address, a GID or a LID", item)
		}
		l.LIDs = append(l.LIDs, uint16(n))
	}
	return l, nil
}

func (l *Local) empty() bool { return len(l.Addrs) == 0 && len(l.LIDs) == 0 }

func (l *Local) hasAddr(a netip.Addr) bool {
	a = a.Unmap()
	for _, x := range l.Addrs {
		if x == a {
			return true
		}
	}
	return false
}

func (l *Local) hasLID(lid uint16) bool {
	for _, x := range l.LIDs {
		if x == lid {
			return true
		}
	}
	return false
}

// Linux cooked capture packet types (SLL and SLL2): what the kernel says of
// each packet's direction.
const (
	sllOutgoing = 4 // PACKET_OUTGOING: sent by this host
)

// ERF interface numbers by ibscope's convention (ibsim's taps, ibcap's ERF
// files): the interface bits of a record say which way it went.
const (
	erfIfaceTx = 0 // sent by the tapped port
	erfIfaceRx = 1 // received by the tapped port
)

// directionOf says whether the NIC sent or received f: from the --local
// addresses when given, else from what the capture records (a pcapng packet
// block's epb_flags, a Linux cooked capture's packet type, an ERF record's
// interface 0 or 1).
func directionOf(f *decode.Frame, l *Local, linkType int) dir {
	if !l.empty() {
		var src, dst bool
		switch {
		case f.Has&decode.HasLRH != 0:
			src, dst = l.hasLID(f.LRH.SLID), l.hasLID(f.LRH.DLID)
		case f.Has&(decode.HasIPv4|decode.HasIPv6) != 0:
			src, dst = l.hasAddr(f.Src), l.hasAddr(f.Dst)
		case f.Has&decode.HasGRH != 0:
			src, dst = l.hasAddr(f.GRH.SrcGID()), l.hasAddr(f.GRH.DstGID())
		}
		switch {
		case src && !dst:
			return dirTx
		case dst && !src:
			return dirRx
		}
		return dirUnknown
	}
	switch {
	case f.Dir == decode.DirectionOutbound:
		return dirTx
	case f.Dir == decode.DirectionInbound:
		return dirRx
	case (linkType == decode.LinkTypeLinuxSLL || linkType == decode.LinkTypeLinuxSLL2) && f.Iface >= 0:
		if f.Iface == sllOutgoing {
			return dirTx
		}
		return dirRx
	case linkType == decode.LinkTypeERF && f.Iface == erfIfaceTx:
		return dirTx
	case linkType == decode.LinkTypeERF && f.Iface == erfIfaceRx:
		return dirRx
	}
	return dirUnknown
}

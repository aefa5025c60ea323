package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
)

// Decoder is the zero-allocation fast path: it decodes one captured frame of
// its link type into a reused Frame. LinkType must be set (0 is
// LINKTYPE_NULL, which Decode refuses); CheckCRC is off unless set. A
// Decoder keeps a scratch buffer for the ICRC, so one Decoder serves one
// goroutine at a time; copies are independent.
type Decoder struct {
	LinkType int  // pcap link type of the frames (LinkTypeEthernet, LinkTypeERF, ...)
	CheckCRC bool // verify ICRC, VCRC and LPCRC (costs a CRC pass over each packet)
	// IFA1ProbeMarker, when not 0, is the operator's IFA 1.0 probe marker
	// (marker 1 in the high 32 bits): a RoCEv2 payload that starts with it
	// is an IFA 1.0 probe. IFA 2.0 needs no setting (IP protocol 253).
	IFA1ProbeMarker uint64
	// HeadFields has DecodeHead's head of the common RoCEv2 frame also hold
	// those header fields (headFields), so that a filter on them needs no
	// whole decode (decode --summary -Y 'qp == 0x11').
	HeadFields HeadFields
	crc        icrcBuf
}

// FrameError says why a frame could not be decoded and where in the frame.
type FrameError struct {
	Offset int    // byte offset within the frame where the problem lies, -1 for the record header
	Msg    string // what is wrong
}

func (e *FrameError) Error() string {
	if e.Offset < 0 { // the record header, not the frame's bytes
		return e.Msg
	}
	return fmt.Sprintf("byte %d of the frame: %s", e.Offset, e.Msg)
}

func frameErr(off int, format string, a ...any) error {
	return &FrameError{Offset: off, Msg: fmt.Sprintf(format, a...)}
}

var nilDF = gopacket.NilDecodeFeedback

// Decode decodes data into f. A frame that is not InfiniBand or RoCE returns
// nil with f.Transport == TransportNone. A malformed frame returns a
// *FrameError, with f holding the headers decoded before the problem.
func (d *Decoder) Decode(data []byte, f *Frame) error {
	f.Reset()
	switch d.LinkType {
	case LinkTypeEthernet:
		if ok, err := d.ethernetRoCEv2(data, f, false); ok {
			return err
		}
		return d.ethernet(data, 0, f)
	case LinkTypeInfiniBand:
		if len(data) == LinkFCPLen {
			return d.link(data, 0, f)
		}
		return d.native(data, 0, f)
	case LinkTypeERF:
		return d.erf(data, f)
	case LinkTypeLinuxSLL:
		if len(data) < 16 {
			return frameErr(0, "Linux cooked header: %d bytes, need 16", len(data))
		}
		f.Iface = int8(binary.BigEndian.Uint16(data))
		return d.taggedEtherType(binary.BigEndian.Uint16(data[14:]), data, 16, f)
	case LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return frameErr(0, "Linux cooked v2 header: %d bytes, need 20", len(data))
		}
		f.Iface = int8(data[10])
		return d.taggedEtherType(binary.BigEndian.Uint16(data), data, 20, f)
	}
	return frameErr(0, "link type %d is not one ibscope reads", d.LinkType)
}

func (d *Decoder) erf(data []byte, f *Frame) error {
	var e ERF
	if err := e.DecodeFromBytes(data, nilDF); err != nil {
		return frameErr(0, "%v", err)
	}
	f.TsNs = e.TimestampNs()
	f.Iface = int8(e.Interface())
	off := len(e.Contents)
	f.CapLen, f.WireLen = len(e.Payload), int(e.WLen)
	if e.Flags&ERFFlagTruncated != 0 && f.WireLen <= f.CapLen {
		f.WireLen = f.CapLen + 1 // the card cut the packet: treat it as snaplen-cut
	}
	switch {
	case e.Type == ERFTypeInfiniBand:
		return d.native(data[:off+len(e.Payload)], off, f)
	case e.Type == ERFTypeIBLink:
		return d.link(data[:off+len(e.Payload)], off, f)
	case IsERFEthernet(e.Type):
		return d.ethernet(data, off, f)
	}
	return nil
}

func (d *Decoder) ethernet(data []byte, off int, f *Frame) error {
	if len(data) < off+14 {
		return frameErr(off, "Ethernet header: %d bytes, need 14", len(data)-off)
	}
	et := binary.BigEndian.Uint16(data[off+12:])
	f.DstMAC, f.SrcMAC = [6]byte(data[off:off+6]), [6]byte(data[off+6:off+12])
	f.Ethernet = true
	f.Has |= HasEthernet
	return d.taggedEtherType(et, data, off+14, f)
}

// taggedEtherType decodes what follows ethertype et at off, after the VLAN
// tags et announces (an Ethernet header's, or a Linux cooked header's
// protocol: tcpdump -i any puts a tag the kernel stripped back after it).
func (d *Decoder) taggedEtherType(et uint16, data []byte, off int, f *Frame) error {
	for et == 0x8100 || et == 0x88A8 { // VLAN tags
		if len(data) < off+4 {
			return frameErr(off, "VLAN tag: %d bytes, need 4", len(data)-off)
		}
		if !f.VLANTagged {
			f.VLANPCP, f.VLANTagged = data[off]>>5, true
		}
		if f.NumVLANs < MaxVLANTags {
			tci := binary.BigEndian.Uint16(data[off:])
			f.VLANs[f.NumVLANs] = VLANTag{TPID: et, PCP: uint8(tci >> 13), DEI: tci&0x1000 != 0, ID: tci & 0xFFF}
			f.NumVLANs++
		}
		et = binary.BigEndian.Uint16(data[off+2:])
		off += 4
	}
	return d.etherType(et, data, off, f)
}

func (d *Decoder) etherType(et uint16, data []byte, off int, f *Frame) error {
	switch et {
	case 0x0800:
		return d.ipv4(data, off, f)
	case 0x86DD:
		return d.ipv6(data, off, f)
	case EtherTypeRoCEv1:
		return d.rocev1(data, off, f)
	case EtherTypeMACControl:
		return d.macControl(data, off, f)
	}
	return nil
}

// macControl decodes a PFC or PAUSE frame at off (after the ethertype);
// other MAC control opcodes are not decoded. A frame with a field in error
// keeps every field decoded, with the error naming that field's byte.
func (d *Decoder) macControl(data []byte, off int, f *Frame) error {
	if len(data) < off+2 {
		return shortMACControl(data, off, f, 2)
	}
	var err error
	switch binary.BigEndian.Uint16(data[off:]) {
	case MACControlOpPFC:
		if len(data) < off+PFCLen {
			return shortMACControl(data, off, f, PFCLen)
		}
		err = f.PFC.DecodeFromBytes(data[off:], nilDF)
		f.Has |= HasPFC
	case MACControlOpPause:
		if len(data) < off+PauseLen {
			return shortMACControl(data, off, f, PauseLen)
		}
		err = f.Pause.DecodeFromBytes(data[off:], nilDF)
		f.Has |= HasPause
	default:
		return nil
	}
	return headerErr(off, err)
}

// shortMACControl reports a MAC control frame that ends before its fields,
// unless the snap length cut it (then nothing is decoded, quietly).
func shortMACControl(data []byte, off int, f *Frame, need int) error {
	if f.Truncated() {
		return nil
	}
	return frameErr(off, "MAC control frame: %d bytes after the ethertype, need %d", len(data)-off, need)
}

// headerErr turns a header's error into a FrameError at the header's offset
// off, or at the byte the header names (headerError).
func headerErr(off int, err error) error {
	if err == nil {
		return nil
	}
	if he, ok := err.(*headerError); ok {
		return frameErr(off+he.at, "%s", he.msg)
	}
	return frameErr(off, "%v", err)
}

func (d *Decoder) ipv4(data []byte, off int, f *Frame) error {
	if len(data) < off+20 || data[off]>>4 != 4 {
		return nil
	}
	ip := data[off:]
	ihl := int(ip[0]&0x0F) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	frag := binary.BigEndian.Uint16(ip[6:]) & 0x3FFF
	// An IFA 2.0 header may sit between IP and UDP (ifa.go).
	ifa := ip[9] == IPProtocolIFA && ihl >= 20 && len(ip) >= ihl+IFAHeaderLen+8 && ip[ihl+1] == 17
	l4 := ihl
	if ifa {
		l4 += IFAHeaderLen
	} else if ip[9] != 17 {
		return nil
	}
	if ihl < 20 || frag != 0 || len(ip) < l4+8 {
		return nil
	}
	udp := ip[l4:]
	if binary.BigEndian.Uint16(udp[2:]) != UDPPortRoCEv2 {
		return nil
	}
	f.Src = netip.AddrFrom4([4]byte(ip[12:16]))
	f.Dst = netip.AddrFrom4([4]byte(ip[16:20]))
	f.ECN, f.DSCP = ip[1]&3, ip[1]>>2
	f.TTL = ip[8]
	f.Has |= HasIPv4
	if total < l4+8 {
		return frameErr(off+2, "IPv4 total length %d is shorter than its headers", total)
	}
	if ifa {
		return d.ifa(data, off, ihl, total-ihl, f)
	}
	return d.udp(data, off, ihl, total-ihl, f)
}

func (d *Decoder) ipv6(data []byte, off int, f *Frame) error {
	if len(data) < off+48 || data[off]>>4 != 6 {
		return nil
	}
	ip := data[off:]
	ifa := ip[6] == IPProtocolIFA && len(ip) >= 40+IFAHeaderLen+8 && ip[41] == 17
	l4 := 40
	if ifa {
		l4 += IFAHeaderLen
	} else if ip[6] != 17 {
		return nil
	}
	if binary.BigEndian.Uint16(ip[l4+2:]) != UDPPortRoCEv2 {
		return nil
	}
	f.Src = netip.AddrFrom16([16]byte(ip[8:24]))
	f.Dst = netip.AddrFrom16([16]byte(ip[24:40]))
	vtf := binary.BigEndian.Uint32(ip)
	tc := uint8(vtf >> 20)
	f.ECN, f.DSCP = tc&3, tc>>2
	f.TTL, f.FlowLabel = ip[7], vtf&0xFFFFF
	f.Has |= HasIPv6
	if ifa {
		return d.ifa(data, off, 40, int(binary.BigEndian.Uint16(ip[4:])), f)
	}
	return d.udp(data, off, 40, int(binary.BigEndian.Uint16(ip[4:])), f)
}

// udp decodes a RoCEv2 UDP datagram of udpLen bytes that follows an IP header
// of ipLen bytes at off.
func (d *Decoder) udp(data []byte, off, ipLen, udpLen int, f *Frame) error {
	u := off + ipLen
	f.Transport = TransportRoCEv2
	f.Has |= HasUDP
	f.UDPSrc = binary.BigEndian.Uint16(data[u:])
	l := int(binary.BigEndian.Uint16(data[u+4:]))
	if l != udpLen && udpLen >= 8 {
		return frameErr(u+4, "UDP length %d disagrees with the IP payload length %d", l, udpLen)
	}
	if d.IFA1ProbeMarker != 0 && len(data) >= u+16 && binary.BigEndian.Uint64(data[u+8:]) == d.IFA1ProbeMarker {
		f.IBLen = l - 8
		return d.ifa1(data, u+8, f)
	}
	if l < 8+BTHLen+ICRCLen {
		return frameErr(u+4, "UDP length %d leaves no room for BTH and ICRC", l)
	}
	end := u + l
	if end > len(data) {
		f.cutUnsaid(end - len(data))
		f.IBLen = l - 8
		return d.transport(data[u+8:], u+8, f, true)
	}
	f.IBLen = l - 8
	if err := d.transport(data[u+8:end], u+8, f, false); err != nil {
		return err
	}
	d.checkRoCEv2ICRC(data, off, u, end, f)
	return nil
}

// checkRoCEv2ICRC checks the ICRC of the RoCEv2 packet decoded into f, if
// asked to and it has one: the IP header at data[off:u], the UDP datagram
// at data[u:end].
func (d *Decoder) checkRoCEv2ICRC(data []byte, off, u, end int, f *Frame) {
	if !d.CheckCRC || f.Has&HasICRC == 0 {
		return
	}
	if useFoldIPv4 && u-off == 20 && f.Has&HasIPv4 != 0 {
		f.ICRCOK = roceV2IPv4(data[off:end-ICRCLen]) == f.BTH.ICRC
	} else {
		f.ICRCOK = d.crc.roceV2(data[off:u], data[u:end-ICRCLen]) == f.BTH.ICRC
	}
	f.Has |= CRCsCheck
}

// ifa decodes an IFA 2.0 probe on RoCEv2 (ifa.go): the IFA header after the
// IP header of ipLen bytes at off, UDP, the metadata header and stack, and
// the IB transport packet. ipPayload is the IP payload's length. The ICRC
// covers the packet as it was before IFA was inserted, so it is checked
// over that packet (roceV2IFA).
func (d *Decoder) ifa(data []byte, off, ipLen, ipPayload int, f *Frame) error {
	h := off + ipLen
	f.Transport = TransportRoCEv2
	f.IFA.parse(data[h:])
	f.IFA.Contents, f.IFA.Payload = data[h:h+IFAHeaderLen], nil
	f.Has |= HasIFA | HasUDP
	u := h + IFAHeaderLen
	f.UDPSrc = binary.BigEndian.Uint16(data[u:])
	udpLen := int(binary.BigEndian.Uint16(data[u+4:]))
	end := h + ipPayload
	cut := end > len(data)
	if cut {
		f.cutUnsaid(end - len(data))
	}
	switch {
	case f.IFA.Version != IFAVersion2:
		return frameErr(h, "IFA version %d is not 2", f.IFA.Version)
	case f.IFA.Flags&(IFAFlagMF|IFAFlagC) != 0:
		return frameErr(h+2, "IFA flags 0x%02x: the fragment and checksum headers (MF, C) are not decoded", f.IFA.Flags)
	}
	end = min(end, len(data))
	m := &f.IFAMetadata
	md, tr, trEnd, err := m.locate(data, u, end, f.IFA.Flags&IFAFlagTS != 0, cut)
	if md < 0 || err != nil {
		return err // or cut before the metadata: nothing more to decode
	}
	f.Has |= HasIFAMetadata
	ibLen := trEnd - tr
	f.IBLen = ibLen
	if cut {
		f.IBLen = udpLen - 8
		return d.transport(data[tr:trEnd], tr, f, true)
	}
	// The initiator leaves the UDP length as it was, without the metadata;
	// one that counts the metadata is taken too.
	if udpLen != 8+ibLen && udpLen != end-u {
		return frameErr(u+4, "UDP length %d is neither the datagram without the IFA metadata (%d) nor with it (%d)", udpLen, 8+ibLen, end-u)
	}
	if ibLen < BTHLen+ICRCLen {
		return frameErr(tr, "IFA probe leaves %d bytes for the BTH and ICRC", ibLen)
	}
	if err := d.transport(data[tr:trEnd], tr, f, false); err != nil {
		return err
	}
	if d.CheckCRC && f.Has&HasICRC != 0 {
		inserted := IFAHeaderLen + IFAMetadataHeaderLen + m.StackBytes()
		f.ICRCOK = d.crc.roceV2IFA(data[off:h], data[u:u+8], data[tr:trEnd-ICRCLen], inserted) == f.BTH.ICRC
		f.Has |= CRCsCheck
	}
	return ifaCheck(&f.IFA, m, md)
}

// locate decodes an IFA 2.0 probe's metadata header and stack from data, in
// which the probe's UDP header is at u and its packet ends at end, and
// returns where the header (md) and the IB transport packet (tr to trEnd)
// are: after the UDP header, the metadata and its stack with payload
// stamping, before the stack and the metadata, which end the packet, with
// tail stamping (tail: the IFA header's TS flag). md is -1 when a capture
// cut short does not hold the metadata.
func (m *IFAMetadata) locate(data []byte, u, end int, tail, cut bool) (md, tr, trEnd int, err error) {
	if !tail {
		md = u + 8
		if end-md < IFAMetadataHeaderLen {
			if cut {
				return -1, 0, 0, nil
			}
			return md, 0, 0, frameErr(md, "IFA metadata header: %d bytes, need %d", end-md, IFAMetadataHeaderLen)
		}
		m.parse(data[md:])
		tr, trEnd = md+IFAMetadataHeaderLen+m.StackBytes(), end
		if tr > end {
			if cut {
				return -1, 0, 0, nil
			}
			return md, tr, trEnd, frameErr(md+3, "IFA metadata stack of %d words (%d bytes) runs past the %d bytes of the packet", m.CurrentLength, m.StackBytes(), end-md-IFAMetadataHeaderLen)
		}
		m.Stack = data[md+IFAMetadataHeaderLen : tr]
	} else {
		if cut {
			return -1, 0, 0, nil // the capture does not hold the end, where the metadata is
		}
		md = end - IFAMetadataHeaderLen
		if md < u+8 {
			return md, 0, 0, frameErr(u+8, "IFA metadata header: %d bytes after the UDP header, need %d", end-u-8, IFAMetadataHeaderLen)
		}
		m.parse(data[md:])
		tr, trEnd = u+8, md-m.StackBytes()
		if trEnd < tr {
			return md, tr, trEnd, frameErr(md+3, "IFA metadata stack of %d words (%d bytes) runs back past the UDP header", m.CurrentLength, m.StackBytes())
		}
		m.Stack = data[trEnd:md]
	}
	m.Contents, m.Payload = data[md:md+IFAMetadataHeaderLen], nil
	return md, tr, trEnd, nil
}

// ifa1 decodes an IFA 1.0 header at the start of a RoCEv2 payload (at);
// what follows it is not decoded.
func (d *Decoder) ifa1(data []byte, at int, f *Frame) error {
	if len(data)-at < IFA1HeaderLen {
		if f.Truncated() {
			return nil
		}
		return frameErr(at, "IFA 1.0 header: %d bytes, need %d", len(data)-at, IFA1HeaderLen)
	}
	err := f.IFA1.DecodeFromBytes(data[at:], nilDF)
	f.Has |= HasIFA1
	return headerErr(at, err)
}

func (d *Decoder) rocev1(data []byte, off int, f *Frame) error {
	f.Transport = TransportRoCEv1
	if f.Truncated() && len(data)-off < GRHLen {
		return nil // the capture ends inside the GRH
	}
	if err := f.GRH.DecodeFromBytes(data[off:], nilDF); err != nil {
		return frameErr(off, "%v", err)
	}
	f.Has |= HasGRH
	end := off + GRHLen + int(f.GRH.PayLen)
	if f.GRH.NxtHdr != GRHNextHeaderIBA {
		return frameErr(off+6, "GRH next header 0x%02x is not IBA (0x1b)", f.GRH.NxtHdr)
	}
	f.IBLen = GRHLen + int(f.GRH.PayLen)
	if end > len(data) {
		f.cutUnsaid(end - len(data))
		return d.transport(data[off+GRHLen:], off+GRHLen, f, true)
	}
	if err := d.transport(data[off+GRHLen:end], off+GRHLen, f, false); err != nil {
		return err
	}
	if d.CheckCRC && f.Has&HasICRC != 0 {
		f.ICRCOK = d.crc.roceV1(data[off:end-ICRCLen]) == f.BTH.ICRC
		f.Has |= CRCsCheck
	}
	return nil
}

func (d *Decoder) native(data []byte, off int, f *Frame) error {
	f.Transport = TransportIB
	if err := f.LRH.DecodeFromBytes(data[off:], nilDF); err != nil {
		return frameErr(off, "%v", err)
	}
	f.Has |= HasLRH
	pktLen := int(f.LRH.PktLen) * 4
	f.IBLen = pktLen + 2
	end := off + pktLen
	if end > len(data) {
		f.cutUnsaid(off + f.IBLen - len(data)) // the packet and its VCRC
	}
	cut := f.Truncated()
	switch {
	case !cut && len(data)-end > 2:
		return frameErr(off+4, "LRH PktLen %d words (%d bytes) leaves %d bytes unaccounted for after the VCRC", f.LRH.PktLen, pktLen, len(data)-end-2)
	}
	end = min(end, len(data))
	if f.LRH.HasVCRC {
		f.Has |= HasVCRC
	}
	if d.CheckCRC && f.LRH.HasVCRC && !cut {
		f.VCRCOK = VCRC(data[off:end]) == f.LRH.VCRC
		f.Has |= CRCsCheck
	}
	next := off + LRHLen
	switch f.LRH.LNH {
	case LNHGlobal:
		if cut && end-next < GRHLen {
			return nil // the capture ends inside the GRH
		}
		if err := f.GRH.DecodeFromBytes(data[next:end], nilDF); err != nil {
			return frameErr(next, "%v", err)
		}
		f.Has |= HasGRH
		if f.GRH.NxtHdr != GRHNextHeaderIBA {
			return nil
		}
		next += GRHLen
	case LNHLocal:
	default:
		return nil // raw or IPv6 over IB: no IBA transport to decode
	}
	if err := d.transport(data[next:end], next, f, cut); err != nil {
		return err
	}
	if d.CheckCRC && f.Has&HasICRC != 0 && !cut {
		f.ICRCOK = d.crc.native(data[off:end-ICRCLen]) == f.BTH.ICRC
		f.Has |= CRCsCheck
	}
	return nil
}

func (d *Decoder) link(data []byte, off int, f *Frame) error {
	f.Transport = TransportLink
	f.IBLen = LinkFCPLen
	if err := f.Link.DecodeFromBytes(data[off:], nilDF); err != nil {
		return frameErr(off, "%v", err)
	}
	f.Has |= HasLink | HasVCRC
	if d.CheckCRC {
		f.VCRCOK = f.Link.LPCRCOK()
		f.Has |= CRCsCheck
	}
	return nil
}

// cutUnsaid takes a frame whose headers say it runs missing bytes past
// the bytes captured for cut, whatever its record claims: a capture tool
// that cut frames at its snap length and recorded that length as the
// original too (issue 21: frames cut at 243 bytes, recorded as 243 bytes
// long, whose UDP length said 4,136). The headers that are there are
// decoded, the CRCs are not checked, and the frame's length on the wire
// becomes what its headers give, so that byte counts are those the wire
// carried.
func (f *Frame) cutUnsaid(missing int) {
	if !f.Truncated() {
		f.WireLen = f.CapLen + missing
	}
}

// transport decodes the BTH, the extended headers its opcode implies and the
// payload. b runs from the BTH through the ICRC, unless cut says the capture
// ended early (snaplen): then the headers present are decoded and the payload
// and CRC left out.
func (d *Decoder) transport(b []byte, off int, f *Frame, cut bool) error {
	if cut {
		// The capture ends inside the packet: decode the headers it holds
		// and stop quietly at the cut; the pad bytes and ICRC are not there.
		if len(b) < BTHLen {
			return nil
		}
		f.BTH.parse(b)
		f.BTH.Contents, f.BTH.Payload, f.BTH.HasICRC, f.BTH.ICRC = b[:BTHLen], b[BTHLen:], false, 0
	} else if err := f.BTH.DecodeFromBytes(b, nilDF); err != nil {
		// A BTH read whole but with no room for its ICRC or pad is shown;
		// one shorter than a BTH was never read, and its fields are still
		// the frame before's.
		if len(b) >= BTHLen {
			f.Has |= HasBTH
		}
		return frameErr(off, "%v", err)
	} else {
		f.Has |= HasICRC
	}
	f.Has |= HasBTH
	op := f.BTH.OpCode
	if !op.Valid() {
		return frameErr(off, "unknown opcode 0x%02x", uint8(op))
	}
	rest := f.BTH.Payload
	pos := off + BTHLen
	for _, e := range opTable[op].exts {
		if e == extNone {
			break
		}
		if dcConnectAbsent(e, f.BTH.SE) {
			continue
		}
		// The Frame's headers are decoded by direct calls: an interface or
		// a table of functions would make every Frame given to Decode
		// escape to the heap.
		var err error
		switch e {
		case extRDETH:
			err = f.RDETH.DecodeFromBytes(rest, nilDF)
		case extDETH:
			err = f.DETH.DecodeFromBytes(rest, nilDF)
		case extXRCETH:
			err = f.XRCETH.DecodeFromBytes(rest, nilDF)
		case extRETH:
			err = f.RETH.DecodeFromBytes(rest, nilDF)
		case extAtomicETH:
			err = f.AtomicETH.DecodeFromBytes(rest, nilDF)
		case extAETH:
			err = f.AETH.DecodeFromBytes(rest, nilDF)
		case extAtomicAckETH:
			err = f.AtomicAckETH.DecodeFromBytes(rest, nilDF)
		case extImmDt:
			err = f.ImmDt.DecodeFromBytes(rest, nilDF)
		case extIETH:
			err = f.IETH.DecodeFromBytes(rest, nilDF)
		case extDCHeader:
			err = f.DCHeader.DecodeFromBytes(rest, nilDF)
		case extDCConnect:
			err = f.DCConnect.DecodeFromBytes(rest, nilDF)
		case extFETH:
			err = f.FETH.DecodeFromBytes(rest, nilDF)
		}
		if err != nil && cut {
			return nil // the capture ends inside this header
		}
		if err != nil {
			return extShortErr(e, pos, len(rest), int(f.BTH.PadCnt), op)
		}
		// Each header's payload is what follows its extLen bytes; the CNP's
		// reserved block takes what there is (some senders omit it).
		rest = rest[min(extLen[e], len(rest)):]
		f.Has |= hasExt[e]
		pos += extLen[e]
	}
	f.Payload = rest
	if f.Has&HasDETH != 0 && isMADPacket(op, f.BTH.DestQP, f.DETH.SrcQP) {
		return d.mad(rest, pos, f, cut)
	}
	return nil
}

// extShortErr is the error of header e at pos with only left bytes before
// the pad and ICRC of a packet of opcode op, naming a pad count that took
// the header's bytes.
func extShortErr(e ext, pos, left, pad int, op Opcode) error {
	name := extLayerTypes[e].String()
	if pad > 0 && left+pad >= extLen[e] {
		return frameErr(pos, "%s needs %d bytes, %d left: the BTH pad count %d contradicts the packet length (opcode %s)", name, extLen[e], left, pad, op)
	}
	return frameErr(pos, "%s needs %d bytes, %d left (opcode %s)", name, extLen[e], left, op)
}

// mad decodes the management datagram that is the payload b (at off) of a
// UD packet on QP0 or QP1. A MAD shorter than its common header is an
// error, unless the capture cut it.
func (d *Decoder) mad(b []byte, off int, f *Frame, cut bool) error {
	if len(b) < MADHeaderLen {
		if cut {
			return nil
		}
		return frameErr(off, "MAD on QP%d: %d bytes, need %d for the common header", min(f.BTH.DestQP, f.DETH.SrcQP), len(b), MADHeaderLen)
	}
	_ = f.MAD.DecodeFromBytes(b, nilDF)
	f.Has |= HasMAD
	return nil
}

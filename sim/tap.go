package sim

import (
	"fmt"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/internal/version"
)

// Tap interfaces, in the ERF record's interface bits.
const (
	IfaceTx = 0 // frames the tapped port transmits
	IfaceRx = 1 // frames the tapped port receives
)

// tapWriter writes one tap's frames as a nanosecond pcap of ERF records
// (type 21 for packets, 25 for flow-control packets; with a snap length, a
// cut packet's record is flagged truncated and keeps its wire length), in
// time order. A tap file named *.pcapng is pcapng instead, its interface
// named after the tapped port and each packet's direction in epb_flags, so
// that mergecap keeps the taps of a run apart.
type tapWriter struct {
	name    string
	file    *outfile.File
	w       *capfile.PcapWriter
	epochNs int64
	quantNs int64
	noFCP   bool // data packets only
	snap    int  // bytes of each packet kept, 0 = all
	eth     bool // RoCEv2 and PFC frames in ERF Ethernet records
	frames  int
	// Received frames are recorded when their peer starts sending, a
	// propagation delay before their first byte reaches the tap; they wait
	// here (in time order, as one link direction delivers them) until the
	// simulation clock passes them.
	rx       []tapRec
	rxAt     int
	sb       gopacket.SerializeBuffer
	zero     []byte
	ifaStack []byte // an IFA probe's metadata stack, reused
	ethLayers
	err error
}

type tapRec struct {
	atPs int64
	pkt  *packet
}

// tapSnapLenBytes is the most of a packet a tap's record holds: what ibcap
// and capfile.NewPcapWriter declare for an ERF file.
const tapSnapLenBytes = 65535 - capfile.ERFRecordMaxOverheadBytes

var serializeOpts = gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}

// A pcapng tap records the port's data rate as if_speed (bits per second),
// which the analyses take for --rate.
func newTapWriter(f *outfile.File, t Tap, epochNs, quantNs int64, mtuBytes int, ethernet bool, speedBps uint64) (*tapWriter, error) {
	cfg := capfile.EncoderConfig{LinkType: decode.LinkTypeERF, ERFEthernet: ethernet, SnapLenBytes: tapSnapLenBytes}
	what := "InfiniBand"
	if ethernet {
		what = "Ethernet (RoCEv2, PFC)"
	}
	if strings.HasSuffix(t.File, ".pcapng") {
		dir := t.Direction
		if dir == "" {
			dir = TapBoth
		}
		cfg.PcapNG = true
		cfg.SectionOptions = []capfile.NgOption{capfile.NgString(capfile.NgOptSHBUserAppl, version.Application("ibsim"))}
		cfg.InterfaceOptions = []capfile.NgOption{capfile.NgString(capfile.NgOptIfName, t.Port),
			capfile.NgString(capfile.NgOptIfDescription, fmt.Sprintf("ibsim tap on port %s (%s), %s in ERF records", t.Port, dir, what)),
			capfile.NgUint64(capfile.NgOptIfSpeed, speedBps)}
	}
	w, err := capfile.NewPcapWriterConfig(f, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return &tapWriter{name: f.Name(), file: f, w: w, epochNs: epochNs, quantNs: quantNs, eth: ethernet,
		sb: gopacket.NewSerializeBuffer(), zero: make([]byte, mtuBytes)}, nil
}

// record writes a frame whose first byte passes the tap at atPs; nowPs is
// the simulation clock, so received frames due by now go out first.
func (t *tapWriter) record(atPs, nowPs int64, pkt *packet, iface uint8) {
	if (pkt.fcp || pkt.pfc) && t.noFCP {
		return
	}
	t.flushRx(nowPs)
	if iface == IfaceRx && atPs > nowPs {
		t.rx = append(t.rx, tapRec{atPs, pkt})
		return
	}
	t.write(atPs, pkt, iface)
}

func (t *tapWriter) flushRx(nowPs int64) {
	for t.rxAt < len(t.rx) && t.rx[t.rxAt].atPs <= nowPs {
		r := t.rx[t.rxAt]
		t.rx[t.rxAt].pkt = nil
		t.rxAt++
		t.write(r.atPs, r.pkt, IfaceRx)
	}
	if t.rxAt == len(t.rx) {
		t.rx, t.rxAt = t.rx[:0], 0
	}
}

func (t *tapWriter) write(atPs int64, pkt *packet, iface uint8) {
	if t.err != nil {
		return
	}
	ns := t.epochNs + floorDiv(atPs, 1000)
	if t.quantNs > 1 {
		ns -= ns % t.quantNs
	}
	var err error
	switch {
	case pkt.fcp:
		err = gopacket.SerializeLayers(t.sb, serializeOpts, &decode.LinkFCP{Op: pkt.fcpOp, FCTBS: pkt.fctbs, VL: pkt.vl, FCCL: pkt.fccl})
	case pkt.pfc:
		err = t.serializePFC(pkt)
	case t.eth:
		err = t.serializeRoCE(pkt)
	default:
		err = t.serializeData(pkt)
	}
	if err != nil {
		t.err = fmt.Errorf("%s: building frame: %w", t.name, err)
		return
	}
	data := t.sb.Bytes()
	wire := len(data)
	// ICRC and VCRC end a data packet; a snap that cuts both
	// off saves computing them.
	if !pkt.fcp && !t.eth && (t.snap == 0 || t.snap > wire-decode.ICRCLen-decode.VCRCLen) {
		decode.SealNative(data)
	}
	if t.snap > 0 && wire > t.snap {
		data = data[:t.snap]
	}
	// The record type (21, or 25 for a link packet) and the truncated flag
	// of a cut packet are capfile's Encoder's, as in ibcap's files.
	dir := decode.DirectionOutbound
	if iface == IfaceRx {
		dir = decode.DirectionInbound
	}
	if err := t.w.WritePacket(&capfile.Packet{TsNs: ns, Data: data, WireLenBytes: wire, Iface: iface, Direction: dir}); err != nil {
		t.err = t.file.Err() // a write error names the file
		if t.err == nil {
			t.err = fmt.Errorf("%s: %w", t.name, err)
		}
	}
	t.frames++
}

// serializeData builds a data packet, LRH through VCRC, into t.sb.
func (t *tapWriter) serializeData(pkt *packet) error {
	lrh := &decode.LRH{VL: pkt.vl, SL: pkt.sl, LNH: decode.LNHLocal, DLID: pkt.dlid, SLID: pkt.slid}
	bth := &decode.BTH{OpCode: pkt.op, PKey: 0xFFFF, DestQP: pkt.qp, PSN: pkt.psn, AckReq: pkt.ackReq}
	payload := gopacket.Payload(t.zero[:pkt.payloadBytes])
	switch {
	case pkt.op.IsAck():
		return gopacket.SerializeLayers(t.sb, serializeOpts, lrh, bth, &decode.AETH{MSN: pkt.msn})
	case pkt.dmaLenBytes > 0:
		reth := &decode.RETH{VA: 0x7f0000000000, RKey: 0x1234, DMALen: pkt.dmaLenBytes}
		return gopacket.SerializeLayers(t.sb, serializeOpts, lrh, bth, reth, payload)
	}
	return gopacket.SerializeLayers(t.sb, serializeOpts, lrh, bth, payload)
}

// close writes the received frames still waiting and flushes them to the
// file (which the run commits).
func (t *tapWriter) close() error {
	t.flushRx(1<<62 - 1)
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = t.file.Err() // a write error names the file
		if t.err == nil {
			t.err = fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return t.err
}

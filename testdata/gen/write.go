package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// rec is one record of a capture file.
type rec struct {
	tsNs     int64
	data     []byte // what the file stores (cut to the snap length)
	wireLen  int
	ngIface  int   // pcapng interface index
	erfType  uint8 // for capfile.PcapWriter ERF files: the record type
	erfIface uint8
}

// capture is one file to write, with what the tests must find in it.
type capture struct {
	name       string
	linkType   int
	micro      bool  // microsecond pcap instead of nanosecond
	snapLen    int   // file header snap length (0: 65535)
	ngLinks    []int // pcapng: one interface per link type
	recs       []rec
	expect     expectation
	viaWriter  bool // write with capfile.PcapWriter
	nextTimeNs int64
}

// expectation is what testdata/pcaps/expect.json records per file; the
// decode tests check the decoder against it.
type expectation struct {
	LinkType  int   `json:"link_type"`
	Frames    int   `json:"frames"`
	IBFrames  int   `json:"ib_frames"`             // frames that are IB, RoCE or link packets
	BadICRC   []int `json:"bad_icrc,omitempty"`    // frame numbers with a deliberately wrong ICRC
	BadVCRC   []int `json:"bad_vcrc,omitempty"`    // ... wrong VCRC or LPCRC
	Cut       []int `json:"cut,omitempty"`         // frames cut by the snap length
	NotIB     []int `json:"not_ib,omitempty"`      // frames that are neither IB nor RoCE
	UDPLowSrc []int `json:"udp_low_src,omitempty"` // RoCEv2 frames whose UDP source port is below 4791
	// Flows: what `ibanalyze flows` must report, for captures written with known truth.
	Flows []flowTruth `json:"flows,omitempty"`
}

// baseNs is the capture start: fixed so the files are byte-for-byte reproducible.
var baseNs = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()

func newCapture(name string, linkType int) *capture {
	return &capture{name: name, linkType: linkType, nextTimeNs: baseNs, expect: expectation{LinkType: linkType}}
}

// add appends a record; the time advances by an irregular number of ns so
// that timestamps use the whole ns resolution.
func (c *capture) add(data []byte, wireLen int) *rec {
	n := len(c.recs)
	c.nextTimeNs += int64(700 + (n*7919)%1543)
	c.recs = append(c.recs, rec{tsNs: c.nextTimeNs, data: data, wireLen: wireLen})
	c.expect.Frames++
	c.expect.IBFrames++
	return &c.recs[n]
}

// frame is the 1-based number of the last record added.
func (c *capture) frame() int { return len(c.recs) }

func (c *capture) write(dir string) error {
	f, err := os.Create(filepath.Join(dir, c.name))
	if err != nil {
		return err
	}
	defer f.Close()
	switch {
	case c.viaWriter:
		w, err := capfile.NewPcapWriter(f, c.linkType)
		if err != nil {
			return err
		}
		for _, r := range c.recs {
			p := capfile.Packet{TsNs: r.tsNs, Data: r.data, WireLenBytes: r.wireLen}
			if c.linkType == decode.LinkTypeERF {
				p.ERFType, p.Iface = r.erfType, r.erfIface
			}
			if err := w.WritePacket(&p); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
	case c.ngLinks != nil:
		b := capfile.AppendNgSectionHeader(nil, []capfile.NgOption{capfile.NgString(capfile.NgOptSHBUserAppl, "ibscope testdata/gen")})
		for _, lt := range c.ngLinks {
			b = capfile.AppendNgInterface(b, lt, 65535, []capfile.NgOption{capfile.NgString(capfile.NgOptIfName, fmt.Sprintf("linktype%d", lt))})
		}
		for _, r := range c.recs {
			b = capfile.AppendNgPacket(b, uint32(r.ngIface), r.tsNs, r.data, r.wireLen, nil)
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	default:
		snap := uint32(65535)
		if c.snapLen > 0 {
			snap = uint32(c.snapLen)
		}
		b := capfile.AppendPcapFileHeader(nil, c.linkType, snap, c.micro)
		for _, r := range c.recs {
			b = capfile.AppendPcapRecord(b, r.tsNs, r.data, r.wireLen, c.micro)
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return f.Close()
}

func writeExpect(dir string, cs []*capture) error {
	m := make(map[string]expectation, len(cs))
	for _, c := range cs {
		m[c.name] = c.expect
	}
	b, err := json.MarshalIndent(m, "", "  ") // map keys come out sorted: deterministic
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "expect.json"), append(b, '\n'), 0o644)
}

// breakICRC flips a bit of the ICRC that ends at end (exclusive) in b.
func breakICRC(b []byte, end int) {
	b[end-decode.ICRCLen] ^= 0x01
}

// revcrc recomputes a native packet's VCRC after its ICRC was broken, so
// that only the ICRC is wrong.
func revcrc(b []byte) {
	binary.LittleEndian.PutUint16(b[len(b)-2:], decode.VCRC(b[:len(b)-2]))
}

// breakVCRC flips a bit of a native packet's VCRC (its last two bytes).
func breakVCRC(b []byte) {
	b[len(b)-1] ^= 0x80
}

// icrcEnd returns where the ICRC of a RoCE frame ends.
func icrcEnd(frame []byte) int {
	off := 14
	et := binary.BigEndian.Uint16(frame[12:])
	if et == 0x8100 {
		et = binary.BigEndian.Uint16(frame[16:])
		off += 4
	}
	switch et {
	case 0x0800:
		ihl := int(frame[off]&0x0F) * 4
		return off + ihl + int(binary.BigEndian.Uint16(frame[off+ihl+4:]))
	case 0x86DD:
		return off + 40 + int(binary.BigEndian.Uint16(frame[off+40+4:]))
	}
	return off + decode.GRHLen + int(binary.BigEndian.Uint16(frame[off+4:]))
}

package capture

import (
	"fmt"
	"io"
	"os"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// fileSource is a capture file read as a Source (ibcap -r, as tcpdump -r):
// its records in order, through the filter expression, cut to the snap
// length, so that Run and a Writer copy and filter it as they would a
// live capture. It keeps every frame unless an expression says otherwise:
// the RoCE-only default is for a live capture, and a file was chosen
// already.
type fileSource struct {
	r      *capfile.Reader
	name   string
	c      Config
	filter frameFilter
	// erf is set for a file of ERF records (a pcap of link type 197 or a
	// raw .erf file): Next gives the packets inside them, of linkType, as
	// a live source would, and a Writer puts them in ERF records again.
	erf      bool
	linkType int
	frame    decode.Frame
	hdr      decode.ERF
	// pending is the first record, read at open to learn an ERF file's
	// link type.
	pending    []byte
	hasPending bool
	stats      Stats
	badRecords int
}

// maxRecordNotices bounds the notices of records skipped for a damaged
// header: a damaged file says the first few, the report counts them all.
const maxRecordNotices = 5

// OpenFile opens the capture file path (pcap, pcapng or ERF, compressed
// or not; "-" is standard input) as a Source. Of cfg it takes the snap
// length, FilterExpr (run in user space on each frame) and Notice.
// Next returns io.EOF after the last record.
func OpenFile(path string, cfg *Config) (Source, error) {
	c := cfg.withDefaults()
	var r *capfile.Reader
	var err error
	if path == capfile.Stdin {
		r, err = capfile.NewReader(os.Stdin, "standard input")
	} else {
		r, err = capfile.Open(path)
	}
	if err != nil {
		return nil, err
	}
	s := &fileSource{r: r, name: path, c: c, linkType: r.LinkType(), erf: r.LinkType() == decode.LinkTypeERF}
	if s.erf {
		// The packets' link type is the first record's: InfiniBand or
		// Ethernet. A file of no records gives Ethernet.
		s.linkType = decode.LinkTypeEthernet
		data, err := s.record()
		switch {
		case err == io.EOF:
		case err != nil:
			r.Close()
			return nil, err
		default:
			s.pending, s.hasPending = data, true
			if erfInfiniBand(s.hdr.Type) {
				s.linkType = decode.LinkTypeInfiniBand
			}
		}
	}
	switch s.linkType {
	case decode.LinkTypeEthernet, decode.LinkTypeInfiniBand, decode.LinkTypeLinuxSLL2:
	default:
		r.Close()
		return nil, fmt.Errorf("%s: link type %d: ibcap copies Ethernet (1), InfiniBand (247), ERF (197) and Linux cooked v2 (276) files", path, s.linkType)
	}
	// Every frame, unless an expression chooses.
	s.filter.all = true
	if c.FilterExpr != "" {
		if _, s.filter, err = captureFilter(c, s.linkType); err != nil {
			r.Close()
			return nil, err
		}
	}
	return s, nil
}

// record reads the next record's packet: the record itself, or the
// packet inside an ERF record (s.hdr then holds its header).
func (s *fileSource) record() ([]byte, error) {
	for {
		data, err := s.r.NextRecord(&s.frame)
		// NextRecord returns a *DecodeError itself, never wrapped: a type
		// assertion, unlike errors.As(err, &de), does not move de to the
		// heap, an allocation per record.
		if de, ok := err.(*capfile.DecodeError); ok {
			s.badRecords++
			if s.badRecords <= maxRecordNotices && s.c.Notice != nil {
				s.c.Notice(de.Error())
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !s.erf {
			return data, nil
		}
		if err := s.hdr.DecodeFromBytes(data, nopFeedback{}); err != nil {
			return nil, fmt.Errorf("%s: record %d at byte offset %d: %w", s.name, s.frame.Number, s.frame.Offset, err)
		}
		return s.hdr.Payload, nil
	}
}

// erfInfiniBand says whether ERF records of type t hold InfiniBand: a
// packet, LRH first, or a link packet (flow control).
func erfInfiniBand(t uint8) bool {
	return t == decode.ERFTypeInfiniBand || t == decode.ERFTypeIBLink
}

type nopFeedback struct{}

func (nopFeedback) SetTruncated() {}

func (s *fileSource) Next() (capfile.Packet, error) {
	for {
		var data []byte
		if s.hasPending {
			data, s.hasPending = s.pending, false
		} else {
			var err error
			if data, err = s.record(); err != nil {
				return capfile.Packet{}, err
			}
		}
		s.stats.Received++
		wire := s.frame.WireLen
		if s.erf {
			wire = max(int(s.hdr.WLen), len(data))
			if erfInfiniBand(s.hdr.Type) != (s.linkType == decode.LinkTypeInfiniBand) {
				// A record of the other kind than the file's first:
				// the output has one link type.
				s.stats.NotRoCE++
				continue
			}
		}
		if !s.filter.keep(data) {
			s.stats.NotRoCE++
			continue
		}
		p := capfile.Packet{Data: data, TsNs: s.frame.TsNs, WireLenBytes: wire, Direction: s.frame.Dir}
		if s.erf {
			p.Iface = s.hdr.Interface()
		}
		if len(p.Data) > s.c.SnapLenBytes {
			p.Data = p.Data[:s.c.SnapLenBytes]
		}
		return p, nil
	}
}

func (s *fileSource) LinkType() int { return s.linkType }

func (s *fileSource) Stats() (Stats, error) { return s.stats, nil }

func (s *fileSource) Device() string { return s.name }

func (s *fileSource) Close() error { return s.r.Close() }

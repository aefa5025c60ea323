package capture

import (
	"context"
	"io"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// memSource hands out the same frames over and over, as fast as asked:
// what is left to measure is Run and the Writer.
type memSource struct {
	frames [][]byte
	i, n   int
}

func (s *memSource) Next() (capfile.Packet, error) {
	if s.i >= s.n {
		return capfile.Packet{}, io.EOF
	}
	f := s.frames[s.i%len(s.frames)]
	s.i++
	return capfile.Packet{Data: f[:min(128, len(f))], TsNs: int64(s.i), WireLenBytes: len(f)}, nil
}
func (s *memSource) LinkType() int         { return decode.LinkTypeEthernet }
func (s *memSource) Stats() (Stats, error) { return Stats{}, nil }
func (s *memSource) Device() string        { return "mem" }
func (s *memSource) Close() error          { return nil }

func benchRun(b *testing.B, format Format, flt *Filter) {
	roce, _ := mixedTraffic(1000, false)
	src := &memSource{frames: roce, n: b.N}
	w, err := NewWriter(WriterConfig{Path: "-", Stdout: io.Discard, Format: format, LinkType: decode.LinkTypeEthernet, SnapLenBytes: 128})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := Run(context.Background(), src, w, RunOptions{Filter: flt})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(rep.Written)/b.Elapsed().Seconds(), "pkt/s")
}

// BenchmarkRunPcap is the user-space cost of one packet at snap length
// 128: the loop, the accounting and a nanosecond pcap record.
func BenchmarkRunPcap(b *testing.B) { benchRun(b, FormatPcap, nil) }

// BenchmarkRunPcapNG is the same with pcapng blocks.
func BenchmarkRunPcapNG(b *testing.B) { benchRun(b, FormatPcapNG, nil) }

// BenchmarkRunERF wraps each frame in an ERF record.
func BenchmarkRunERF(b *testing.B) { benchRun(b, FormatERF, nil) }

// BenchmarkRunQPFilter adds decoding each frame for a --qp filter.
func BenchmarkRunQPFilter(b *testing.B) {
	benchRun(b, FormatPcap, &Filter{QPs: []uint32{0x11, 0x12, 0x13, 0x14, 0x15}})
}

// BenchmarkFileSource: ibcap -r's source, a 10k-frame pcap read record by
// record to its end (Next until io.EOF).
func BenchmarkFileSource(b *testing.B) {
	path := testcap.Write(b, "file.pcap", false, testcap.Stream(10000, 1, 2, 0x11, 0, 256, testcap.BaseNs, func(int) int64 { return 1000 }))
	b.ReportAllocs()
	for b.Loop() {
		src, err := OpenFile(path, &Config{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := src.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		src.Close()
	}
}

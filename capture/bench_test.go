package capture

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testcap"
)

// memSource hands out the same frames over and over, as fast as asked:
// what is left to measure is Run and the Writer.
type memSource struct {
	frames [][]byte
	i, n   int
}

func (s *memSource) Next() (Packet, error) {
	if s.i >= s.n {
		return Packet{}, io.EOF
	}
	f := s.frames[s.i%len(s.frames)]
	s.i++
	return Packet{Data: f[:min(128, len(f))], TsNs: int64(s.i), WireLenBytes: len(f)}, nil
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
	if err != io.EOF {
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

// BenchmarkRunVerbsPcap is the verbs sniffer's receive loop at full speed:
// the libibverbs test double (internal/fakeverbs) fills posted buffers with
// 128-byte RoCE frames as fast as they are posted and polled, and Run
// writes them, snap length 128, to pcap files on tmpfs (/dev/shm; two of
// 64 MB in a ring, -C 64 -W 2, so memory stays bounded). What it measures
// includes the double's own work (a 128-byte copy and a completion per
// packet), which a real device does in hardware.
func BenchmarkRunVerbsPcap(b *testing.B) { benchVerbs(b, true) }

// BenchmarkRunVerbsDiscard is the same loop writing to io.Discard: the
// receive path without the file system.
func BenchmarkRunVerbsDiscard(b *testing.B) { benchVerbs(b, false) }

func benchVerbs(b *testing.B, toFile bool) {
	pkts := testcap.Stream(1000, 1, 2, 0x11, 100, 70, testcap.BaseNs, func(int) int64 { return 100 })
	env := fakeverbs.New(b, fakeverbs.Config{Feed: testcap.Write(b, "feed.pcap", false, pkts), FeedLoops: -1})
	env.Setenv(b)
	src, err := Open("fake_1", &Config{SysfsRoot: env.Sysfs, SnapLenBytes: 128})
	if err != nil {
		env.RequireLoaded(b)
		b.Fatal(err)
	}
	defer src.Close()
	wc := WriterConfig{Path: "-", Stdout: io.Discard, Format: FormatPcap, LinkType: src.LinkType(), SnapLenBytes: 128}
	if toFile {
		dir := "/dev/shm"
		if _, err := os.Stat(dir); err != nil {
			dir = b.TempDir()
		}
		if dir, err = os.MkdirTemp(dir, "ibscope-bench-"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		wc.Path, wc.RotateBytes, wc.MaxFiles = filepath.Join(dir, "verbs.pcap"), 64_000_000, 2
	}
	w, err := NewWriter(wc)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	rep, err := Run(context.Background(), src, w, RunOptions{Count: uint64(b.N)})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(rep.Written)/b.Elapsed().Seconds(), "pkt/s")
	b.StopTimer()
	env.NoViolations(b)
}

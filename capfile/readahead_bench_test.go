package capfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// BenchmarkStreamWorkers reads and decodes a capture file (CRCs checked)
// through a Stream, on one goroutine and read ahead on GOMAXPROCS: the file
// named by IBSCOPE_BENCH_FILE, or else 100,000 frames of the benchmark mix.
// Compare ns/op for the wall time, and the CPU time of the process
// (go test -bench ... -cpuprofile, or time) for the cost of the hand-over.
func BenchmarkStreamWorkers(b *testing.B) {
	path := os.Getenv("IBSCOPE_BENCH_FILE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "bench.pcap")
		file := memCapture(b, decode.LinkTypeEthernet, 100_000, rocePacket(b, 0x06, 128), rocePacket(b, 0x07, 128),
			rocePacket(b, 0x07, 128), rocePacket(b, 0x08, 128), rocePacket(b, 0x11, 0))
		if err := os.WriteFile(path, file, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			frames := 0
			for b.Loop() {
				s, err := OpenStream([]string{path}, StreamOptions{CheckCRC: true, Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, _, err := s.Next(); err == io.EOF {
						break
					}
					frames++
				}
				s.Close()
			}
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

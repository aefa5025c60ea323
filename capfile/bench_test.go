package capfile

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// BenchmarkReadFile reads and decodes a whole capture from memory: the file
// named by IBSCOPE_BENCH_FILE (e.g. one written by go run ./testdata/gen
// -bench-rocev2 2000000), or else 100,000 frames of the benchmark mix.
func BenchmarkReadFile(b *testing.B) {
	var file []byte
	if path := os.Getenv("IBSCOPE_BENCH_FILE"); path != "" {
		var err error
		if file, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	} else {
		file = memCapture(b, decode.LinkTypeEthernet, 100_000, rocePacket(b, 0x06, 128), rocePacket(b, 0x07, 128),
			rocePacket(b, 0x07, 128), rocePacket(b, 0x08, 128), rocePacket(b, 0x11, 0))
	}
	for _, crc := range []bool{false, true} {
		name := "crc=off"
		if crc {
			name = "crc=on"
		}
		b.Run(name, func(b *testing.B) {
			var f decode.Frame
			var frames, frameBytes int64
			var r *Reader
			b.ReportAllocs()
			for b.Loop() {
				if r == nil {
					b.StopTimer()
					var err error
					if r, err = NewReader(bytes.NewReader(file), "bench"); err != nil {
						b.Fatal(err)
					}
					r.SetCheckCRC(crc)
					b.StartTimer()
				}
				err := r.Next(&f)
				if err == io.EOF {
					r = nil
					continue
				}
				if err != nil {
					b.Fatal(err)
				}
				frames++
				frameBytes += int64(f.CapLen)
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(frames)/secs, "frames/s")
			b.ReportMetric(float64(frameBytes)/secs/1e6, "MB/s")
		})
	}
}

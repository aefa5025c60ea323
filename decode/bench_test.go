package decode

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// Benchmarks of the fast path. Each reports ns/op (one frame), MB/s of frame
// bytes, frames/s, and allocations. The frames are those of the benchmark
// capture testdata/gen writes (-bench-rocev2, -bench-ib): RC RDMA WRITE
// packets with 128-byte payloads; the 1024-byte variants show how the CRC
// cost grows with size.

func benchDecode(b *testing.B, linkType int, frame []byte, crc bool) {
	d := Decoder{LinkType: linkType, CheckCRC: crc}
	var f Frame
	f.CapLen, f.WireLen = len(frame), len(frame)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := d.Decode(frame, &f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkDecodeRoCEv2(b *testing.B) {
	for _, c := range []struct {
		name         string
		payloadBytes int
		crc          bool
	}{{"128B/crc=off", 128, false}, {"128B/crc=on", 128, true}, {"1024B/crc=off", 1024, false}, {"1024B/crc=on", 1024, true}} {
		frame := rocePacket(b, 0x07, c.payloadBytes) // RC RDMA WRITE MIDDLE
		b.Run(c.name, func(b *testing.B) { benchDecode(b, LinkTypeEthernet, frame, c.crc) })
	}
}

func BenchmarkDecodeNativeIB(b *testing.B) {
	for _, c := range []struct {
		name         string
		payloadBytes int
		crc          bool
	}{{"128B/crc=off", 128, false}, {"128B/crc=on", 128, true}, {"1024B/crc=off", 1024, false}, {"1024B/crc=on", 1024, true}} {
		frame := ibPacket(b, 0x07, c.payloadBytes)
		b.Run(c.name, func(b *testing.B) { benchDecode(b, LinkTypeInfiniBand, frame, c.crc) })
	}
}

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
		file = memCapture(b, LinkTypeEthernet, 100_000, rocePacket(b, 0x06, 128), rocePacket(b, 0x07, 128),
			rocePacket(b, 0x07, 128), rocePacket(b, 0x08, 128), rocePacket(b, 0x11, 0))
	}
	for _, crc := range []bool{false, true} {
		name := "crc=off"
		if crc {
			name = "crc=on"
		}
		b.Run(name, func(b *testing.B) {
			var f Frame
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

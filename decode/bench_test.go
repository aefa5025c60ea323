package decode

import (
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

// BenchmarkAppendJSON writes the decode JSON of one decoded frame: an RC
// RDMA WRITE FIRST over RoCEv2 (IP, BTH, RETH, ICRC) and a native IB ACK
// (LRH, BTH, AETH, ICRC, VCRC).
func BenchmarkAppendJSON(b *testing.B) {
	benchAppend(b, false, (*Frame).AppendJSON)
}

// BenchmarkAppendSummary writes the summary line (ibanalyze decode's text)
// of the same two frames as BenchmarkAppendJSON, numbered and timed.
func BenchmarkAppendSummary(b *testing.B) {
	benchAppend(b, true, (*Frame).AppendSummary)
}

// benchAppend runs appendText on BenchmarkAppendJSON's two frames, given
// a frame number and a time when numbered.
func benchAppend(b *testing.B, numbered bool, appendText func(f *Frame, dst []byte, errMsg string) []byte) {
	for _, c := range []struct {
		name     string
		linkType int
		frame    []byte
	}{
		{"rocev2", LinkTypeEthernet, rocePacket(b, 0x06, 128)},
		{"native", LinkTypeInfiniBand, ibPacket(b, 0x11, 0)},
	} {
		b.Run(c.name, func(b *testing.B) {
			d := Decoder{LinkType: c.linkType, CheckCRC: true}
			var f Frame
			f.CapLen, f.WireLen = len(c.frame), len(c.frame)
			if numbered {
				f.Number, f.TsNs = 123456, 1795684211500000000
			}
			if err := d.Decode(c.frame, &f); err != nil {
				b.Fatal(err)
			}
			var line []byte
			b.ReportAllocs()
			for b.Loop() {
				line = appendText(&f, line[:0], "")
			}
		})
	}
}

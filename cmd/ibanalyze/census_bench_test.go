package main

import (
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// BenchmarkCensus: report's first pass over a capture (takeCensus), a
// 10k-frame pcap read to its end.
func BenchmarkCensus(b *testing.B) {
	path := testcap.Write(b, "census.pcap", false, testcap.Stream(10000, 1, 2, 0x11, 0, 256, testcap.BaseNs, func(int) int64 { return 1000 }))
	b.ReportAllocs()
	for b.Loop() {
		if c := takeCensus(path); c.frames != 10000 {
			b.Fatalf("census of %d frames, want 10000", c.frames)
		}
	}
}

package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// BenchmarkPrintPackets: ibcap's print path (no -w), the pcap the capture
// writes read back and printed a line a frame, 10k RoCE frames a run.
func BenchmarkPrintPackets(b *testing.B) {
	path := testcap.Write(b, "print.pcap", false, testcap.Stream(10000, 1, 2, 0x11, 0, 256, testcap.BaseNs, func(int) int64 { return 1000 }))
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := printPackets(bytes.NewReader(data), io.Discard, decode.SummaryOptions{}, false); err != nil {
			b.Fatal(err)
		}
	}
}

package correlate

import (
	"path/filepath"
	"testing"
)

// BenchmarkExport exports a 200,000-frame RoCEv2 capture; rows/s is the
// figure the issue asks for (aim: 2 million).
func BenchmarkExport(b *testing.B) {
	for _, format := range []Format{FormatParquet, FormatArrow} {
		b.Run(format.String(), func(b *testing.B) {
			dir := b.TempDir()
			capture := filepath.Join(dir, "bench.pcap")
			writeStream(b, capture, 188235, 1_700_000_000_000_000_000, 1000) // 200,000 frames with the ACKs
			out := filepath.Join(dir, "out"+format.Ext())
			b.ResetTimer()
			var rows int64
			for range b.N {
				st, err := Export(capture, out, ExportOptions{Format: format})
				if err != nil {
					b.Fatal(err)
				}
				rows += st.Frames
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

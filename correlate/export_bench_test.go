package correlate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// BenchmarkExport exports a 200,000-frame RoCEv2 capture; rows/s is the
// figure the issue asks for (aim: 2 million).
func BenchmarkExport(b *testing.B) {
	for _, format := range []Format{FormatParquet, FormatArrow, FormatCSV, FormatJSONL} {
		b.Run(format.String(), func(b *testing.B) {
			dir := b.TempDir()
			capture := filepath.Join(dir, "bench.pcap")
			writeStream(b, capture, 188235, 1_700_000_000_000_000_000, 1000) // 200,000 frames with the ACKs
			out := filepath.Join(dir, "out"+format.Ext())
			b.ResetTimer()
			var rows int64
			for range b.N {
				st, err := Export([]string{capture}, out, ExportOptions{Format: format})
				if err != nil {
					b.Fatal(err)
				}
				rows += st.Frames
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkCorrelate joins a 200,000-frame capture with 10,000 telemetry
// samples (one every 20 µs of its 200 ms), offset given.
func BenchmarkCorrelate(b *testing.B) {
	dir := b.TempDir()
	capture := filepath.Join(dir, "bench.pcap")
	const n, gapNs = 188235, 1000
	writeStream(b, capture, n, t0Ns, gapNs)
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, telemetry.ClockHost,
		[]telemetry.Counter{telemetry.SysfsCounter("counters", telemetry.PortXmitData)})
	for k := range 10_000 {
		ts := t0Ns + int64(k)*20_000
		s.Append(uint64(k), ts, ts, []uint64{uint64(k) * 5000})
	}
	tel := filepath.Join(dir, "tel.csv")
	f, err := os.Create(tel)
	if err != nil {
		b.Fatal(err)
	}
	if err := testtel.WriteSidecar(f, s); err != nil {
		b.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "joined.parquet")
	b.ResetTimer()
	var frames int64
	for range b.N {
		res, err := Correlate([]string{capture}, []string{tel}, out, Options{OffsetGiven: true})
		if err != nil {
			b.Fatal(err)
		}
		frames += res.Frames
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

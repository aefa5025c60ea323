package telemetry

import (
	"bytes"
	"testing"
)

// diagBenchCSV is a telemetry_diag format 1 CSV of n samples of 8 data IDs.
func diagBenchCSV(b *testing.B, n int, format DiagFormat) []byte {
	ids := []DataID{0x1020000100000000, 0x1140000100000000, 0x1020000300000000, 0x1140000300000000,
		0x1080000400000000, 0x1100000100000000, 0x1160000200000000, 0x1180000200000000}
	counters := make([]Counter, len(ids))
	for j, id := range ids {
		counters[j] = DiagCounterFor(id, "", 64, false)
	}
	s := makeSeries(n, ClockNICRealTime, counters, 0)
	var buf bytes.Buffer
	if err := WriteDiagCSV(&buf, s, DiagWriteOptions{Format: format}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchmarkReadDiag(b *testing.B, format DiagFormat) {
	const n = 100_000
	data := diagBenchCSV(b, n, format)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := ReadDiagCSV(bytes.NewReader(data), "bench", nil)
		if err != nil || s.Len() != n {
			b.Fatalf("%v %d", err, s.Len())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkReadDiagCSV100k reads 100,000 telemetry_diag samples (format 1,
// 8 counters, RTC timestamps).
func BenchmarkReadDiagCSV100k(b *testing.B) { benchmarkReadDiag(b, DiagFormat1) }

// BenchmarkReadDiagCSV100kFormat0 is the same data in format 0 (data ID and
// timestamp per value).
func BenchmarkReadDiagCSV100kFormat0(b *testing.B) { benchmarkReadDiag(b, DiagFormat0) }

// BenchmarkDeltas100k differences one column of 100,000 samples.
func BenchmarkDeltas100k(b *testing.B) {
	s := makeSeries(100_000, ClockHost, []Counter{SysfsCounter("counters", PortXmitData)}, 0)
	dst := make([]Delta, 0, s.Len())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = s.Deltas(0, dst)
	}
	b.ReportMetric(float64(s.Len())*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

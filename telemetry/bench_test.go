package telemetry_test

import (
	"bytes"
	"encoding/csv"
	"io"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// diagBenchCSV is a telemetry_diag format 1 CSV of n samples of 8 data IDs.
func diagBenchCSV(b *testing.B, n int, format telemetry.DiagFormat) []byte {
	ids := []telemetry.DataID{0x1020000100000000, 0x1140000100000000, 0x1020000300000000, 0x1140000300000000,
		0x1080000400000000, 0x1100000100000000, 0x1160000200000000, 0x1180000200000000}
	counters := make([]telemetry.Counter, len(ids))
	for j, id := range ids {
		counters[j] = telemetry.DiagCounterFor(id, "", 64, false)
	}
	s := testtel.MakeSeries(n, telemetry.ClockNICRealTime, counters, 0)
	var buf bytes.Buffer
	if err := testtel.WriteDiagCSV(&buf, s, testtel.DiagWriteOptions{Format: format}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchmarkReadDiag(b *testing.B, format telemetry.DiagFormat) {
	const n = 100_000
	data := diagBenchCSV(b, n, format)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := telemetry.ReadDiagCSV(bytes.NewReader(data), "bench", nil)
		if err != nil || s.Len() != n {
			b.Fatalf("%v %d", err, s.Len())
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkReadDiagCSV100k reads 100,000 telemetry_diag samples (format 1,
// 8 counters, RTC timestamps).
func BenchmarkReadDiagCSV100k(b *testing.B) { benchmarkReadDiag(b, telemetry.DiagFormat1) }

// BenchmarkReadDiagCSV100kFormat0 is the same data in format 0 (data ID and
// timestamp per value).
func BenchmarkReadDiagCSV100kFormat0(b *testing.B) { benchmarkReadDiag(b, telemetry.DiagFormat0) }

// BenchmarkDeltas100k differences one column of 100,000 samples.
func BenchmarkDeltas100k(b *testing.B) {
	s := testtel.MakeSeries(100_000, telemetry.ClockHost, []telemetry.Counter{telemetry.SysfsCounter("counters", telemetry.PortXmitData)}, 0)
	dst := make([]telemetry.Delta, 0, s.Len())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = s.Deltas(0, dst)
	}
	b.ReportMetric(float64(s.Len())*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// benchmarkSplit times the field splitting alone over the lines of a
// telemetry_diag CSV, reporting ns/line: the reader's own (lineReader and
// splitComma) or encoding/csv (quoted fields, one string allocation a
// record), to decide whether quoted-field support is worth its cost.
func benchmarkSplit(b *testing.B, format telemetry.DiagFormat, stdlib bool) {
	const n = 100_000
	data := diagBenchCSV(b, n, format)
	lines := bytes.Count(data, []byte{'\n'}) + 1
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	fields := 0
	for range b.N {
		if stdlib {
			r := csv.NewReader(bytes.NewReader(data))
			r.ReuseRecord, r.TrimLeadingSpace, r.FieldsPerRecord = true, true, -1
			for {
				rec, err := r.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				fields += len(rec)
			}
			continue
		}
		fields += telemetry.SplitFields(data)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines)/float64(b.N), "ns/line")
	_ = fields
}

// BenchmarkSplitLines100k: the reader's splitting of 100,000 format 1
// lines (8 counters).
func BenchmarkSplitLines100k(b *testing.B) { benchmarkSplit(b, telemetry.DiagFormat1, false) }

// BenchmarkSplitLines100kEncodingCSV: the same lines through encoding/csv.
func BenchmarkSplitLines100kEncodingCSV(b *testing.B) { benchmarkSplit(b, telemetry.DiagFormat1, true) }

// BenchmarkSplitLines100kFormat0 and ...EncodingCSV: format 0 lines (25
// fields each).
func BenchmarkSplitLines100kFormat0(b *testing.B) { benchmarkSplit(b, telemetry.DiagFormat0, false) }

func BenchmarkSplitLines100kFormat0EncodingCSV(b *testing.B) {
	benchmarkSplit(b, telemetry.DiagFormat0, true)
}

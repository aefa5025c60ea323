// Package testtel writes telemetry files for ibscope's tests and
// benchmarks: whole series as ibscope sidecars and as DOCA telemetry_diag
// CSV in each of its formats, and series of known values to write. The
// telemetry package reads these formats; nothing in ibscope writes a
// telemetry_diag CSV, and ibcap writes its sidecar sample by sample
// (telemetry.SidecarWriter).
package testtel

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/ibscope/ibscope/telemetry"
)

// WriteSidecar writes a whole series as a sidecar.
func WriteSidecar(w io.Writer, s *telemetry.Series) error {
	meta := map[string]string{}
	for k, v := range s.Meta {
		if k != "format" && !strings.ContainsAny(k, "=") && strings.IndexFunc(k+v, unicode.IsSpace) < 0 && k != "" {
			meta[k] = v
		}
	}
	sw, err := telemetry.NewSidecarWriter(w, s.Source, s.Clock, s.Counters, meta)
	if err != nil {
		return err
	}
	missing := make([]bool, len(s.Counters))
	for i := 0; i < s.Len(); i++ {
		for j := range missing {
			missing[j] = !s.Valid(i, j)
		}
		if err := sw.Write(s.SampleID[i], s.StartNs[i], s.EndNs[i], s.Row(i), missing); err != nil {
			return err
		}
	}
	return nil
}

// DiagWriteOptions choose among the variants DOCA's sample has written.
type DiagWriteOptions struct {
	Format          telemetry.DiagFormat // DiagFormat0, 1 or 2; DiagAuto means 1
	Compact         bool                 // "," between fields, as older DOCA versions; default ", "
	UnpaddedNs      bool                 // RTC ns part without zero padding, as older samples ("12.5" = 12 s + 5 ns)
	TrailingNewline bool                 // end the last row with "\n" (DOCA itself does not)
}

// WriteDiagCSV writes s as a DOCA telemetry_diag sample CSV would look. The
// series' clock picks the timestamp form: RTC (seconds.nanoseconds) for
// ClockNICRealTime and ClockHost, FRC (integer ns) otherwise. Format 0 needs
// the counters' DataID.
func WriteDiagCSV(w io.Writer, s *telemetry.Series, o DiagWriteOptions) error {
	sep := ", "
	if o.Compact {
		sep = ","
	}
	bw := bufio.NewWriter(w)
	rtc := s.Clock == telemetry.ClockNICRealTime || s.Clock == telemetry.ClockHost
	stamp := func(b []byte, ns int64) []byte {
		b = append(b, sep...)
		if !rtc {
			return strconv.AppendInt(b, ns, 10)
		}
		if ns < 0 {
			ns = 0
		}
		b = strconv.AppendInt(b, ns/1e9, 10)
		b = append(b, '.')
		frac := ns % 1e9
		if !o.UnpaddedNs {
			for d := int64(1e8); d > 1 && frac < d; d /= 10 {
				b = append(b, '0')
			}
		}
		return strconv.AppendInt(b, frac, 10)
	}
	var b []byte
	b = append(b, "sample_id"...)
	if o.Format != telemetry.DiagFormat0 {
		b = append(b, sep+"sample_time_start"+sep+"sample_time_end"...)
	}
	for _, c := range s.Counters {
		if o.Format == telemetry.DiagFormat0 {
			b = append(b, sep+"data_id"+sep+"sample_time"...)
		}
		b = append(b, sep...)
		b = append(b, c.Name...)
	}
	n := len(s.Counters)
	for i := 0; i < s.Len(); i++ {
		b = append(b, '\n')
		b = strconv.AppendUint(b, s.SampleID[i]&0xFFFFFFFF, 10)
		if o.Format != telemetry.DiagFormat0 {
			b = stamp(b, s.StartNs[i])
			b = stamp(b, s.EndNs[i])
		}
		for j := 0; j < n; j++ {
			v := s.Values[i*n+j]
			if o.Format == telemetry.DiagFormat0 {
				b = append(b, sep...)
				b = append(b, s.Counters[j].DataID.String()...)
				t := s.StartNs[i]
				if s.ValueNs != nil {
					t = s.ValueNs[i*n+j]
				}
				b = stamp(b, t)
			}
			if o.Format == telemetry.DiagFormat2 {
				v &= 0xFFFFFFFF
			}
			b = append(b, sep...)
			b = strconv.AppendUint(b, v, 10)
		}
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if o.TrailingNewline {
		b = append(b, '\n')
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// MakeSeries builds a series of n samples with known values for round
// trips and benchmarks: on source mlx5_0/1, 100 us apart (from 2023 on
// epoch clocks, from 5 s on ClockNICFree), with sample IDs skipping two
// after every gapEvery-th sample (0: none).
func MakeSeries(n int, clock telemetry.Clock, counters []telemetry.Counter, gapEvery int) *telemetry.Series {
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, clock, counters)
	row := make([]uint64, len(counters))
	id := uint64(0)
	for i := 0; i < n; i++ {
		t0 := int64(1_700_000_000_000_000_000) + int64(i)*100_000 + int64(i%7)
		if clock == telemetry.ClockNICFree {
			t0 = 5_000_000_000 + int64(i)*100_000
		}
		for j := range row {
			row[j] = uint64(i)*uint64(1000+j) + uint64(j)*(1<<33)
			if counters[j].Width == 32 {
				row[j] &= 0xFFFFFFFF
			}
		}
		s.Append(id, t0, t0+int64(300+i%50), row)
		id++
		if gapEvery > 0 && i%gapEvery == gapEvery-1 {
			id += 2
		}
	}
	return s
}

// CompareSeries checks samples and column identity; source is not in the
// telemetry_diag CSV, so it is compared only when withSource.
func CompareSeries(t testing.TB, name string, want, got *telemetry.Series, withSource bool) {
	t.Helper()
	if got.Len() != want.Len() || len(got.Counters) != len(want.Counters) {
		t.Fatalf("%s: %d x %d, want %d x %d", name, got.Len(), len(got.Counters), want.Len(), len(want.Counters))
	}
	if got.Clock != want.Clock {
		t.Errorf("%s: clock %v want %v", name, got.Clock, want.Clock)
	}
	if withSource && got.Source != want.Source {
		t.Errorf("%s: source %v want %v", name, got.Source, want.Source)
	}
	for j := range want.Counters {
		if got.Counters[j] != want.Counters[j] {
			t.Errorf("%s: counter %d %+v want %+v", name, j, got.Counters[j], want.Counters[j])
		}
	}
	for i := 0; i < want.Len(); i++ {
		if got.SampleID[i] != want.SampleID[i] || got.StartNs[i] != want.StartNs[i] || got.EndNs[i] != want.EndNs[i] {
			t.Fatalf("%s: sample %d id/time %d %d %d want %d %d %d", name, i, got.SampleID[i], got.StartNs[i], got.EndNs[i],
				want.SampleID[i], want.StartNs[i], want.EndNs[i])
		}
		for j := range want.Counters {
			if got.Value(i, j) != want.Value(i, j) || got.Valid(i, j) != want.Valid(i, j) {
				t.Fatalf("%s: sample %d col %d = %d/%v want %d/%v", name, i, j, got.Value(i, j), got.Valid(i, j), want.Value(i, j), want.Valid(i, j))
			}
		}
	}
}

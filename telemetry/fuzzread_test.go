package telemetry_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

func addFileSeeds(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// checkSeries asserts the invariants every reader promises, then pushes the
// series through the sidecar writer and reader, which must keep it intact.
func checkSeries(t *testing.T, s *telemetry.Series) {
	t.Helper()
	n, k := s.Len(), len(s.Counters)
	if len(s.StartNs) != n || len(s.EndNs) != n || len(s.Values) != n*k {
		t.Fatalf("shape: %d samples, %d starts, %d ends, %d values for %d counters", n, len(s.StartNs), len(s.EndNs), len(s.Values), k)
	}
	if s.ValueNs != nil && len(s.ValueNs) != len(s.Values) {
		t.Fatalf("ValueNs %d for %d values", len(s.ValueNs), len(s.Values))
	}
	for j := range s.Counters {
		name := s.Counters[j].Name
		if s.Col(name) != j {
			t.Fatalf("column %d %q found by name as column %d: names must be unique", j, name, s.Col(name))
		}
		if name == "" || len(name) > telemetry.MaxNameBytes {
			t.Fatalf("column %d: name of %d bytes", j, len(name))
		}
		for i := 0; i < n; i++ {
			d := s.Delta(i, j)
			if d.Flags&telemetry.FlagReset != 0 && d.Flags&telemetry.FlagWrapped != 0 {
				t.Fatalf("sample %d col %d: both wrapped and reset", i, j)
			}
			if r, f := s.Rate(i, j); f&telemetry.FlagReset != 0 && r != 0 {
				t.Fatalf("sample %d col %d: a rate %v across a reset", i, j, r)
			}
		}
		if n > 0 {
			s.DeltaWithin(j, s.TimeNs(0), s.TimeNs(n-1))
		}
	}
	for _, w := range s.Warnings {
		if len(w.Msg) > telemetry.MaxMsgBytes+32 {
			t.Fatalf("warning of %d bytes", len(w.Msg))
		}
	}
	var buf bytes.Buffer
	if err := testtel.WriteSidecar(&buf, s); err != nil {
		return // names a sidecar cannot carry (commas, blanks) are refused, not mangled
	}
	back, err := telemetry.ReadSidecar(&buf, "roundtrip")
	if err != nil {
		t.Fatalf("sidecar round trip: %v\n%s", err, buf.String())
	}
	if len(back) != 1 || back[0].Len() != n {
		t.Fatalf("sidecar round trip: %d series", len(back))
	}
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			if back[0].Value(i, j) != s.Value(i, j) || back[0].Valid(i, j) != s.Valid(i, j) {
				t.Fatalf("sidecar round trip changed sample %d col %d", i, j)
			}
		}
	}
}

func FuzzTelemetryDiagCSV(f *testing.F) {
	addFileSeeds(f, "testdata/diag_format0.csv", "testdata/diag_format1.csv", "testdata/diag_format1_old.csv", "testdata/diag_format2_frc.csv")
	f.Add([]byte("0, 1.0, 1.1, 10\n1, 0.5, 1, x\n\n3,2.999999999,2.000000001,4294967296"))
	// Column names: a BOM, repeats, the joined table's own names, none.
	f.Add([]byte("\xEF\xBB\xBFsample_id, sample_time_start, sample_time_end, a, a, a_2, , cap_packets, start_ns\n0, 1.0, 1.1, 1, 2, 3, 4, 5, 6\n"))
	f.Add([]byte("sample_id, data_id, sample_time, x, data_id, sample_time, x\n0, 0x1020000100000000, 1.0, 5, 0x1020000100000000, 1.0, 6\n"))
	// Drops: an impossible wrap in 1 ms, a plausible one in 1 s, end before start.
	f.Add([]byte("sample_id, sample_time_start, sample_time_end, port_0_rx_bytes\n0, 1.000000000, 1.000000000, 1048800\n1, 1.001000000, 1.001000000, 50\n2, 2.001000000, 2.001000000, 10\n3, 3.9, 3.1, 4294967295\n4, 4.0, 4.0, 0\n"))
	f.Add([]byte("sample_id, sample_time_start, sample_time_end, a\n0, 100, 100, 1048800\n1, 200, 150, 50\n2, 300, 300, 18446744073709551615\n3, 400, 400, 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range []*telemetry.Options{nil, {ClearOnSample: true, DiagFormat: telemetry.DiagFormat2}} {
			s, err := telemetry.ReadDiagCSV(bytes.NewReader(b), "fuzz", opts)
			if err != nil {
				if s != nil {
					t.Fatal("series with error")
				}
				continue
			}
			checkSeries(t, s)
		}
	})
}

func FuzzPerfquery(f *testing.F) {
	addFileSeeds(f, "testdata/perfquery.txt", "testdata/perfquery_x.txt")
	f.Add([]byte("# ts=1.5\n# ts=2\n# Port counters: Lid 1 port 1\nPortXmitWait:....0xffffffff\n3\n"))
	// The second hostile round: a ts_ns past int64 (silently untimed before).
	f.Add([]byte("# ts_ns=99999999999999999999999\n# Port counters: Lid 1 port 1\nPortXmitData:....7\n"))
	// A reset of a saturating counter, then a last snapshot cut short.
	f.Add([]byte("# ts=1\n# Port counters: Lid 1 port 1\nPortXmitWait:....900\nPortXmitData:....7\n# ts=2\n# Port counters: Lid 1 port 1\nPortXmitWait:....4\nPortXmitData:....9\n# ts=3\n# Port counters: Lid 1 port 1\nPortXmitWait:....5\nPortXmitDa"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := telemetry.ReadPerfquery(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for _, s := range ss {
			checkSeries(t, s)
		}
	})
}

func FuzzSidecar(f *testing.F) {
	f.Add([]byte("# ibscope-telemetry v1 source=mlx5_0/1 clock=host interval_ns=5\n# counter a unit=words4 width=32 kind=counter saturating\nsample_id,start_ns,end_ns,a,b\n0,1,2,3,\n1,3,4,5,6\n2,5,6,7"))
	f.Add([]byte("# ibscope-telemetry v1\nsample_id,start_ns,end_ns,a\n0,-1,1,18446744073709551615\n# ibscope-telemetry v1\nsample_id,start_ns,end_ns,a\n0,1,1,1\n"))
	f.Add([]byte("\xEF\xBB\xBF# ibscope-telemetry v1 clock=host\nsample_id,start_ns,end_ns,out_of_buffer,out_of_buffer,,start_ns\n0,1000000,1000000,1048800,1,2,3\n1,2000000,2000000,50,0,1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := telemetry.ReadSidecar(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for _, s := range ss {
			checkSeries(t, s)
		}
	})
}

func FuzzDataIDsJSON(f *testing.F) {
	addFileSeeds(f, "testdata/data_ids.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := telemetry.ReadDataIDs(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for _, d := range ids {
			_ = d.ID.Name()
		}
	})
}

func FuzzRead(f *testing.F) {
	addFileSeeds(f, "testdata/diag_format0.csv", "testdata/perfquery.txt")
	f.Add([]byte("# ibscope-telemetry v1\nsample_id,start_ns,end_ns,a\n0,1,1,1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := telemetry.Read(bytes.NewReader(b), "fuzz", nil)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz") {
				t.Fatalf("error does not name the input: %v", err)
			}
			return
		}
		for _, s := range ss {
			checkSeries(t, s)
		}
	})
}

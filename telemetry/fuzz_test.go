package telemetry

import (
	"bytes"
	"os"
	"strings"
	"testing"
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
func checkSeries(t *testing.T, s *Series) {
	t.Helper()
	n, k := s.Len(), len(s.Counters)
	if len(s.StartNs) != n || len(s.EndNs) != n || len(s.Values) != n*k {
		t.Fatalf("shape: %d samples, %d starts, %d ends, %d values for %d counters", n, len(s.StartNs), len(s.EndNs), len(s.Values), k)
	}
	if s.ValueNs != nil && len(s.ValueNs) != len(s.Values) {
		t.Fatalf("ValueNs %d for %d values", len(s.ValueNs), len(s.Values))
	}
	for j := range s.Counters {
		if s.Col(s.Counters[j].Name) < 0 {
			t.Fatalf("column %q not found by name", s.Counters[j].Name)
		}
		for i := 0; i < n; i++ {
			s.Delta(i, j)
			s.Rate(i, j)
		}
		if n > 0 {
			s.DeltaWithin(j, s.TimeNs(0), s.TimeNs(n-1))
		}
	}
	var buf bytes.Buffer
	if err := WriteSidecar(&buf, s); err != nil {
		return // names a sidecar cannot carry (commas, blanks) are refused, not mangled
	}
	back, err := ReadSidecar(&buf, "roundtrip")
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
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range []*Options{nil, {ClearOnSample: true, DiagFormat: DiagFormat2}} {
			s, err := ReadDiagCSV(bytes.NewReader(b), "fuzz", opts)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := ReadPerfquery(bytes.NewReader(b), "fuzz")
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
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := ReadSidecar(bytes.NewReader(b), "fuzz")
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
		ids, err := ReadDataIDs(bytes.NewReader(b), "fuzz")
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
		ss, err := Read(bytes.NewReader(b), "fuzz", nil)
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

func FuzzDataIDName(f *testing.F) {
	f.Add(uint64(0x1020000200000302))
	f.Fuzz(func(t *testing.T, v uint64) {
		id := DataID(v)
		name := id.Name()
		if back, ok := dataIDFromName(name); ok && back != id {
			if _, known := LookupDataID(id); known {
				t.Fatalf("%s named %q reads back as %s", id, name, back)
			}
		}
	})
}

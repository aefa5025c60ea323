package correlate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/telemetry"
)

// TestJoinedColumnNames: telemetry columns named like the table's own
// (cap_packets, start_ns) or like another counter's derived columns (a_delta
// before a) are written as tel_NAME with a warning, so no column name appears
// twice; a counter reset leaves its delta and rate null with "reset" in
// delta_flags and a warning naming the file and line.
func TestJoinedColumnNames(t *testing.T) {
	dir := t.TempDir()
	sc := buildScenario(t, dir, telemetry.ClockHost, 0)
	var b strings.Builder
	b.WriteString("# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,cap_packets,start_ns,a_delta,a,np_cnp_sent\n")
	for k := range samples {
		ts := t0Ns + int64(k)*intervalNs
		cnp := 1048800 + k
		if k >= 5 {
			cnp = 50 + k // line 8 (sample 5): 1048804 -> 55 in 1 ms is no wrap
		}
		fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%d,%d,%d\n", k, ts, ts, k, 2*k, 3*k, 4*k, cnp)
	}
	tel := writeFile(t, filepath.Join(dir, "names.csv"), b.String())
	out := filepath.Join(dir, "joined.arrow")
	res, err := Correlate([]string{sc.capture}, []string{tel}, out, Options{Format: FormatArrow, OffsetGiven: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl := readTableGo(t, out, FormatArrow)
	defer tbl.Release()
	seen := map[string]bool{}
	for _, f := range tbl.Schema().Fields() {
		if seen[f.Name] {
			t.Errorf("column %s twice", f.Name)
		}
		seen[f.Name] = true
	}
	for _, n := range []string{"tel_cap_packets", "tel_start_ns", "tel_start_ns_delta", "a_delta", "a_delta_delta", "tel_a", "tel_a_rate", "cap_packets", "start_ns"} {
		if !seen[n] {
			t.Errorf("no column %s", n)
		}
	}
	if got := columnStrings(t, tbl, "tel_a")[3]; got != "12" {
		t.Errorf("tel_a row 3 = %s, want 12", got)
	}
	if got := columnStrings(t, tbl, "tel_cap_packets")[4]; got != "4" {
		t.Errorf("tel_cap_packets row 4 = %s, want 4 (the telemetry's, not the capture's)", got)
	}
	deltas, rates, flags := columnStrings(t, tbl, "np_cnp_sent_delta"), columnStrings(t, tbl, "np_cnp_sent_rate"), columnStrings(t, tbl, "delta_flags")
	if deltas[5] != "(null)" || rates[5] != "(null)" || !strings.Contains(flags[5], "reset") {
		t.Errorf("reset row: delta %s rate %s flags %s, want null, null, reset", deltas[5], rates[5], flags[5])
	}
	if deltas[4] != "1" || deltas[6] != "1" {
		t.Errorf("rows around the reset: deltas %s, %s, want 1", deltas[4], deltas[6])
	}
	all := strings.Join(res.TelemetryWarning, "\n")
	for _, want := range []string{
		`telemetry column "cap_packets" would repeat a column name of the joined table; written as "tel_cap_packets"`,
		`telemetry column "a" would repeat a column name of the joined table; written as "tel_a"`,
		tel + ":8: counter reset: np_cnp_sent went from 1048804 to 55",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q:\n%s", want, all)
		}
	}
}

// TestNoSamplesSaysWhy: a telemetry file whose every row is refused says
// why: the first reasons with their lines, and how many there were.
func TestNoSamplesSaysWhy(t *testing.T) {
	dir := t.TempDir()
	sc := buildScenario(t, dir, telemetry.ClockHost, 0)
	var b strings.Builder
	b.WriteString("sample_id, sample_time_start, sample_time_end, port_0_rx_bytes\n")
	for k := range 10 {
		fmt.Fprintf(&b, "%d, 1767000000.%09d, 1767000000.%09d, x%d\n", k, k*1000000, k*1000000, k)
	}
	tel := writeFile(t, filepath.Join(dir, "allbad.csv"), b.String())
	_, err := Correlate([]string{sc.capture}, []string{tel}, filepath.Join(dir, "out.parquet"), Options{OffsetGiven: true})
	want := tel + `: no telemetry samples in the file: 10 problem(s) reading it, the first: line 2: column 4 (port_0_rx_bytes): value "x0" is not an unsigned integer; row skipped; line 3: column 4`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant it to contain %s", err, want)
	}
}

// TestTooManyCounters: telemetry wider than a joined table takes is refused
// before the captures are read, with the count and the limit; at the limit
// a batch holds fewer rows so that its memory stays bounded.
func TestTooManyCounters(t *testing.T) {
	dir := t.TempDir()
	sc := buildScenario(t, dir, telemetry.ClockHost, 0)
	var b strings.Builder
	b.WriteString("# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns")
	for j := range maxJoinedCounters + 1 {
		fmt.Fprintf(&b, ",c%d", j)
	}
	b.WriteString("\n0,1767000000001000000,1767000000001000000" + strings.Repeat(",1", maxJoinedCounters+1) + "\n")
	tel := writeFile(t, filepath.Join(dir, "wide.csv"), b.String())
	_, err := Correlate([]string{sc.capture}, []string{tel}, filepath.Join(dir, "out.parquet"), Options{OffsetGiven: true})
	want := tel + ": 1025 distinct telemetry counters; a joined table takes at most 1024"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if r := joinedBatchRows(maxJoinedCounters); r*maxJoinedCounters*64 > joinedBatchBytes || r < 1024 {
		t.Errorf("%d rows per batch at %d counters", r, maxJoinedCounters)
	}
	if joinedBatchRows(3) != BatchRows {
		t.Errorf("narrow tables: %d rows per batch, want %d", joinedBatchRows(3), BatchRows)
	}
}

// FuzzCounterColumnNames: whatever the telemetry's column names (the
// table's own, each other's _delta and _rate, tel_ forms), the joined table
// never names two columns alike and keeps every name it can.
func FuzzCounterColumnNames(f *testing.F) {
	f.Add("cap_packets,start_ns,a_delta,a,tel_a,tel_a_2,a_rate,sample_id,cap_tx_ipd_p50_ns")
	f.Add("x,x_delta,x_delta_delta,tel_x,tel_x_delta")
	f.Fuzz(func(t *testing.T, list string) {
		parts := strings.Split(list, ",")
		if len(parts) > 200 {
			parts = parts[:200]
		}
		seenIn := map[string]bool{}
		var counters []telemetry.Counter
		for _, p := range parts {
			if !seenIn[p] { // the union by name that counterUnion makes
				seenIn[p] = true
				counters = append(counters, telemetry.Counter{Name: p})
			}
		}
		names, renamed := counterColumnNames(counters)
		seen := map[string]bool{}
		for _, fl := range joinedFields(counters, names) {
			if seen[fl.Name] {
				t.Fatalf("column %q twice for counters %q", fl.Name, parts)
			}
			seen[fl.Name] = true
		}
		kept := 0
		for i, c := range counters {
			if names[i] == c.Name {
				kept++
			}
		}
		if kept+len(renamed) != len(counters) {
			t.Fatalf("%d kept + %d renamed for %d counters", kept, len(renamed), len(counters))
		}
	})
}

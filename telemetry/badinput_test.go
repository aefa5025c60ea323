package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestBOMStripped: a UTF-8 byte order mark before the header (as Windows
// editors save CSV) is stripped, for every format ReadFile sniffs.
func TestBOMStripped(t *testing.T) {
	for name, text := range map[string]string{
		"diag":      "sample_id, sample_time_start, sample_time_end, port_0_rx_bytes\n0, 1.0, 1.1, 10\n1, 2.0, 2.1, 20\n",
		"sidecar":   "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,a\n0,1,1,1\n1,2,2,3\n",
		"perfquery": "# Port counters: Lid 1 port 1\nPortXmitWait:....5\n# Port counters: Lid 1 port 1\nPortXmitWait:....9\n",
	} {
		ss, err := Read(strings.NewReader("\xEF\xBB\xBF"+text), "bom.csv", nil)
		if err != nil {
			t.Errorf("%s with BOM: %v", name, err)
			continue
		}
		if ss[0].Len() != 2 {
			t.Errorf("%s with BOM: %d samples, want 2", name, ss[0].Len())
		}
		if name == "diag" && ss[0].Col("port_0_rx_bytes") != 0 {
			t.Errorf("diag with BOM: columns %v", ss[0].Counters)
		}
	}
	if _, err := Read(strings.NewReader("\xEF\xBB\xBF\n"), "bom.csv", nil); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("BOM alone: %v, want empty file", err)
	}
}

// TestLongValueClipped: a 10 MB bad value is echoed as its first 64 bytes
// and its length, in warnings and in errors.
func TestLongValueClipped(t *testing.T) {
	big := strings.Repeat("x", 10<<20)
	s := readDiag(t, "sample_id, sample_time_start, sample_time_end, a\n0, 1.0, 1.1, "+big+"\n1, 2.0, 2.1, 5\n", nil)
	want := `value "` + strings.Repeat("x", 64) + `"…(10485760 bytes) is not an unsigned integer`
	wantWarning(t, s, 2, want)
	for _, w := range s.Warnings {
		if len(w.Msg) > maxMsgBytes+32 {
			t.Errorf("warning of %d bytes", len(w.Msg))
		}
	}
	_, err := ReadSidecar(strings.NewReader("# ibscope-telemetry v1 source="+big+"\n"), "side")
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "…(10485760 bytes): want DEVICE/PORT") {
		t.Errorf("sidecar source error: %.300v", err)
	}
	var buf bytes.Buffer
	ss, err := ReadPerfquery(strings.NewReader("# Port counters: Lid 1 port 1\nPortXmitWait:...."+big+"\nPortXmitData:....5\n"), "pq")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ss[0].Warnings {
		buf.WriteString(w.String())
	}
	if buf.Len() > 300 || !strings.Contains(buf.String(), "…(10485760 bytes)") {
		t.Errorf("perfquery warnings: %.300s", buf.String())
	}
}

// TestImpossibleWrapIsReset: a 32-bit counter that drops from 1,048,800 to
// 50 in 1 ms would have carried 4,293,918,546 bytes, 4.29e12 bytes/s, if it
// wrapped: that is a reset, with no delta and no rate, and a warning naming
// file and line. The same drop over one second (4.3 GB/s) is a wrap.
func TestImpossibleWrapIsReset(t *testing.T) {
	const head = "sample_id, sample_time_start, sample_time_end, port_0_rx_bytes, port_0_rx_packets\n"
	s := readDiag(t, head+"0, 1.000000000, 1.000000000, 1048800, 7\n1, 1.001000000, 1.001000000, 50, 9\n", nil)
	col := s.Col("port_0_rx_bytes")
	if s.Counters[col].Width != 32 {
		t.Fatalf("width %d, want 32 (values fit in 32 bits)", s.Counters[col].Width)
	}
	if d := s.Delta(1, col); d.Flags&FlagReset == 0 || d.Flags&FlagWrapped != 0 {
		t.Errorf("1 ms drop: %+v (%v), want reset", d, d.Flags)
	}
	if r, f := s.Rate(1, col); r != 0 || f&FlagReset == 0 {
		t.Errorf("1 ms drop: rate %v %v, want 0 and reset", r, f)
	}
	if d := s.Delta(1, s.Col("port_0_rx_packets")); d.Value != 2 || d.Flags != 0 {
		t.Errorf("other column: %+v", d)
	}
	wantWarning(t, s, 3, "counter reset: port_0_rx_bytes went from 1048800 to 50 (a wrap would mean 4293918546 bytes in 1000000 ns, 4.29e+12 bytes/s")
	if d, err := s.DeltaWithin(col, 0, 2e18); err != nil || d.Flags&FlagReset == 0 {
		t.Errorf("DeltaWithin %+v %v, want the reset flag", d, err)
	}

	s = readDiag(t, head+"0, 1.000000000, 1.000000000, 1048800, 7\n1, 2.000000000, 2.000000000, 50, 9\n", nil)
	if d := s.Delta(1, col); d.Value != 4293918546 || d.Flags != FlagWrapped {
		t.Errorf("1 s drop: %+v (%v), want a wrap of 4293918546", d, d.Flags)
	}
	for _, w := range s.Warnings {
		if strings.Contains(w.Msg, "reset") {
			t.Errorf("1 s drop: %v", w)
		}
	}

	// No clock: a wrap must be under half the range.
	c := Counter{Name: "a", Width: 32}
	n := NewSeries(Source{}, ClockNone, []Counter{c})
	n.Append(0, 0, 0, []uint64{1048800})
	n.Append(1, 0, 0, []uint64{50})
	n.Append(2, 0, 0, []uint64{0xFFFFFFF0})
	n.Append(3, 0, 0, []uint64{0x10})
	if d := n.Delta(1, 0); d.Flags&FlagReset == 0 {
		t.Errorf("no clock, far drop: %v, want reset", d.Flags)
	}
	if d := n.Delta(3, 0); d.Value != 0x20 || d.Flags&FlagWrapped == 0 {
		t.Errorf("no clock, wrap near the top: %+v", d)
	}
}

// TestResetWarnedEverySource: the sidecar (32-bit hw_counters) and perfquery
// (saturating PortCounters) name the line of a reset too.
func TestResetWarnedEverySource(t *testing.T) {
	ss, err := ReadSidecar(strings.NewReader("# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,out_of_buffer,np_cnp_sent\n"+
		"0,1000000000,1000000000,1048800,5\n1,1001000000,1001000000,50,3\n"), "side.csv")
	if err != nil {
		t.Fatal(err)
	}
	wantWarning(t, ss[0], 4, "counter reset: out_of_buffer went from 1048800 to 50")
	wantWarning(t, ss[0], 4, "(and 1 more column(s))")
	if d := ss[0].Delta(1, 0); d.Flags&FlagReset == 0 {
		t.Errorf("sidecar delta %v", d.Flags)
	}
	ps, err := ReadPerfquery(strings.NewReader("# ts=1\n# Port counters: Lid 1 port 1\nPortXmitWait:....900\n# ts=2\n# Port counters: Lid 1 port 1\nPortXmitWait:....4\n"), "pq.txt")
	if err != nil {
		t.Fatal(err)
	}
	wantWarning(t, ps[0], 5, "counter reset: port_xmit_wait went from 900 to 4 (a saturating counter does not wrap)")
}

// TestRepeatedColumnRenamed: a header that names two columns alike keeps
// both, the second renamed with a warning on the header's line.
func TestRepeatedColumnRenamed(t *testing.T) {
	s := readDiag(t, "\nsample_id, sample_time_start, sample_time_end, a, b, a, a\n0, 1.0, 1.1, 1, 2, 3, 4\n", nil)
	var names []string
	for _, c := range s.Counters {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "a b a_2 a_3" {
		t.Errorf("columns %v, want a b a_2 a_3", names)
	}
	if s.Value(0, s.Col("a_2")) != 3 || s.Value(0, s.Col("a_3")) != 4 {
		t.Errorf("renamed columns lost their values: %v", s.Row(0))
	}
	wantWarning(t, s, 2, "column 6 repeats the name a of column 4; renamed a_2")

	f0 := "sample_id, data_id, sample_time, x, data_id, sample_time, x\n0, 0x1020000100000000, 1.0, 5, 0x1020000300000000, 1.0, 6\n"
	s = readDiag(t, f0, nil)
	if s.Col("x") != 0 || s.Col("x_2") != 1 {
		t.Errorf("format 0 columns %v", s.Counters)
	}
	wantWarning(t, s, 1, "column 7 repeats the name x of column 4; renamed x_2")

	ss, err := ReadSidecar(strings.NewReader("# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,a,a\n0,1,1,1,2\n"), "side.csv")
	if err != nil {
		t.Fatal(err)
	}
	if ss[0].Col("a_2") != 1 {
		t.Errorf("sidecar columns %v", ss[0].Counters)
	}
	wantWarning(t, ss[0], 2, "column 5 repeats the name a of column 4; renamed a_2")

	long := strings.Repeat("n", 5000)
	s = readDiag(t, "sample_id, sample_time_start, sample_time_end, "+long+"\n0, 1.0, 1.1, 1\n", nil)
	if len(s.Counters[0].Name) != maxNameBytes {
		t.Errorf("long name kept at %d bytes", len(s.Counters[0].Name))
	}
	wantWarning(t, s, 1, "column 4: name of 5000 bytes cut to its first 256")
}

// TestEndBeforeStartWarned: sample_time_end before sample_time_start is
// taken as older DOCA samples' missed carry (end moved 1 s, or 2^32 ns for
// FRC) with a warning naming the line; an end more than a carry early is
// set to the start. Past the first few, a count says how many rows.
func TestEndBeforeStartWarned(t *testing.T) {
	const head = "sample_id, sample_time_start, sample_time_end, a\n"
	s := readDiag(t, head+"0, 12.999999000, 12.000001000, 1\n1, 15.000000000, 12.500000000, 2\n", nil)
	if s.EndNs[0] != 13_000_001_000 {
		t.Errorf("end %d, want 13000001000 (one carry)", s.EndNs[0])
	}
	wantWarning(t, s, 2, `sample_time_end "12.000001000" before sample_time_start "12.999999000": taken as the missed carry of older DOCA samples, end moved 1 s later`)
	if s.EndNs[1] != s.StartNs[1] {
		t.Errorf("end %d, want the start %d", s.EndNs[1], s.StartNs[1])
	}
	wantWarning(t, s, 3, "by more than a carry (1 s); end set to start")

	s = readDiag(t, head+"0, 4294967000, 100, 1\n", nil)
	if s.EndNs[0] != 100+1<<32 {
		t.Errorf("FRC end %d", s.EndNs[0])
	}
	wantWarning(t, s, 2, "end moved 2^32 ns later")

	var b strings.Builder
	b.WriteString(head)
	for i := range 8 {
		fmt.Fprintf(&b, "%d, %d.900000000, %d.100000000, 1\n", i, 10+i, 10+i)
	}
	s = readDiag(t, b.String(), nil)
	n := 0
	for _, w := range s.Warnings {
		if strings.Contains(w.Msg, "missed carry") {
			n++
		}
	}
	if n != maxEndWarnings {
		t.Errorf("%d line warnings, want %d", n, maxEndWarnings)
	}
	wantWarning(t, s, 0, "8 rows in all had sample_time_end before sample_time_start")
}

// TestPerfqueryCutLastSnapshot: a perfquery loop's file whose last snapshot
// is cut short keeps the whole snapshots in one series and drops the cut one
// with a warning, whether the cut falls between counters or inside a value.
func TestPerfqueryCutLastSnapshot(t *testing.T) {
	var b strings.Builder
	for k := range 3 {
		fmt.Fprintf(&b, "# ts=%d\n# Port counters: Lid 1 port 1\nPortXmitData:....%d\nPortRcvData:....%d\nPortXmitWait:....%d\n", 1700000000+k, 1000*(k+1), 2000*(k+1), 123456)
	}
	whole := b.String()
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"between counters", whole + "# ts=1700000003\n# Port counters: Lid 1 port 1\nPortXmitData:....4000\n", 17, "last snapshot has only 1 of the 3 counters of the earlier ones: cut short, dropped"},
		{"inside a value", whole + "# ts=1700000003\n# Port counters: Lid 1 port 1\nPortXmitData:....4000\nPortRcvData:....8000\nPortXmitWait:....12", 17, "last snapshot ends without a newline (line 20): its last value may be cut short, dropped"},
		{"inside a name", whole + "# ts=1700000003\n# Port counters: Lid 1 port 1\nPortXmitData:....4000\nPortRcv", 17, "cut short, dropped"},
	} {
		ss, err := Read(strings.NewReader(tc.text), "perf.txt", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(ss) != 1 || ss[0].Len() != 3 {
			t.Fatalf("%s: %d series, first of %d samples; want 1 of 3", tc.name, len(ss), ss[0].Len())
		}
		if v := ss[0].Value(2, ss[0].Col(PortXmitWait)); v != 123456 {
			t.Errorf("%s: last port_xmit_wait %d", tc.name, v)
		}
		wantWarning(t, ss[0], tc.line, tc.want)
	}
	// A file that is one snapshot without a final newline is kept: there is
	// nothing else to use.
	ss, err := ReadPerfquery(strings.NewReader("# Port counters: Lid 1 port 1\nPortXmitWait:....12"), "one.txt")
	if err != nil || ss[0].Len() != 1 {
		t.Errorf("single snapshot without newline: %v", err)
	}
}

// wideDiagCSV writes a format 1 telemetry_diag CSV of cols counter columns
// and rows samples to dir.
func wideDiagCSV(t *testing.T, dir string, cols, rows int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("sample_id, sample_time_start, sample_time_end")
	for j := range cols {
		fmt.Fprintf(&b, ", port_%d_priority_%d_tx_bytes_%d", j%256, j%16, j)
	}
	for i := range rows {
		fmt.Fprintf(&b, "\n%d, %d.000000000, %d.000100000", i, 1700000000+i, 1700000000+i)
		for j := range cols {
			fmt.Fprintf(&b, ", %d", i*1000+j)
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("wide%d.csv", cols))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// heapUse runs f and reports the bytes it allocated in all and the growth
// of the live heap it leaves (what f's result keeps).
func heapUse(f func()) (total, live int64) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	total = int64(m1.TotalAlloc - m0.TotalAlloc)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	return total, int64(m1.HeapAlloc) - int64(m0.HeapAlloc)
}

// TestWideFileMemory: a telemetry CSV of 200,000 counter columns is refused
// on its header, naming the count and the limit, without reading its rows;
// one of maxColumns columns reads in bounded memory per column.
func TestWideFileMemory(t *testing.T) {
	dir := t.TempDir()
	wide := wideDiagCSV(t, dir, 200_000, 3)
	var err error
	total, _ := heapUse(func() { _, err = ReadFile(wide, nil) })
	if err == nil || !strings.Contains(err.Error(), wide+":1: 200000 counter columns; at most 65536 are read") {
		t.Fatalf("200k columns: %v", err)
	}
	// The header line (6.5 MB), its copies and its fields; not the rows.
	if total > 40<<20 {
		t.Errorf("refusing 200k columns allocated %d MB", total>>20)
	}
	t.Logf("200k columns refused after allocating %.1f MB (%d B/column)", float64(total)/(1<<20), total/200_000)

	path := wideDiagCSV(t, dir, maxColumns, 3)
	var ss []*Series
	total, live := heapUse(func() { ss, err = ReadFile(path, nil) })
	if err != nil || ss[0].Len() != 3 || len(ss[0].Counters) != maxColumns {
		t.Fatalf("%d columns: %v", maxColumns, err)
	}
	perCol, allocPerCol := live/maxColumns, total/maxColumns
	t.Logf("%d columns x 3 samples: %d B/column kept, %d B/column allocated while reading", maxColumns, perCol, allocPerCol)
	// A Counter (48 B), its name, an index entry and 3 values: ~150 B.
	if perCol > 256 {
		t.Errorf("%d bytes kept per column, want at most 256", perCol)
	}
	if allocPerCol > 2048 {
		t.Errorf("%d bytes allocated per column, want at most 2048", allocPerCol)
	}
	runtime.KeepAlive(ss)
}

// TestQuotedFields: a telemetry_diag CSV saved again by a spreadsheet
// (quoted fields, a comma inside a name) reads as the plain one; a quote
// left open skips its row with a warning naming the line.
func TestQuotedFields(t *testing.T) {
	text := "\"sample_id\",\"sample_time_start\",\"sample_time_end\",\"port_0_rx_bytes\",\"rx, \"\"all\"\"\"\n" +
		"0,\"1.000000000\",1.000100000,\"5\",7\n" +
		"1, 2.000000000, 2.000100000, 9, 8\n" +
		"2, \"3.0, 3.1, 10, 9\n"
	ss, err := Read(strings.NewReader(text), "quoted.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := ss[0]
	if s.Len() != 2 || s.Col("port_0_rx_bytes") != 0 || s.Col(`rx, "all"`) != 1 {
		t.Fatalf("%d samples, columns %v", s.Len(), s.Counters)
	}
	if s.Counters[0].DataID != 0x1020000100000000 || s.Value(0, 0) != 5 || s.Value(1, 1) != 8 || s.StartNs[0] != 1e9 {
		t.Errorf("values %v %v, start %d, data ID %s", s.Row(0), s.Row(1), s.StartNs[0], s.Counters[0].DataID)
	}
	wantWarning(t, s, 4, "quoted fields: extraneous or missing \" in quoted-field; row skipped")
}

// TestRenamedLongNamesStayBounded: renaming a repeated name of the maximum
// length keeps it within maxNameBytes.
func TestRenamedLongNamesStayBounded(t *testing.T) {
	long := strings.Repeat("n", 300)
	s := readDiag(t, "sample_id, sample_time_start, sample_time_end, "+long+", "+long+"\n0, 1.0, 1.1, 1, 2\n", nil)
	if n := s.Counters[1].Name; len(n) != maxNameBytes || !strings.HasSuffix(n, "_2") || s.Col(n) != 1 {
		t.Errorf("renamed long name %d bytes, ends %q", len(n), n[len(n)-4:])
	}
}

// A data-IDs JSON past its bound is refused naming the bound, before it is
// parsed (it was read whole, whatever its size).
func TestDataIDsBound(t *testing.T) {
	big := io.MultiReader(strings.NewReader(`{"data-ids": [`), strings.NewReader(strings.Repeat(" ", maxDataIDsBytes)), strings.NewReader(`]}`))
	_, err := ReadDataIDs(big, "ids.json")
	if err == nil || !strings.Contains(err.Error(), "ids.json") || !strings.Contains(err.Error(), "larger than 16 MB") {
		t.Errorf("error %v", err)
	}
}

// TestPerfqueryFieldWithoutName: "_:0" snake-cases to nothing; a column
// with an empty name could not be selected or exported, so the field is
// warned about and left out (found by FuzzPerfquery).
func TestPerfqueryFieldWithoutName(t *testing.T) {
	ss, err := ReadPerfquery(strings.NewReader("# Port counters: Lid 1 port 1\n_:....0\nPortXmitData:....5\n"), "pq")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || len(ss[0].Counters) != 1 || ss[0].Counters[0].Name != "port_xmit_data" {
		t.Fatalf("counters %+v", ss[0].Counters)
	}
	wantWarning(t, ss[0], 2, `field "_" has no letter or digit`)
}

// TestPerfqueryFieldNameGrowsPastBound: a field name within the bound can
// snake-case past it ("aB" is "a_b"), which no other reader's column names
// do; the field is warned about and left out.
func TestPerfqueryFieldNameGrowsPastBound(t *testing.T) {
	name := strings.Repeat("aB", maxNameBytes/2)
	ss, err := ReadPerfquery(strings.NewReader("# Port counters: Lid 1 port 1\n"+name+":....0\nPortXmitData:....5\n"), "pq")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || len(ss[0].Counters) != 1 || ss[0].Counters[0].Name != "port_xmit_data" {
		t.Fatalf("counters %+v", ss[0].Counters)
	}
	wantWarning(t, ss[0], 2, "makes a counter name of 384 bytes, longer than 256; ignored")
}

// TestPerfqueryDateOutsideNanoseconds: a date past what int64 ns hold
// refuses the file, naming its line, as a ts_ns past int64 does;
// time.UnixNano stamped "3000-01-01" before 1970 without a word.
func TestPerfqueryDateOutsideNanoseconds(t *testing.T) {
	for _, date := range []string{"# ts=3000-01-01T00:00:00Z", "2262-04-12 00:00:00+00:00", "Thu Jan  1 00:00:00 UTC 1600"} {
		_, err := ReadPerfquery(strings.NewReader(date+"\n# Port counters: Lid 1 port 1\nPortXmitData:....5\n"), "pq")
		if err == nil || !strings.Contains(err.Error(), "pq:1:") || !strings.Contains(err.Error(), "from 1678 to 2261") {
			t.Errorf("%s: %v", date, err)
		}
	}
	ss, err := ReadPerfquery(strings.NewReader("# ts=2262-04-11T00:00:00Z\n# Port counters: Lid 1 port 1\nPortXmitData:....5\n"), "pq")
	if err != nil || ss[0].StartNs[0] <= 0 {
		t.Errorf("2262-04-11: %v", err)
	}
}

package telemetry

import (
	"fmt"
	"strings"
	"testing"
)

func readDiag(t *testing.T, text string, opts *Options) *Series {
	t.Helper()
	s, err := ReadDiagCSV(strings.NewReader(text), "test.csv", opts)
	if err != nil {
		t.Fatalf("ReadDiagCSV: %v", err)
	}
	return s
}

func wantWarning(t *testing.T, s *Series, line int, substr string) {
	t.Helper()
	for _, w := range s.Warnings {
		if w.Line == line && strings.Contains(w.Msg, substr) {
			return
		}
	}
	t.Errorf("no warning at line %d containing %q; have %v", line, substr, s.Warnings)
}

func TestDiagFormat1Newer(t *testing.T) {
	s, err := ReadFile("testdata/diag_format1.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s[0]
	if d.Len() != 3 || len(d.Counters) != 4 {
		t.Fatalf("got %d samples x %d counters", d.Len(), len(d.Counters))
	}
	if d.Clock != ClockNICRealTime {
		t.Errorf("clock %v, want nic_rtc", d.Clock)
	}
	if d.StartNs[0] != 1700000000_000100000 || d.EndNs[0] != 1700000000_000100500 {
		t.Errorf("sample 0 times %d..%d", d.StartNs[0], d.EndNs[0])
	}
	c := d.Counters[d.Col("port_0_tx_bytes")]
	if c.DataID != 0x1140000100000000 || c.Unit != UnitBytes || c.Kind != KindCounter {
		t.Errorf("port_0_tx_bytes metadata %+v", c)
	}
	if got := d.Value(2, d.Col("port_0_tx_packets")); got != 80 {
		t.Errorf("value %d", got)
	}
	// sample_id 1 -> 3: one sample lost.
	if d.LostBefore(2) != 1 || d.Lost() != 1 {
		t.Errorf("lost %d/%d, want 1", d.LostBefore(2), d.Lost())
	}
	wantWarning(t, d, 4, "1 sample(s) lost")
	del := d.Delta(2, d.Col("port_0_rx_bytes"))
	if del.Value != 2000 || del.Flags&FlagGap == 0 {
		t.Errorf("delta across gap %+v", del)
	}
	if d.Meta["doca_format"] != "1or2" {
		t.Errorf("doca_format %q", d.Meta["doca_format"])
	}
}

func TestDiagOlderUnpaddedCompact(t *testing.T) {
	s, err := ReadFile("testdata/diag_format1_old.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s[0]
	// "12.5" is 12 s + 5 ns, "12.900" 12 s + 900 ns: the fraction is integer ns.
	if d.StartNs[0] != 12_000000005 || d.EndNs[0] != 12_000000900 {
		t.Errorf("times %d %d", d.StartNs[0], d.EndNs[0])
	}
	if d.Len() != 3 || d.Value(2, 1) != 600 {
		t.Errorf("len %d value %d", d.Len(), d.Value(2, 1))
	}
	if len(d.Warnings) != 0 {
		t.Errorf("warnings %v", d.Warnings)
	}
}

func TestDiagFormat0(t *testing.T) {
	s, err := ReadFile("testdata/diag_format0.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s[0]
	if d.Meta["doca_format"] != "0" || d.Len() != 2 || len(d.Counters) != 3 {
		t.Fatalf("meta %v len %d cols %d", d.Meta, d.Len(), len(d.Counters))
	}
	if d.Counters[1].Name != "global_icmc_hit" || d.Counters[1].DataID != 0x1180000200000000 {
		t.Errorf("col 1 %+v", d.Counters[1])
	}
	if d.StartNs[1] != 1700000000_000100100 || d.EndNs[1] != 1700000000_000100300 {
		t.Errorf("times %d %d", d.StartNs[1], d.EndNs[1])
	}
	if d.ValueNs[1*3+2] != 1700000000_000100300 {
		t.Errorf("per-value time %d", d.ValueNs[5])
	}
	if got := d.Delta(1, 2).Value; got != 20 {
		t.Errorf("icmc miss delta %d", got)
	}
	if d.SampleID[0] != 7 {
		t.Errorf("sample id %d", d.SampleID[0])
	}
}

func TestDiagFormat0NamesFromIDs(t *testing.T) {
	text := "sample_id, data_id, sample_time, , data_id, sample_time, \n" +
		"0, 0x1140000200000301, 10, 5, 0x11600006000a0201, 10, 7\n" +
		"1, 0x1140000200000301, 20, 9, 0x11600006000a0201, 20, 8"
	d := readDiag(t, text, &Options{DataIDs: []DataIDName{{Name: "custom_stall", ID: 0x11600006000a0201}}})
	if d.Counters[0].Name != "port_1_priority_3_tx_bytes" {
		t.Errorf("decoded name %q", d.Counters[0].Name)
	}
	if d.Counters[1].Name != "custom_stall" || d.Counters[1].Unit != UnitNs {
		t.Errorf("JSON name %+v", d.Counters[1])
	}
	if d.Clock != ClockNICFree {
		t.Errorf("clock %v", d.Clock)
	}
}

func TestDiagFormat2WrapAndSampleIDWrap(t *testing.T) {
	s, err := ReadFile("testdata/diag_format2_frc.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := s[0]
	if d.Clock != ClockNICFree {
		t.Errorf("clock %v", d.Clock)
	}
	if d.SampleID[2] != 1<<32 {
		t.Errorf("unwrapped sample id %d", d.SampleID[2])
	}
	if d.Lost() != 0 || len(d.Warnings) != 0 {
		t.Errorf("lost %d warnings %v", d.Lost(), d.Warnings)
	}
	col := d.Col("port_1_tx_bytes")
	if d.Counters[col].Width != 32 {
		t.Fatalf("width %d", d.Counters[col].Width)
	}
	del := d.Delta(2, col)
	if del.Value != 206 || del.Flags != FlagWrapped {
		t.Errorf("wrapped delta %+v", del)
	}
	w, err := d.DeltaWithin(col, 0, 1<<62)
	if err != nil || w.Value != 290+206 {
		t.Errorf("window %+v %v", w, err)
	}
	if d.Counters[d.Col("tx_transport_done_due_to_cc_deschedule_events")].DataID != 0x1100000200000000 {
		t.Errorf("deschedule ID not recovered from name")
	}
	// Forcing format 1 keeps 64-bit arithmetic: the backwards step is a reset.
	s1, err := ReadFile("testdata/diag_format2_frc.csv", &Options{DiagFormat: DiagFormat1})
	if err != nil {
		t.Fatal(err)
	}
	if del := s1[0].Delta(2, col); del.Flags&FlagReset == 0 {
		t.Errorf("forced format 1 delta %+v", del)
	}
}

func TestDiagClearOnSample(t *testing.T) {
	text := "sample_id, sample_time_start, sample_time_end, global_icmc_hit, pcie_link_read_latency_max_ns\n" +
		"0, 1.000000000, 1.000000100, 50, 900\n" +
		"1, 2.000000000, 2.000000100, 30, 700\n" +
		"2, 3.000000000, 3.000000100, 40, 800\n"
	d := readDiag(t, text, &Options{ClearOnSample: true})
	if !d.Counters[0].ClearOnSample || d.Counters[1].ClearOnSample {
		t.Fatalf("clear flags %+v", d.Counters)
	}
	if d.Counters[1].Kind != KindGauge {
		t.Errorf("latency max should be a statistic")
	}
	if del := d.Delta(1, 0); del.Value != 30 || del.Flags != 0 {
		t.Errorf("clear-on-sample delta %+v", del)
	}
	w, _ := d.DeltaWithin(0, 0, 10e9)
	if w.Value != 70 {
		t.Errorf("window sum %d, want 30+40", w.Value)
	}
	if r, f := d.Rate(2, 0); r != 40 || f != 0 {
		t.Errorf("rate %v %v", r, f)
	}
	if del := d.Delta(2, 1); del.Value != 800 || del.Flags != FlagGauge {
		t.Errorf("gauge %+v", del)
	}
}

func TestDiagEndCarry(t *testing.T) {
	// Older samples did not carry the low word's wrap into the end's high word.
	text := "sample_id, sample_time_start, sample_time_end, global_icmc_hit\n" +
		"0, 5.999999000, 5.000000500, 1\n"
	d := readDiag(t, text, nil)
	if d.EndNs[0] != 6_000000500 {
		t.Errorf("end %d", d.EndNs[0])
	}
}

func TestDiagBadInput(t *testing.T) {
	text := "sample_id, sample_time_start, sample_time_end, a_bytes, b\n" +
		"0, 1.0, 1.1, 10, 20\n" +
		"1, 2.0, 2.1, 11\n" + // missing column
		"2, 3.0, 3.1, 12, 22, 99\n" + // extra column
		"3, 4.0, 4.1, x, 23\n" + // bad value
		"4, 0.5, 0.6, 14, 24\n" + // time goes backwards
		"5, 6, 6, 15, 25\n" + // FRC in an RTC file
		"six, 7.0, 7.1, 16, 26\n" +
		"7, 8.0, 8.1, 17, 27"
	d := readDiag(t, text, nil)
	if d.Len() != 3 {
		t.Errorf("kept %d samples, want 3", d.Len())
	}
	wantWarning(t, d, 3, "missing columns")
	wantWarning(t, d, 4, "extra columns")
	wantWarning(t, d, 5, `a_bytes): value "x"`)
	wantWarning(t, d, 6, "timestamp goes backwards")
	wantWarning(t, d, 7, "mixes RTC")
	wantWarning(t, d, 8, `sample_id "six"`)
	for _, w := range d.Warnings {
		if !strings.HasPrefix(w.String(), "test.csv:") {
			t.Errorf("warning without file: %s", w)
		}
	}

	bad0 := "sample_id, data_id, sample_time, x\n0, 0xZZ, 1, 2\n1, 0x1180000100000000, 2, 3\n2, 0x1180000200000000, 3, 4"
	d = readDiag(t, bad0, nil)
	wantWarning(t, d, 2, "data ID")
	wantWarning(t, d, 4, "where earlier rows have")
	if d.Len() != 1 {
		t.Errorf("format 0 kept %d", d.Len())
	}

	for name, text := range map[string]string{
		"empty":       "",
		"blank":       "\n\n  \n",
		"short":       "sample_id, sample_time_start\n",
		"bad triples": "sample_id, data_id, sample_time, a, data_id\n",
	} {
		_, err := ReadDiagCSV(strings.NewReader(text), "x.csv", nil)
		if err == nil || !strings.Contains(err.Error(), "x.csv") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	d = readDiag(t, "sample_id, sample_time_start, sample_time_end, a\n", nil)
	if d.Len() != 0 || len(d.Warnings) != 1 {
		t.Errorf("header only: %d %v", d.Len(), d.Warnings)
	}
}

func TestDiagHeaderless(t *testing.T) {
	text := "0, 1.0, 1.1, 10, 20\n1, 2.0, 2.1, 11, 21\n"
	d := readDiag(t, text, &Options{DataIDs: []DataIDName{{"port_0_rx_bytes", 0x1020000100000000}, {"port_0_tx_bytes", 0x1140000100000000}}})
	if d.Len() != 2 || d.Counters[1].Name != "port_0_tx_bytes" || d.Counters[1].DataID != 0x1140000100000000 {
		t.Errorf("headerless with JSON: %d %+v", d.Len(), d.Counters)
	}
	d = readDiag(t, text, nil)
	if d.Counters[0].Name != "value_0" {
		t.Errorf("headerless names %+v", d.Counters)
	}
}

func TestReadDataIDs(t *testing.T) {
	ids, err := ReadDataIDsFile("testdata/data_ids.json")
	if err != nil || len(ids) != 4 || ids[3].ID != 0x1140000300000000 {
		t.Fatalf("%v %v", ids, err)
	}
	s, err := ReadFile("testdata/diag_format1.csv", &Options{DataIDs: ids})
	if err != nil || s[0].Counters[2].DataID != 0x1020000300000000 {
		t.Errorf("%v %+v", err, s[0].Counters)
	}
	ok := `{"data-ids":[{"name":"n","data_id":1311768467463790320}]}`
	if ids, err := ReadDataIDs(strings.NewReader(ok), "j"); err != nil || ids[0].ID != 1311768467463790320 {
		t.Errorf("numeric id: %v %v", ids, err)
	}
	for _, bad := range []string{`{`, `{}`, `{"data-ids":[{"data_id":"0x1"}]}`, `{"data-ids":[{"name":"a"}]}`,
		`{"data-ids":[{"name":"a","data_id":"zz"}]}`, `{"data-ids":[{"name":"a","data_id":true}]}`} {
		if _, err := ReadDataIDs(strings.NewReader(bad), "ids.json"); err == nil || !strings.Contains(err.Error(), "ids.json") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// Errors name the line of the entry at fault, or of the broken syntax.
	for _, tc := range []struct{ doc, want string }{
		{"{\"data-ids\": [\n  {\"name\": \"a\", \"data_id\": \"0x1\"},\n  {\"name\": \"b\",\n   \"data_id\": \"0xZZ\"}\n]}",
			`ids.json:3: data-IDs JSON entry 1 (b): data ID "0xZZ"`},
		{"{\"data-ids\": [\n  {\"name\": \"a\", \"data_id\": \"0x1\"},\n  7\n]}", "ids.json:3: data-IDs JSON entry 1: "},
		{"{\"data-ids\": [\n  {\"name\": \"a\", \"data_id\": \"0x1\"}\n  {\"name\": \"b\"}\n]}", "ids.json:3: data-IDs JSON: invalid character '{'"},
		{"{\"data-ids\": [\n  {\"name\": \"a\", \"data_id\": \"0x1\"},\n", "ids.json:3: data-IDs JSON: unexpected end of JSON input"},
	} {
		_, err := ReadDataIDs(strings.NewReader(tc.doc), "ids.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestDiagLongLines(t *testing.T) {
	// 6000 columns: lines longer than the reader's 64 KiB buffer.
	const n = 6000
	var b strings.Builder
	b.WriteString("sample_id, sample_time_start, sample_time_end")
	for j := 0; j < n; j++ {
		fmt.Fprintf(&b, ", counter_number_%d_bytes", j)
	}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(&b, "\n%d, %d.000000000, %d.000000100", i, i+1, i+1)
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, ", %d", 1000000000+i*j)
		}
	}
	d := readDiag(t, b.String(), nil)
	if d.Len() != 3 || len(d.Counters) != n || d.Value(2, n-1) != 1000000000+2*(n-1) {
		t.Fatalf("%d x %d", d.Len(), len(d.Counters))
	}
	if d.Counters[5].Unit != UnitBytes {
		t.Errorf("unit from name suffix: %v", d.Counters[5].Unit)
	}
	huge := "sample_id, a, b, c\n" + strings.Repeat("9", maxLineBytes+10)
	if _, err := ReadDiagCSV(strings.NewReader(huge), "huge.csv", nil); err == nil || !strings.Contains(err.Error(), "huge.csv:2") {
		t.Errorf("overlong line: %v", err)
	}
}

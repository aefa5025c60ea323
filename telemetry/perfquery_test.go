package telemetry

import (
	"strings"
	"testing"
)

func TestPerfqueryFile(t *testing.T) {
	s, err := ReadFile("testdata/perfquery.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 {
		t.Fatalf("%d series", len(s))
	}
	g := s[0]
	if g.Source != (Source{"lid:1", 1}) || g.Clock != ClockHost || g.Len() != 2 {
		t.Fatalf("source %v clock %v len %d", g.Source, g.Clock, g.Len())
	}
	if g.Col("port_select") >= 0 || g.Col("counter_select") >= 0 {
		t.Errorf("settings kept as counters")
	}
	wait := g.Col(PortXmitWait)
	if wait < 0 || !g.Counters[wait].Saturating || g.Counters[wait].Width != 32 {
		t.Fatalf("port_xmit_wait %+v", g.Counters)
	}
	d := g.Delta(1, wait)
	if d.Value != 5000 || d.StartNs != 1700000000e9 || d.EndNs != 1700000001e9 {
		t.Errorf("wait delta %+v", d)
	}
	if r, _ := g.Rate(1, g.Col(PortXmitData)); r != 1_000_000 {
		t.Errorf("xmit rate %v bytes/s", r)
	}
	if len(g.Warnings) != 0 {
		t.Errorf("warnings %v", g.Warnings)
	}
}

func TestPerfqueryExtended(t *testing.T) {
	s, err := ReadFile("testdata/perfquery_x.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := s[0]
	if g.Meta["perfquery_extended"] != "true" || g.Source.Device != "lid:3" {
		t.Errorf("meta %v source %v", g.Meta, g.Source)
	}
	c := g.Counters[g.Col(PortXmitWait)]
	if c.Width != 64 || c.Saturating {
		t.Errorf("-x port_xmit_wait %+v", c)
	}
	if g.Col("unicast_xmit_packets") < 0 {
		t.Errorf("unicast missing: %+v", g.Counters)
	}
	d := g.Delta(1, g.Col(PortXmitWait))
	if d.Value != 1000 || d.Seconds() != 0.5 {
		t.Errorf("%+v", d)
	}
}

func TestPerfqueryTimestampsAndPorts(t *testing.T) {
	snap := func(port int, data, wait string) string {
		return "# Port counters: Lid 5 port " + string(rune('0'+port)) + " (CapMask: 0x1400)\n" +
			"PortXmitData:....................." + data + "\n" +
			"PortXmitWait:....................." + wait + "\n"
	}
	text := "# ts=100.25\n" + snap(1, "10", "0") + "# ts=150\n" + snap(2, "7", "1") +
		"200.5\n" + // date +%s.%N style, end of previous...
		"# ts_ns=201000000000\n" + // ...and start of the next
		snap(1, "20", "4") +
		"2024-01-02T03:04:05,5+00:00\n" + snap(1, "30", "4294967295") +
		"# just a comment\n" +
		"garbage line\n" +
		"PortXmitData:....................abc\n" +
		"1704164646\n"
	s, err := ReadPerfquery(strings.NewReader(text), "pq.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Len() != 3 || s[1].Len() != 1 {
		t.Fatalf("series %d", len(s))
	}
	p1 := s[0]
	if p1.StartNs[0] != 100_250000000 || p1.StartNs[1] != 201e9 || p1.StartNs[2] != 1704164645_500000000 {
		t.Errorf("starts %v", p1.StartNs)
	}
	// The snapshot before "200.5" is port 2's; the last timestamp ends the last snapshot.
	if s[1].EndNs[0] != 200_500000000 || p1.EndNs[2] != 1704164646e9 {
		t.Errorf("ends %v %v", s[1].EndNs, p1.EndNs)
	}
	if d := p1.Delta(2, p1.Col(PortXmitWait)); d.Flags != FlagSaturated {
		t.Errorf("saturated wait %+v", d)
	}
	if s[1].StartNs[0] != 150e9 {
		t.Errorf("port 2 start %v", s[1].StartNs)
	}
	wantWarning(t, p1, 19, "not a perfquery line")
	wantWarning(t, p1, 20, `"abc"`)
}

func TestPerfqueryNoTimestamps(t *testing.T) {
	text := "PortXmitWait:.....5\nPortXmitWait:.....9\n# Port counters: Lid 1 port 1\nPortXmitWait:.....11\n" +
		"# Port counters: Lid 1 port 1\nPortXmitWait:.....12\nPortRcvData:......3\n"
	s, err := ReadPerfquery(strings.NewReader(text), "pq")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 3 {
		t.Fatalf("%d series", len(s))
	}
	if s[0].Clock != ClockNone || s[0].Value(0, 0) != 9 {
		t.Errorf("implicit snapshot %+v", s[0])
	}
	wantWarning(t, s[0], 1, "without a \"# Port counters\" line")
	wantWarning(t, s[0], 2, "repeated")
	d := s[1].Delta(0, 0)
	if d.Flags&FlagNoPrev == 0 {
		t.Errorf("%+v", d)
	}
	wantWarning(t, s[1], 5, "different set of counters")
	for _, bad := range []string{"", "\n\n", "# only comments\n", "hello\n"} {
		if _, err := ReadPerfquery(strings.NewReader(bad), "pq.txt"); err == nil || !strings.Contains(err.Error(), "pq.txt") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A # ts_ns= line whose value is no time (past int64, as 999...9, or
// negative, or not a number) refuses the file naming the line, as any
// timestamp that cannot be read right does; it was passed over as a
// comment, which left the snapshot untimed without a word.
func TestPerfqueryBadTimestampLine(t *testing.T) {
	for _, bad := range []string{"99999999999999999999999", "-5", "12abc"} {
		text := "# ts_ns=" + bad + "\n# Port counters: Lid 5 port 1\nPortXmitData:.....10\n"
		_, err := ReadPerfquery(strings.NewReader(text), "pq.txt")
		if err == nil || !strings.Contains(err.Error(), "pq.txt:1") || !strings.Contains(err.Error(), "want whole nanoseconds since the Unix epoch") {
			t.Errorf("# ts_ns=%s: %v", bad, err)
		}
	}
}

package telemetry

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// pqSnapshot is one block of perfquery output as it prints it (-x: the
// extended counters).
func pqSnapshot(extended bool, xmitData uint64) string {
	if extended {
		return fmt.Sprintf(`# Port extended counters: Lid 3 port 1 (CapMask: 0x5A00)
PortSelect:......................1
CounterSelect:...................0x0000
PortXmitData:....................%d
PortRcvData:.....................2000
PortXmitPkts:....................10
PortRcvPkts:.....................20
`, xmitData)
	}
	return fmt.Sprintf(`# Port counters: Lid 3 port 1 (CapMask: 0x5A00)
PortSelect:......................1
CounterSelect:...................0x0000
SymbolErrorCounter:..............0
PortXmitData:....................%d
PortRcvData:.....................2000
PortXmitPkts:....................10
PortRcvPkts:.....................20
PortXmitWait:....................300
`, xmitData)
}

// TestPerfqueryDateForms: a loop of `date; perfquery` (or -x) blocks, with
// date in each form people save it, stamps each snapshot (issue 24: plain
// date output was refused).
func TestPerfqueryDateForms(t *testing.T) {
	t0 := time.Date(2026, 11, 6, 9, 10, 11, 0, time.UTC)
	forms := map[string]func(time.Time) string{
		"date":           func(tm time.Time) string { return tm.Format("Mon Jan _2 15:04:05 MST 2006") },
		"date (2-digit)": func(tm time.Time) string { return tm.Format("Mon Jan 02 15:04:05 MST 2006") },
		"date en_US":     func(tm time.Time) string { return tm.Format("Mon 02 Jan 2006 03:04:05 PM MST") },
		"date en_GB":     func(tm time.Time) string { return tm.Format("Mon _2 Jan 15:04:05 MST 2006") },
		"date 24h":       func(tm time.Time) string { return tm.Format("Mon 02 Jan 2006 15:04:05 MST") },
		"date -R":        func(tm time.Time) string { return tm.Format("Mon, 02 Jan 2006 15:04:05 -0700") },
		"date -Iseconds": func(tm time.Time) string { return tm.Format("2006-01-02T15:04:05-07:00") },
		"date -Ins": func(tm time.Time) string {
			return strings.Replace(tm.Format("2006-01-02T15:04:05.000000000-07:00"), ".", ",", 1)
		},
		"date --rfc-3339": func(tm time.Time) string { return tm.Format("2006-01-02 15:04:05.999999999-07:00") },
		"date +%s.%N":     func(tm time.Time) string { return fmt.Sprintf("%d.%09d", tm.Unix(), tm.Nanosecond()) },
		"# ts_ns=":        func(tm time.Time) string { return fmt.Sprintf("# ts_ns=%d", tm.UnixNano()) },
	}
	east := time.FixedZone("", 5*3600+1800)
	for name, form := range forms {
		for _, extended := range []bool{false, true} {
			var b strings.Builder
			for i := range 3 {
				tm := t0.Add(time.Duration(i) * time.Second)
				if name == "date -R" || name == "date -Iseconds" {
					tm = tm.In(east) // an offset said is an offset taken
				}
				fmt.Fprintf(&b, "%s\n%s", form(tm), pqSnapshot(extended, uint64(1000+i*500)))
			}
			s, err := Read(strings.NewReader(b.String()), "perf.txt", nil)
			if err != nil {
				t.Errorf("%s (-x %v): %v\n%s", name, extended, err, b.String())
				continue
			}
			g := s[0]
			if g.Clock != ClockHost || g.Len() != 3 || g.Source != (Source{"lid:3", 1}) || len(g.Warnings) != 0 {
				t.Errorf("%s (-x %v): clock %v, %d samples, %v, warnings %v", name, extended, g.Clock, g.Len(), g.Source, g.Warnings)
				continue
			}
			for i := range 3 {
				if want := t0.Add(time.Duration(i) * time.Second).UnixNano(); g.StartNs[i] != want {
					t.Errorf("%s (-x %v): sample %d at %d, want %d", name, extended, i, g.StartNs[i], want)
				}
			}
			if r, _ := g.Rate(1, g.Col(PortXmitData)); r != 2000 { // 500 words of 4 bytes a second
				t.Errorf("%s (-x %v): xmit rate %v bytes/s", name, extended, r)
			}
		}
	}
}

// TestPerfqueryDateZoneUnknown: a zone name this machine cannot place
// refuses the file instead of reading the hour wrong.
func TestPerfqueryDateZoneUnknown(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	text := "Thu Nov 26 09:10:11 CET 2026\n" + pqSnapshot(false, 1)
	_, err := Read(strings.NewReader(text), "perf.txt", nil)
	if err == nil || !strings.Contains(err.Error(), "perf.txt:1") || !strings.Contains(err.Error(), "names zone CET") {
		t.Errorf("CET on a UTC machine: %v", err)
	}
	// The machine's own zone by name is placed.
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no zone database: %v", err)
	}
	time.Local = berlin
	s, err := Read(strings.NewReader(text), "perf.txt", nil)
	if err != nil || s[0].StartNs[0] != time.Date(2026, 11, 26, 8, 10, 11, 0, time.UTC).UnixNano() {
		t.Errorf("CET in Berlin: %v %v", s, err)
	}
}

// TestPerfqueryDateZoneless: a date that names no zone (date '+%F %T',
// with a 'T' or a fraction, or asctime's form) is read as the machine's
// local time, with one warning for the file that says so.
func TestPerfqueryDateZoneless(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.FixedZone("XST", -3*3600)
	t0 := time.Date(2026, 11, 6, 9, 10, 11, 500_000_000, time.Local)
	for name, layout := range map[string]string{
		"date '+%F %T.%N'": "2006-01-02 15:04:05.000000000",
		"date +%FT%T":      "2006-01-02T15:04:05",
		"asctime":          "Mon Jan _2 15:04:05 2006",
	} {
		var b strings.Builder
		for i := range 3 {
			fmt.Fprintf(&b, "%s\n%s", t0.Add(time.Duration(i)*time.Second).Format(layout), pqSnapshot(true, uint64(1000+i*500)))
		}
		s, err := Read(strings.NewReader(b.String()), "perf.txt", nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		g := s[0]
		if g.Clock != ClockHost || g.Len() != 3 || len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0].Msg, "names no zone: taken as this machine's local time (XST)") {
			t.Errorf("%s: clock %v, %d samples, warnings %v", name, g.Clock, g.Len(), g.Warnings)
			continue
		}
		want := t0.UnixNano()
		if layout != "2006-01-02 15:04:05.000000000" {
			want = t0.Truncate(time.Second).UnixNano()
		}
		if g.StartNs[0] != want || g.StartNs[2]-g.StartNs[0] != 2e9 {
			t.Errorf("%s: samples at %d .. %d, want %d and 2 s later", name, g.StartNs[0], g.StartNs[2], want)
		}
	}
}

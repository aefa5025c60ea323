package telemetry

import (
	"math"
	"testing"
)

func TestCounterDelta(t *testing.T) {
	c32 := Counter{Width: 32}
	c64 := Counter{Width: 64}
	sat := Counter{Width: 32, Saturating: true}
	clr := Counter{Width: 32, ClearOnSample: true}
	gauge := Counter{Width: 64, Kind: KindGauge}
	c16 := Counter{Width: 16}
	for _, tc := range []struct {
		name      string
		c         Counter
		prev, cur uint64
		want      uint64
		flags     DeltaFlags
	}{
		{"32 up", c32, 10, 25, 15, 0},
		{"32 wrap", c32, 0xFFFFFFF0, 0x10, 0x20, FlagWrapped},
		{"32 wrap to zero", c32, 0xFFFFFFFF, 0, 1, FlagWrapped},
		{"16 wrap", c16, 0xFFFE, 3, 5, FlagWrapped},
		{"32 declared but wider values go back", c32, 1 << 40, 5, 5, FlagReset},
		{"64 up", c64, 1 << 40, 1<<40 + 7, 7, 0},
		{"64 wrap", c64, math.MaxUint64 - 4, 5, 10, FlagWrapped},
		{"64 reset", c64, 1 << 40, 12, 12, FlagReset},
		{"sat up", sat, 5, 9, 4, 0},
		{"sat stuck", sat, 0xFFFFFF00, 0xFFFFFFFF, 0xFF, FlagSaturated},
		{"sat reset", sat, 0xFFFFFFFF, 3, 3, FlagReset},
		{"clear", clr, 1000, 7, 7, 0},
		{"gauge", gauge, 1000, 7, 7, FlagGauge},
		{"equal", c32, 5, 5, 0, 0},
	} {
		got, f := tc.c.Delta(tc.prev, tc.cur)
		if got != tc.want || f != tc.flags {
			t.Errorf("%s: Delta(%d, %d) = %d %v, want %d %v", tc.name, tc.prev, tc.cur, got, f, tc.want, tc.flags)
		}
	}
}

func TestUnitsAndRate(t *testing.T) {
	s := NewSeries(Source{"mlx5_0", 1}, ClockHost, []Counter{
		SysfsCounter("counters", PortXmitData),
		SysfsCounter("counters", PortXmitWait),
		SysfsCounter("hw_counters", "lifespan"),
	})
	s.Append(0, 1e9, 1e9, []uint64{1000, 0xFFFFFFF0, 12})
	s.Append(1, 2e9, 2e9, []uint64{1250, 0xFFFFFFFF, 12})
	s.Append(2, 2.5e9, 2.5e9, []uint64{1500, 0xFFFFFFFF, 12})
	if r, f := s.Rate(1, 0); r != 1000 || f != 0 {
		t.Errorf("xmit_data rate %v bytes/s %v, want 1000 (250 words)", r, f)
	}
	if b, u := s.Counters[0].ToBase(250); b != 1000 || u != UnitBytes {
		t.Errorf("ToBase %d %v", b, u)
	}
	if b, _ := s.Counters[0].ToBase(math.MaxUint64 / 2); b != math.MaxUint64 {
		t.Errorf("ToBase does not saturate: %d", b)
	}
	if d := s.Delta(1, 1); d.Value != 15 || d.Flags != FlagSaturated {
		t.Errorf("port_xmit_wait saturating %+v", d)
	}
	if _, f := s.Rate(1, 2); f != FlagGauge {
		t.Errorf("gauge rate flags %v", f)
	}
	if u, f := s.Counters[2].Unit.Base(); u != UnitNs || f != 1e6 {
		t.Errorf("ms base %v %d", u, f)
	}
	if d := s.Delta(0, 0); d.Flags&FlagNoPrev == 0 {
		t.Errorf("first delta %+v", d)
	}
	if r, f := s.Rate(2, 0); r != 2000 || f != 0 {
		t.Errorf("rate over half second %v %v", r, f)
	}
	ds := s.Deltas(0, nil)
	if len(ds) != 3 || ds[2].Value != 250 || ds[2].StartNs != 2e9 || ds[2].EndNs != 2.5e9 {
		t.Errorf("Deltas %+v", ds)
	}
	if FlagWrapped.String() != "wrapped" || (FlagGap|FlagNoTime).String() != "gap|no_time" || DeltaFlags(0).String() != "ok" {
		t.Errorf("flag strings")
	}
}

func TestWindows(t *testing.T) {
	s := NewSeries(Source{}, ClockHost, []Counter{{Name: "w", Width: 32}})
	vals := []uint64{0xFFFFFF00, 0xFFFFFFF0, 0x10, 0x20, 0xFFFFFF00, 0x5}
	for i, v := range vals {
		s.Append(uint64(i), int64(i)*1e9, int64(i)*1e9+10, []uint64{v})
	}
	// Two wraps inside the window, each honoured.
	d, err := s.DeltaWithin(0, 0, 10e9)
	want := uint64(0xF0 + 0x20 + 0x10 + (0xFFFFFF00 - 0x20) + 0x105)
	if err != nil || d.Value != want || d.Flags != FlagWrapped || d.StartNs != 5 || d.EndNs != 5e9+5 {
		t.Errorf("within %+v %v, want %d", d, err, want)
	}
	d, err = s.DeltaWithin(0, 1e9, 3.5e9)
	if err != nil || d.StartNs != 1e9+5 || d.EndNs != 3e9+5 || d.Value != 0x30 {
		t.Errorf("within part %+v %v", d, err)
	}
	d, err = s.DeltaCovering(0, 1.5e9, 2.5e9)
	if err != nil || d.StartNs != 1e9+5 || d.EndNs != 3e9+5 || d.Value != 0x30 {
		t.Errorf("covering %+v %v", d, err)
	}
	if _, err := s.DeltaCovering(0, -1, 2e9); err == nil {
		t.Errorf("covering before the series should fail")
	}
	if _, err := s.DeltaWithin(0, 2.1e9, 2.9e9); err == nil {
		t.Errorf("empty window should fail")
	}
	// Missing values are skipped.
	s.SetMissing(3, 0)
	if s.Valid(3, 0) || !s.Valid(2, 0) {
		t.Fatalf("Valid")
	}
	d = s.Delta(4, 0)
	if d.Value != 0xFFFFFF00-0x10 || d.Flags&FlagMissing == 0 || d.StartNs != 2e9+5 {
		t.Errorf("delta over missing %+v", d)
	}
	if d := s.Delta(3, 0); d.Flags&FlagMissing == 0 || d.Value != 0 {
		t.Errorf("delta at missing %+v", d)
	}
	d, _ = s.DeltaWithin(0, 0, 10e9)
	if d.Value != want || d.Flags&FlagMissing == 0 {
		t.Errorf("window over missing %+v", d)
	}
	// Unsorted times fall back to a scan.
	u := NewSeries(Source{}, ClockHost, []Counter{{Name: "x", Width: 64}})
	u.Append(0, 5, 5, []uint64{1})
	u.Append(1, 3, 3, []uint64{4})
	u.Append(2, 9, 9, []uint64{10})
	if d, err := u.DeltaWithin(0, 0, 100); err != nil || d.Value != 9 {
		t.Errorf("unsorted %+v %v", d, err)
	}
	if d, err := u.DeltaCovering(0, 4, 9); err != nil || d.Value != 6 || d.StartNs != 3 {
		t.Errorf("unsorted covering %+v %v", d, err)
	}
	// No clock: deltas but no rate.
	n := NewSeries(Source{}, ClockNone, []Counter{{Name: "x", Width: 64}})
	n.Append(0, 0, 0, []uint64{1})
	n.Append(1, 0, 0, []uint64{3})
	if d := n.Delta(1, 0); d.Value != 2 || d.Flags != FlagNoTime {
		t.Errorf("no clock %+v", d)
	}
	if r, f := n.Rate(1, 0); r != 0 || f&FlagNoTime == 0 {
		t.Errorf("no clock rate %v %v", r, f)
	}
}

func TestSeriesBasics(t *testing.T) {
	s := NewSeries(Source{"mlx5_1", 2}, ClockHost, []Counter{{Name: "a"}, {Name: "b"}})
	s.Append(3, 10, 20, []uint64{1, 2})
	smp := s.Sample(0)
	if smp.SampleID != 3 || smp.TimeNs() != 15 || smp.Values[1] != 2 || smp.Source.String() != "mlx5_1/2" {
		t.Errorf("sample %+v", smp)
	}
	if s.Col("b") != 1 || s.Col("zz") != -1 {
		t.Errorf("Col")
	}
	s.Append(4, 30, 30, []uint64{5, 6})
	if c := s.Column(1, nil); len(c) != 2 || c[0] != 2 || c[1] != 6 {
		t.Errorf("Column %v", c)
	}
	if ts := s.Times(nil); len(ts) != 2 || ts[0] != 15 || ts[1] != 30 {
		t.Errorf("Times %v", ts)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Append with wrong arity should panic")
		}
	}()
	s.Append(5, 0, 0, []uint64{1})
}

func TestParseHelpers(t *testing.T) {
	for _, s := range []string{"host", "nic_rtc", "nic_frc", "none"} {
		c, err := ParseClock(s)
		if err != nil || c.String() != s {
			t.Errorf("clock %s", s)
		}
	}
	if _, err := ParseClock("x"); err == nil {
		t.Errorf("bad clock")
	}
	for _, s := range []string{"mlx5_0/1", "lid:4/2", "unknown"} {
		src, err := ParseSource(s)
		if err != nil || src.String() != s {
			t.Errorf("source %s: %v %v", s, src, err)
		}
	}
	for _, s := range []string{"mlx5_0", "a/b", "a/-1"} {
		if _, err := ParseSource(s); err == nil {
			t.Errorf("source %q should fail", s)
		}
	}
	if ns, ok := parseSecondsDecimal([]byte("1700000000.5")); !ok || ns != 1700000000_500000000 {
		t.Errorf("decimal seconds %d", ns)
	}
	if ns, rtc, ok := parseDiagTime([]byte("12.5")); !ok || !rtc || ns != 12_000000005 {
		t.Errorf("diag time %d", ns)
	}
	if _, _, ok := parseDiagTime([]byte("1.1000000000")); ok {
		t.Errorf("ns fraction >= 1e9 accepted")
	}
	if v, ok := parseUint([]byte("18446744073709551615")); !ok || v != math.MaxUint64 {
		t.Errorf("max uint")
	}
	if _, ok := parseUint([]byte("18446744073709551616")); ok {
		t.Errorf("overflow accepted")
	}
	if v, ok := parseInt64([]byte("-5")); !ok || v != -5 {
		t.Errorf("int64")
	}
	if _, ok := parseInt64([]byte("0x5")); ok {
		t.Errorf("hex int64 accepted")
	}
}

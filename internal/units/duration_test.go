package units

import (
	"math"
	"testing"
	"time"
)

func TestParseDurationNs(t *testing.T) {
	for in, want := range map[string]int64{"500ns": 500, "1us": 1000, "2.5us": 2500, " 1 ms": 1_000_000, "1s": 1e9, "42": 42, "1µs": 1000, "0": 0,
		"-1.5ms": -1_500_000, "+250us": 250_000, "5m": 300e9, "1h": 3600e9, "1m30s": 90e9, "1h2m3.5s": 3723_500_000_000, "1e3us": 1e6,
		"86400.123456789s": 86_400_123_456_789, "10ms": 10_000_000, "4611686018.427387903s": maxDurationNs, "1e-3us": 1, "1E2ms": 1e8} {
		got, err := ParseDurationNs(in)
		if err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-", "us", "1.5ns", "1d", "NaNus", "NaN", "Inf", "1e30s", "--1s", "1s-2s", "0x10", "1_000", "1..2us", "ms5", "1 h 2", "1e999us", "1e-999s", "1.2.3us", "4611686018.427387904s"} {
		if v, err := ParseDurationNs(bad); err == nil {
			t.Errorf("%q accepted as %d", bad, v)
		}
	}
}

// TestParseDurationNsAsGo: what Go's time.ParseDuration reads (the parser
// ibcap's and correlate's flags used), this reads the same.
func TestParseDurationNsAsGo(t *testing.T) {
	for _, s := range []string{"30s", "5m", "1h", "-1.5ms", "250us", "1h30m", "2h45m10.5s", "100ms", "1.25us", "3µs"} {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ParseDurationNs(s); err != nil || got != int64(d) {
			t.Errorf("%q: %d %v, Go reads %d", s, got, err, int64(d))
		}
	}
}

func TestFormatNs(t *testing.T) {
	for ns, want := range map[int64]string{750: "750ns", 2000: "2us", 2074: "2.074us", 320_000: "320us", 1_500_000: "1.5ms", -3000: "-3us", 5_004_841_000: "5.00484s",
		999_999: "999.999us", 1_000_300: "1.0003ms", 1_000_700: "1.0007ms", 221_867_160: "221.867ms", 999_999_999: "1s",
		-1_000_300_000: "-1.0003s", 86_400_123_456_789: "86400.123s"} {
		if got := FormatNs(ns); got != want {
			t.Errorf("FormatNs(%d) = %q, want %q", ns, got, want)
		}
	}
	for ns, want := range map[int64]string{1_500_000: "+1.5ms", -250_000: "-250us", 0: "+0ns", 49_828_125: "+49.828125ms", -31_250: "-31.25us",
		-7: "-7ns", 5_000_000_001: "+5.000000001s", math.MinInt64: "-9223372036.854775808s"} {
		if got := FormatSignedNs(ns); got != want {
			t.Errorf("FormatSignedNs(%d) = %q, want %q", ns, got, want)
		}
		if back, err := ParseDurationNs(want); ns != math.MinInt64 && (err != nil || back != ns) {
			t.Errorf("%q reads back as %d, %v", want, back, err)
		}
	}
}

// checkRoundTrip: FormatNs's text reads back as the same duration, exactly
// below a millisecond and to its six significant digits above.
func checkRoundTrip(t *testing.T, ns int64) {
	s := FormatNs(ns)
	back, err := ParseDurationNs(s)
	if err != nil {
		t.Fatalf("FormatNs(%d) = %q does not parse: %v", ns, s, err)
	}
	if a := math.Abs(float64(ns)); a < 1e6 && back != ns || math.Abs(float64(back-ns)) > a*5e-6 {
		t.Fatalf("FormatNs(%d) = %q reads back as %d", ns, s, back)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, ns := range []int64{0, 1, -1, 999, 1000, 1001, 999_999, 1_000_000, 1_000_300, 999_999_999, 5_004_841_000, 86_400_123_456_789, maxDurationNs, -maxDurationNs} {
		checkRoundTrip(t, ns)
	}
	for ns := int64(1); ns < 1<<62; ns = ns*3 + 7 {
		checkRoundTrip(t, ns)
		checkRoundTrip(t, -ns)
	}
}

func FuzzParseDurationNs(f *testing.F) {
	for _, s := range []string{"500ns", "2.5us", "-1.5ms", "1m30s", "42", "1e3us", " 1 ms", "1µs", "1h2m3.5s", "1.5ns", "NaNus"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseDurationNs(s)
		if err != nil {
			return
		}
		if ns > maxDurationNs || ns < -maxDurationNs {
			t.Fatalf("%q parsed as %d, beyond the bound", s, ns)
		}
		checkRoundTrip(t, ns)
		if back, err := ParseDurationNs(FormatSignedNs(ns)); err != nil || back != ns {
			t.Fatalf("FormatSignedNs(%d) = %q reads back as %d, %v", ns, FormatSignedNs(ns), back, err)
		}
	})
}

func TestDurationFlag(t *testing.T) {
	var d time.Duration
	v := (*DurationNs)(&d)
	if err := v.Set("1m30s"); err != nil || d != 90*time.Second || v.String() != "90s" {
		t.Errorf("Set 1m30s: %v %v %q", d, err, v.String())
	}
	if err := v.Set("soon"); err == nil || d != 90*time.Second {
		t.Errorf("Set soon: %v, left %v", err, d)
	}
	if DurationNs(0).String() != "0" || v.Type() != "duration" {
		t.Error("zero or type")
	}
}

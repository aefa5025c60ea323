package units

import "testing"

// TestFormatBitRate: rates from an idle flow's to a 400G link's print with
// three significant digits, a unit, and no exponent.
func TestFormatBitRate(t *testing.T) {
	for gbps, want := range map[float64]string{5.57e-8: "55.7 b/s", 1e-6: "1.00 kb/s", 0.000139: "139 kb/s", 0.0123: "12.3 Mb/s",
		0.9997: "1.00 Gb/s", 4.9: "4.90 Gb/s", 400: "400 Gb/s", 0: "0 Gb/s", 1e-10: "0.100 b/s"} {
		if got := FormatBitRate(gbps * 1e9); got != want {
			t.Errorf("FormatBitRate(%g) = %q, want %q", gbps*1e9, got, want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 512: "512 B", 1024: "1.00 KiB", 1536 << 10: "1.50 MiB", 2 << 30: "2.00 GiB", 1<<20 - 1: "1.00 MiB", 5 << 40: "5.00 TiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", b, got, want)
		}
	}
}

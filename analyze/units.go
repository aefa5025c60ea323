package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// unitNs maps the duration suffixes accepted everywhere to nanoseconds.
var unitNs = []struct {
	suffix string
	ns     float64
}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// ParseDurationNs parses a duration such as "500ns", "1us", "2.5us", "1ms"
// or "1s" into integer nanoseconds; a bare number is nanoseconds.
func ParseDurationNs(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range unitNs {
		if strings.HasSuffix(t, u.suffix) && !(u.suffix == "s" && strings.HasSuffix(t, "ns")) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.ns
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("duration %q: want a number with ns, us, ms or s", s)
	}
	ns := v * mult
	if ns > math.MaxInt64/2 || ns < math.MinInt64/2 {
		return 0, fmt.Errorf("duration %q is out of range", s)
	}
	if r := math.Round(ns); math.Abs(ns-r) > 1e-6 {
		return 0, fmt.Errorf("duration %q is not a whole number of nanoseconds", s)
	}
	return int64(math.Round(ns)), nil
}

// FormatNs writes a duration in the largest unit that keeps it short and
// exact to three decimals: "2us", "2.074us", "320us", "1.5ms", "750ns".
func FormatNs(ns int64) string {
	a := ns
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1e9:
		return trimFloat(float64(ns)/1e9) + "s"
	case a >= 1e6:
		return trimFloat(float64(ns)/1e6) + "ms"
	case a >= 1e3:
		return trimFloat(float64(ns)/1e3) + "us"
	}
	return strconv.FormatInt(ns, 10) + "ns"
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

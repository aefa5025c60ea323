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

// formatDigits is how many significant digits FormatNs keeps of a value of
// a millisecond or more (below that it is exact to the nanosecond), so that
// values apart by a ten-thousandth still print apart: "1.0003ms".
const formatDigits = 6

// formatUnits are FormatNs's units from a microsecond up.
var formatUnits = [...]struct {
	name string
	ns   float64
}{{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}}

// FormatNs writes a duration in the largest unit that keeps it short:
// exact to the nanosecond below a millisecond, at least three decimals and
// six significant digits above: "750ns", "2us", "2.074us", "320us",
// "1.5ms", "1.0003ms", "5.00484s".
func FormatNs(ns int64) string {
	a := ns
	if a < 0 {
		a = -a
	}
	if a < 1e3 {
		return strconv.FormatInt(ns, 10) + "ns"
	}
	u := 0
	for u+1 < len(formatUnits) && float64(a) >= formatUnits[u+1].ns {
		u++
	}
	for {
		v := float64(ns) / formatUnits[u].ns
		exact := int(math.Round(math.Log10(formatUnits[u].ns)))
		digits := int(math.Floor(math.Log10(math.Abs(v)))) + 1
		s := strconv.FormatFloat(v, 'f', max(3, min(exact, formatDigits-digits)), 64)
		// 999.9999996ms rounds to 1000ms: write 1s instead.
		if f, _ := strconv.ParseFloat(s, 64); math.Abs(f) >= 1000 && u+1 < len(formatUnits) {
			u++
			continue
		}
		s = strings.TrimRight(s, "0")
		return strings.TrimSuffix(s, ".") + formatUnits[u].name
	}
}

package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// durationUnits are the duration suffixes accepted. "m" is tried after
// "ms" so that "5ms" is not five minutes and an "s".
var durationUnits = []struct {
	suffix string
	ns     int64
}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}}

// maxDurationNs bounds a parsed duration (about 146 years) so that sums and
// differences of two of them cannot overflow an int64.
const maxDurationNs = math.MaxInt64 / 2

// maxExponentDigits bounds a number's exponent ("1e3us"), which exact
// arithmetic would otherwise turn into a number of any size.
const maxExponentDigits = 2

// ParseDurationNs parses a duration into integer nanoseconds: a number with
// a unit ("500ns", "2.5us", "1µs", "-1.5ms", "1s", "5m", "1h"), several
// such terms ("1m30s", as Go's time.ParseDuration), or a bare number of
// nanoseconds ("42"). Spaces are ignored; a sign may lead. The arithmetic
// is exact: a value that is not a whole number of nanoseconds ("1.5ns"),
// or is beyond about 146 years, is refused.
func ParseDurationNs(s string) (int64, error) {
	t := strings.Join(strings.Fields(s), "")
	neg := strings.HasPrefix(t, "-")
	if neg || strings.HasPrefix(t, "+") {
		t = t[1:]
	}
	bad := func() (int64, error) {
		return 0, fmt.Errorf("duration %q: want a number and a unit (ns, us, ms, s, m, h), e.g. 2.5us or 1m30s, or a number of ns", s)
	}
	if t == "" {
		return bad()
	}
	total := new(big.Rat)
	if numberLen(t) == len(t) { // a bare number is nanoseconds
		if _, ok := total.SetString(t); !ok {
			return bad()
		}
	} else {
		for t != "" {
			n := numberLen(t)
			if n == 0 {
				return bad()
			}
			v, ok := new(big.Rat).SetString(t[:n])
			if !ok {
				return bad()
			}
			t = t[n:]
			var unitNs int64
			for _, u := range durationUnits {
				if strings.HasPrefix(t, u.suffix) {
					t, unitNs = t[len(u.suffix):], u.ns
					break
				}
			}
			if unitNs == 0 {
				return bad()
			}
			total.Add(total, v.Mul(v, new(big.Rat).SetInt64(unitNs)))
		}
	}
	if !total.IsInt() {
		return 0, fmt.Errorf("duration %q is not a whole number of nanoseconds", s)
	}
	if !total.Num().IsInt64() || total.Num().Int64() > maxDurationNs {
		return 0, fmt.Errorf("duration %q is out of range (at most %s)", s, FormatNs(maxDurationNs))
	}
	if neg {
		return -total.Num().Int64(), nil
	}
	return total.Num().Int64(), nil
}

// numberLen is the length of the unsigned decimal number (digits, one
// point, an exponent of at most maxExponentDigits digits) that t starts
// with; 0 if it starts with none.
func numberLen(t string) int {
	i, digits, points := 0, 0, 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		if t[i] == '.' {
			points++
		} else {
			digits++
		}
		i++
	}
	if digits == 0 || points > 1 {
		return 0
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		k := j
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
		}
		if k == j || k-j > maxExponentDigits {
			return 0
		}
		i = k
	}
	return i
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
// "1.5ms", "1.0003ms", "5.00484s". ParseDurationNs reads it back.
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

// DurationNs is a duration flag (a pflag.Value) held in nanoseconds, read
// by ParseDurationNs and shown by FormatNs. Point it at a time.Duration
// with (*units.DurationNs)(&d).
type DurationNs int64

// Set parses s.
func (d *DurationNs) Set(s string) error {
	v, err := ParseDurationNs(s)
	if err != nil {
		return err
	}
	*d = DurationNs(v)
	return nil
}

// String writes the duration; 0 is "0", which help text leaves unsaid.
func (d DurationNs) String() string {
	if d == 0 {
		return "0"
	}
	return FormatNs(int64(d))
}

// Type names the value in help text.
func (DurationNs) Type() string { return "duration" }

// FormatSignedNs writes an offset exactly, to the nanosecond, with its sign
// always written, so that it can be given back as a flag: "+1.5ms",
// "-49.828125ms", "+0ns".
func FormatSignedNs(ns int64) string {
	sign, a := "+", uint64(ns)
	if ns < 0 {
		sign, a = "-", -a
	}
	if a < 1e3 {
		return sign + strconv.FormatUint(a, 10) + "ns"
	}
	u := 0
	for u+1 < len(formatUnits) && float64(a) >= formatUnits[u+1].ns {
		u++
	}
	per := uint64(formatUnits[u].ns)
	s := sign + strconv.FormatUint(a/per, 10)
	if frac := a % per; frac != 0 {
		digits := len(strconv.FormatUint(per, 10)) - 1
		f := strconv.FormatUint(frac, 10)
		s += "." + strings.TrimRight(strings.Repeat("0", digits-len(f))+f, "0")
	}
	return s + formatUnits[u].name
}

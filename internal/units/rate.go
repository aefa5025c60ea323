package units

import (
	"math"
	"strconv"
)

// scale is a unit of a formatter: its name and its size in the base unit.
type scale struct {
	name string
	size float64
}

var (
	bitRateScales = []scale{{"b/s", 1}, {"kb/s", 1e3}, {"Mb/s", 1e6}, {"Gb/s", 1e9}}
	byteScales    = []scale{{"B", 1}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}}
)

// FormatBitRate writes a rate in bits per second with three significant
// digits and the unit that keeps it short, never an exponent: "4.88 Gb/s",
// "139 kb/s", "55.7 b/s". Zero, negative and infinite rates are written in
// Gb/s as they are.
func FormatBitRate(bitsPerSecond float64) string {
	if !(bitsPerSecond > 0) || math.IsInf(bitsPerSecond, 0) {
		return strconv.FormatFloat(bitsPerSecond/1e9, 'g', 3, 64) + " Gb/s"
	}
	return formatScaled(bitsPerSecond, bitRateScales)
}

// FormatBytes writes a size in binary units with three significant digits:
// "512 B", "1.50 MiB", "2.00 GiB".
func FormatBytes(bytes uint64) string {
	if bytes < 1<<10 {
		return strconv.FormatUint(bytes, 10) + " B"
	}
	return formatScaled(float64(bytes), byteScales)
}

// formatScaled writes v (> 0) in the largest of scales (smallest first)
// that it reaches, with three significant digits.
func formatScaled(v float64, scales []scale) string {
	u := 0
	for u+1 < len(scales) && v >= scales[u+1].size {
		u++
	}
	// Three significant digits, at most three before the point: 999.7 kb/s
	// rounds up to 1.00 Mb/s, 1023.9 KiB to 1.00 MiB.
	x, _ := strconv.ParseFloat(strconv.FormatFloat(v/scales[u].size, 'g', 3, 64), 64)
	if u+1 < len(scales) && (x >= 1000 || x*scales[u].size >= scales[u+1].size) {
		u++
		x = v / scales[u].size
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(x))))
	return strconv.FormatFloat(x, 'f', decimals, 64) + " " + scales[u].name
}

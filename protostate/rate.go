package protostate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a link's speed as every command's --rate names it, in one
// syntax: an InfiniBand lane speed at a width ("HDR", "4x EDR", "EDR 4x",
// "4xNDR") or a data rate in Gb/s, as Ethernet speeds are given ("40G",
// "100GbE", "25 Gb/s", "2.5", "800M"). Either way DataGbps is what packet
// bytes cross the link at.
type Rate struct {
	// IB is the lane speed when the rate was an IB name; its Name is ""
	// for a rate given in Gb/s.
	IB LinkRate
	// Lanes is the IB width (1, 2, 4, 8, 12); 0 for a rate in Gb/s.
	Lanes int
	// DataGbps is the link's data rate, Gb/s.
	DataGbps float64
}

// RateSyntax is the one description of --rate's syntax, for help texts
// and error messages.
const RateSyntax = "an IB speed with an optional width (HDR, 4x EDR; 4x unless given) or a data rate in Gb/s (40G, 100GbE, 25 Gb/s, 2.5)"

// maxRateGbps bounds a rate given in Gb/s: ten times XDR 12x and more.
const maxRateGbps = 100_000

// ParseRate reads s in the syntax above; an IB name without a width gets
// defaultLanes.
func ParseRate(s string, defaultLanes int) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return Rate{}, fmt.Errorf("empty link rate: want %s", RateSyntax)
	}
	if g, ok := parseGbps(strings.ReplaceAll(t, " ", "")); ok {
		if !(g >= 1e-9 && g <= maxRateGbps) {
			return Rate{}, fmt.Errorf("link rate %q: want a data rate from 1 b/s to %d Gb/s", s, maxRateGbps)
		}
		return Rate{DataGbps: g}, nil
	}
	name, lanes, err := splitWidth(t)
	if err != nil {
		return Rate{}, fmt.Errorf("link rate %q: %w", s, err)
	}
	r, err := ParseLinkRate(name)
	if err != nil {
		return Rate{}, fmt.Errorf("unknown link rate %q: want %s; IB speeds are %s", s, RateSyntax, linkRateNames())
	}
	if lanes == 0 {
		lanes = defaultLanes
	}
	if !ValidLinkWidth(lanes) {
		return Rate{}, fmt.Errorf("link rate %q: width %dx: want 1x, 2x, 4x, 8x or 12x", s, lanes)
	}
	return Rate{IB: r, Lanes: lanes, DataGbps: r.DataGbps(lanes)}, nil
}

// parseGbps reads a number of Gb/s with an optional unit: g, gb/s, gbps,
// gbit/s, gbe (Gb/s), m, mb/s, mbps, mbe (Mb/s), t, tb/s (Tb/s).
func parseGbps(t string) (float64, bool) {
	scale := 1.0
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"gbit/s", 1}, {"gb/s", 1}, {"gbps", 1}, {"gbe", 1}, {"g", 1}, {"mbit/s", 1e-3}, {"mb/s", 1e-3}, {"mbps", 1e-3}, {"mbe", 1e-3}, {"m", 1e-3}, {"tb/s", 1e3}, {"t", 1e3}} {
		if strings.HasSuffix(t, u.suffix) {
			t, scale = strings.TrimSuffix(t, u.suffix), u.scale
			break
		}
	}
	g, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(g) || math.IsInf(g, 0) {
		return 0, false
	}
	return g * scale, true
}

// splitWidth takes the width off an IB rate: "4x edr", "edr 4x", "4xedr",
// "edr4x"; lanes is 0 when none is given.
func splitWidth(t string) (name string, lanes int, err error) {
	fields := strings.Fields(t)
	switch len(fields) {
	case 1:
		name = fields[0]
		if i := strings.IndexByte(name, 'x'); i > 0 && isDigits(name[:i]) { // 4xedr
			lanes, _ = strconv.Atoi(name[:i])
			return name[i+1:], lanes, nil
		}
		for _, w := range []string{"12x", "8x", "4x", "2x", "1x"} { // edr4x
			if base, ok := strings.CutSuffix(name, w); ok && base != "" {
				if _, err := ParseLinkRate(base); err == nil {
					lanes, _ = strconv.Atoi(strings.TrimSuffix(w, "x"))
					return base, lanes, nil
				}
			}
		}
		return name, 0, nil
	case 2:
		for i, f := range fields {
			if strings.HasSuffix(f, "x") && isDigits(strings.TrimSuffix(f, "x")) {
				lanes, _ = strconv.Atoi(strings.TrimSuffix(f, "x"))
				return fields[1-i], lanes, nil
			}
		}
	}
	return "", 0, fmt.Errorf("want %s", RateSyntax)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != "" && len(s) <= 3
}

// RateOfBitsPerSec is the rate a capture records (pcapng if_speed, bits
// per second) as a data rate; 0 or more than the bound is no rate.
func RateOfBitsPerSec(bitsPerSec uint64) (Rate, bool) {
	if bitsPerSec == 0 || bitsPerSec > maxRateGbps*1e9 {
		return Rate{}, false
	}
	return Rate{DataGbps: float64(bitsPerSec) / 1e9}, true
}

// AsIB is r as an IB speed and width: r itself when it is one, else the
// speed at 4x (then 1x, 2x, 8x, 12x) whose data rate is r's to the bit
// per second (200 Gb/s: HDR 4x), for what needs symbol times.
func (r Rate) AsIB() (Rate, bool) {
	if r.IB.Name != "" {
		return r, true
	}
	for _, lanes := range []int{4, 1, 2, 8, 12} {
		for _, ib := range linkRates {
			if math.Abs(ib.DataGbps(lanes)-r.DataGbps)*1e9 < 1 {
				return Rate{IB: ib, Lanes: lanes, DataGbps: ib.DataGbps(lanes)}, true
			}
		}
	}
	return r, false
}

// BitsPerSec is the data rate in bits per second, rounded.
func (r Rate) BitsPerSec() int64 { return int64(r.DataGbps*1e9 + 0.5) }

// NsPerByte is the time one byte takes on the link, ns.
func (r Rate) NsPerByte() float64 { return 8 / r.DataGbps }

// String names the rate: "HDR 4x (PAM4 256b/257b RS(544,514), 200 Gb/s
// data)" or "40 Gb/s".
func (r Rate) String() string {
	if r.IB.Name == "" {
		return strconv.FormatFloat(r.DataGbps, 'g', 6, 64) + " Gb/s"
	}
	return fmt.Sprintf("%s %dx (%s, %.6g Gb/s data)", r.IB.Name, r.Lanes, r.IB.Encoding, r.DataGbps)
}

package protostate

import (
	"fmt"
	"strconv"
	"strings"
)

// LinkRate is one InfiniBand lane speed as the IBA names it. The data rate
// is what is left of the signalling rate once the line code (and, from HDR
// on, the FEC) has taken its share: the rate at which packet bytes cross
// one lane.
type LinkRate struct {
	Name            string  // "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"
	LaneGbps        float64 // signalling rate per lane, Gb/s (line bits, before decoding)
	Encoding        string  // line code: "8b/10b", "64b/66b", "PAM4 256b/257b RS(544,514)"
	DataGbpsPerLane float64 // packet data rate per lane, Gb/s
	// SymbolTimeNs is the time one lane takes to carry one 8-bit data
	// symbol (one byte), in ns: the 10-bit code group of 8b/10b (4 ns at
	// SDR), or a byte's share of a 66-bit block (64b/66b) or of an
	// RS-FEC codeword (PAM4). IB counters such as PortXmitWait tick in
	// multiples of it.
	SymbolTimeNs float64
}

// Line codes: the data bits each carries per line bit, as a fraction.
// PAM4 carries 256b/257b transcoded data in RS(544,514) codewords, so
// 53.125 Gb/s of signalling yields exactly 50 Gb/s of data.
const (
	enc8b10b = "8b/10b"
	enc64b66 = "64b/66b"
	encPAM4  = "PAM4 256b/257b RS(544,514)"
)

var encodingFraction = map[string][2]float64{
	enc8b10b: {8, 10},
	enc64b66: {64, 66},
	encPAM4:  {256 * 514, 257 * 544},
}

// linkRates is the IBA table of lane speeds, slowest first.
var linkRates = []LinkRate{
	newLinkRate("SDR", 2.5, enc8b10b),
	newLinkRate("DDR", 5, enc8b10b),
	newLinkRate("QDR", 10, enc8b10b),
	newLinkRate("FDR10", 10.3125, enc64b66),
	newLinkRate("FDR", 14.0625, enc64b66),
	newLinkRate("EDR", 25.78125, enc64b66),
	newLinkRate("HDR", 53.125, encPAM4),
	newLinkRate("NDR", 106.25, encPAM4),
	newLinkRate("XDR", 212.5, encPAM4),
}

// newLinkRate derives the data rate by multiplying before dividing, so that
// every rate whose data rate is a whole number of Gb/s (all but FDR) gets it
// exactly: 25.78125 * 64 / 66 is 25, 53.125 * 131584 / 139808 is 50.
func newLinkRate(name string, laneGbps float64, enc string) LinkRate {
	f := encodingFraction[enc]
	data := laneGbps * f[0] / f[1]
	return LinkRate{Name: name, LaneGbps: laneGbps, Encoding: enc, DataGbpsPerLane: data, SymbolTimeNs: 8 / data}
}

// LinkRates returns every known lane speed, slowest first.
func LinkRates() []LinkRate { return append([]LinkRate(nil), linkRates...) }

// linkRateNames lists the names for error messages.
func linkRateNames() string {
	names := make([]string, len(linkRates))
	for i, r := range linkRates {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// ParseLinkRate looks a lane speed up by name ("SDR" .. "XDR", any case).
func ParseLinkRate(name string) (LinkRate, error) {
	for _, r := range linkRates {
		if strings.EqualFold(r.Name, strings.TrimSpace(name)) {
			return r, nil
		}
	}
	return LinkRate{}, fmt.Errorf("unknown link rate %q: want one of %s", name, linkRateNames())
}

// ValidLinkWidth reports whether a link of lanes lanes exists: 1x, 2x, 4x,
// 8x or 12x.
func ValidLinkWidth(lanes int) bool {
	return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 12
}

// ParseLinkWidth parses a link width "1x", "2x", "4x", "8x" or "12x" (the
// x optional, any case) into lanes.
func ParseLinkWidth(s string) (lanes int, err error) {
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "x")
	n, err := strconv.Atoi(t)
	if err != nil || !ValidLinkWidth(n) {
		return 0, fmt.Errorf("unknown link width %q: want 1x, 2x, 4x, 8x or 12x", s)
	}
	return n, nil
}

// DataGbps returns the packet data rate of a link of the given lanes, Gb/s.
func (r LinkRate) DataGbps(lanes int) float64 { return r.DataGbpsPerLane * float64(lanes) }

package analyze

import (
	"fmt"
	"strconv"
	"strings"
)

// LinkRate is one InfiniBand lane speed. The data rate is what is left of
// the signalling rate once the line code (and, from HDR on, the FEC) has
// taken its share; it is the rate at which packet bytes cross the lane.
type LinkRate struct {
	Name            string  // "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR"
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

// linkRates is the IBA table of lane speeds. PAM4 (HDR, NDR) carries
// 256b/257b transcoded data in RS(544,514) codewords, so 53.125 Gb/s of
// signalling yields exactly 50 Gb/s of data (106.25 yields 100).
var linkRates = []LinkRate{
	rate("SDR", 2.5, "8b/10b", 8.0/10),
	rate("DDR", 5, "8b/10b", 8.0/10),
	rate("QDR", 10, "8b/10b", 8.0/10),
	rate("FDR", 14.0625, "64b/66b", 64.0/66),
	rate("EDR", 25.78125, "64b/66b", 64.0/66),
	rate("HDR", 53.125, "PAM4 256b/257b RS(544,514)", 514.0/544*256/257),
	rate("NDR", 106.25, "PAM4 256b/257b RS(544,514)", 514.0/544*256/257),
}

func rate(name string, laneGbps float64, enc string, efficiency float64) LinkRate {
	data := laneGbps * efficiency
	return LinkRate{Name: name, LaneGbps: laneGbps, Encoding: enc, DataGbpsPerLane: data, SymbolTimeNs: 8 / data}
}

// LinkRates returns every known lane speed, slowest first.
func LinkRates() []LinkRate { return append([]LinkRate(nil), linkRates...) }

// ParseLinkRate looks a lane speed up by name ("SDR" .. "NDR", any case).
func ParseLinkRate(name string) (LinkRate, error) {
	for _, r := range linkRates {
		if strings.EqualFold(r.Name, strings.TrimSpace(name)) {
			return r, nil
		}
	}
	return LinkRate{}, fmt.Errorf("unknown link rate %q: want one of SDR, DDR, QDR, FDR, EDR, HDR, NDR", name)
}

// ParseLinkWidth parses a link width "1x", "4x", "8x" or "12x" into lanes.
func ParseLinkWidth(s string) (lanes int, err error) {
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "x")
	n, err := strconv.Atoi(t)
	if err != nil || (n != 1 && n != 4 && n != 8 && n != 12) {
		return 0, fmt.Errorf("unknown link width %q: want 1x, 4x, 8x or 12x", s)
	}
	return n, nil
}

// DataGbps returns the packet data rate of a link of the given lanes, Gb/s.
func (r LinkRate) DataGbps(lanes int) float64 { return r.DataGbpsPerLane * float64(lanes) }

// ExpectedIPDNs returns the time a packet of wireBytes takes to cross a link
// of this rate and width back to back, in ns: the smallest IPD the link
// allows. wireBytes is the packet as IB counts it (LRH through VCRC).
func ExpectedIPDNs(wireBytes int, rate LinkRate, lanes int) float64 {
	return ExpectedIPDNsAtGbps(wireBytes, rate.DataGbps(lanes))
}

// ExpectedIPDNsAtGbps is ExpectedIPDNs for a data rate given in Gb/s.
func ExpectedIPDNsAtGbps(wireBytes int, dataGbps float64) float64 {
	if dataGbps <= 0 {
		return 0
	}
	return float64(wireBytes) * 8 / dataGbps
}

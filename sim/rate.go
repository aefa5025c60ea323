package sim

import (
	"fmt"
	"strings"
)

// Rate is one InfiniBand link speed, per lane. The simulator keeps its own
// small table because package sim may not import analyze (which has the
// fuller LinkRate); the figures are the same.
type Rate struct {
	Name            string
	LaneGbps        float64 // signalling rate per lane, Gb/s
	Encoding        string  // "8b/10b", "64b/66b" or "PAM4"
	DataGbpsPerLane float64 // payload bits per second per lane after encoding, Gb/s
}

// rates: SDR, DDR, QDR use 8b/10b; FDR and EDR 64b/66b; HDR and NDR are PAM4
// with 64b/66b plus FEC, whose data rates are the nominal 50 and 100 Gb/s.
var rates = []Rate{
	{"SDR", 2.5, "8b/10b", 2},
	{"DDR", 5, "8b/10b", 4},
	{"QDR", 10, "8b/10b", 8},
	{"FDR", 14.0625, "64b/66b", 14.0625 * 64 / 66},
	{"EDR", 25.78125, "64b/66b", 25},
	{"HDR", 53.125, "PAM4", 50},
	{"NDR", 106.25, "PAM4", 100},
}

// ParseRate returns the rate named "SDR".."NDR" (case-insensitive).
func ParseRate(name string) (Rate, error) {
	for _, r := range rates {
		if strings.EqualFold(r.Name, name) {
			return r, nil
		}
	}
	return Rate{}, fmt.Errorf("unknown link rate %q (want SDR, DDR, QDR, FDR, EDR, HDR or NDR)", name)
}

// SymbolNs is the time one 8-bit symbol takes on one lane, in ns: 4 ns at
// SDR (10 line bits at 2.5 Gb/s), and the same byte time on one lane for the
// faster rates. PortXmitWait ticks are quoted as multiples of it.
func (r Rate) SymbolNs() float64 { return 8 / r.DataGbpsPerLane }

// psPerByte is the serialisation time of one byte over lanes lanes, in ps.
func (r Rate) psPerByte(lanes int) float64 { return 8000 / (r.DataGbpsPerLane * float64(lanes)) }

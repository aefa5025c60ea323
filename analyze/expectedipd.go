package analyze

import "github.com/ibscope/ibscope/protostate"

// ExpectedIPDNs returns the time a packet of wireBytes takes to cross a link
// of this rate and width back to back, in ns: the smallest IPD the link
// allows. wireBytes is the packet as IB counts it (LRH through VCRC).
func ExpectedIPDNs(wireBytes int, rate protostate.LinkRate, lanes int) float64 {
	return expectedIPDNsAtGbps(wireBytes, rate.DataGbps(lanes))
}

// expectedIPDNsAtGbps is ExpectedIPDNs for a data rate given in Gb/s.
func expectedIPDNsAtGbps(wireBytes int, dataGbps float64) float64 {
	if dataGbps <= 0 {
		return 0
	}
	return float64(wireBytes) * 8 / dataGbps
}

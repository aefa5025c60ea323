package metrics

import "math/rand/v2"

// sampleWindowNs is the length of a sampling window: while sampling, every
// packet of one window in N is analysed (PSN sequences, gaps and NAKs as
// without sampling), the others' not at all. Inter-packet gaps longer than
// a window are not seen while sampling.
const sampleWindowNs = 10_000_000

// maxSampleEvery bounds N: at 6 million packets a second (a 200 Gb/s port
// of 4 KB frames) and the default SamplePps, N is 120.
const maxSampleEvery = 1024

// DefaultSamplePps is the packet rate up to which every packet is analysed
// (Config.SamplePps): at the ~150 ns an analysed packet costs a busy
// capture, 50,000 packets a second are under 1 % of a core however busy
// the port (bench/metrics.sh).
const DefaultSamplePps = 50_000

// sampler decides, from the packets' own timestamps (no clock read), which
// packets the flow metrics analyse. Time is cut into periods of N windows
// of sampleWindowNs; the packets of one window of each period, picked at
// random, are analysed. N is set at each period's start from the packet
// rate of the period before: 1 (every packet: a period is one window) up
// to maxPps, and the rate over maxPps, rounded up, above it, so that about
// maxPps packets a second are analysed however busy the port. Each
// analysed packet counts N times: every window is analysed with
// probability 1/N, so the counts are unbiased estimates even of traffic
// that comes in bursts (a window at a fixed place would count a burst
// that starts each period N times, or never).
type sampler struct {
	maxPps                 int64 // 0: every packet, always
	every                  uint64
	start, end             int64 // the period, ns
	analyseFrom, analyseTo int64 // its analysed window
	packets                int64 // packets of the period so far
	started, sampledBefore bool  // sampledBefore: the period before left packets out
	rnd                    rand.PCG
}

// newPeriod counts a packet at tsNs and reports whether it begins a new
// period (begin then starts it): small enough to be inlined in the capture
// loop, which pays only this and analyse for a packet not analysed.
func (s *sampler) newPeriod(tsNs int64) bool {
	s.packets++
	return tsNs >= s.end || tsNs < s.start // end is 0 before the first packet
}

// begin starts a period at tsNs and sets every for it.
func (s *sampler) begin(tsNs int64) {
	s.sampledBefore = s.started && s.every > 1
	s.every = 1
	if s.started && s.maxPps > 0 && tsNs > s.start {
		// The rate of the period that ends, this packet left out.
		pps := (s.packets - 1) * 1_000_000_000 / (tsNs - s.start)
		if pps > s.maxPps {
			s.every = uint64(min((pps+s.maxPps-1)/s.maxPps, maxSampleEvery))
		}
	}
	s.started, s.packets = true, 1
	s.start, s.end = tsNs, tsNs+int64(s.every)*sampleWindowNs
	s.analyseFrom = tsNs
	if s.every > 1 {
		s.analyseFrom += int64(s.rnd.Uint64()%s.every) * sampleWindowNs
	}
	s.analyseTo = s.analyseFrom + sampleWindowNs
}

// analyse reports whether the packet at tsNs, in the current period, is
// analysed.
func (s *sampler) analyse(tsNs int64) bool { return tsNs >= s.analyseFrom && tsNs < s.analyseTo }

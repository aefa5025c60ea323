package analyze

import "math"

// PeakWindowPackets is the window a flow's peak throughput is taken over:
// this many consecutive packets of the flow, counted from its first.
const PeakWindowPackets = 100

// peakWindow measures a flow's peak throughput (FlowHealth.PeakGbps): the
// highest rate over one window of PeakWindowPackets consecutive packets,
// the windows counted from the flow's first packet and tiling its packets
// (each window ends where the next begins). A window's rate is the wire
// bytes of its packets over the time from its first packet to the next
// window's first, the packet whose bytes are no longer inside it; packets
// stamped where they start (or all where they end) at the line rate then
// give at most the line rate. The last window, which no later packet ends,
// counts once it is full, measured to its own last packet with that
// packet's bytes left out for the same reason; a flow without a whole
// window is measured so over all its packets.
// Fixed windows of packets, not of time, make the figure the same however
// long the capture and whenever a report is asked for (--interval), in
// constant memory per flow.
//
// In the final report the packets after the last whole window, fewer than
// a window, count too, as part of it (a window of 101 to 199 packets to
// the flow's last): the windows then tile every packet, so that no flow's
// mean rate (FlowHealth.MeanGbps) is above its peak, as one of 128 ACKs
// was (139 against 126 kb/s, ibsim's incast2015 demo) when they were left
// out. Reports so far leave them out: a fast partial window joined there
// could read more than the final peak. A last whole window that lasted
// longer than 4.29 s (2^32 ns) is not joined.
//
// 32 bytes, so that flowState stays in its 160-byte size class (176 took
// 16 bytes more a flow): the window's last packet and its bytes are the
// flow's (flowState.lastNs, lastWire), a window's bytes fit 32 bits (100
// packets of at most 64 KiB).
type peakWindow struct {
	startNs  int64   // the window's first packet
	peakGbps float64 // the best whole window so far
	bytes    uint32  // wire bytes of its packets
	wholeB   uint32  // the last whole window's wire bytes
	wholeNs  uint32  // how long it lasted, to the next window's first packet; tooLong past 2^32-2 ns
	n        uint8   // packets in the window, up to PeakWindowPackets
	whole    bool    // a window was completed
}

// tooLong is a peakWindow.wholeNs too long to keep.
const tooLong = math.MaxUint32

// add counts a packet of wireBytes stamped tsNs, in stream order, a late
// packet (out of order past the reorder window) left out by the caller;
// prevNs is the flow's latest packet before it.
func (w *peakWindow) add(tsNs, prevNs int64, wireBytes uint32) {
	if w.n > 0 && tsNs < prevNs {
		return
	}
	if w.n == PeakWindowPackets {
		if d := tsNs - w.startNs; d > 0 {
			w.peakGbps = max(w.peakGbps, float64(w.bytes)*8/float64(d))
		}
		w.whole, w.wholeNs, w.wholeB = true, uint32(min(max(tsNs-w.startNs, 0), tooLong)), w.bytes
		w.n, w.bytes = 0, 0
	}
	if w.n == 0 {
		w.startNs = tsNs
	}
	w.n++
	w.bytes += wireBytes
}

// gbps is the peak so far, lastNs and lastBytes the flow's latest packet
// and its wire bytes, capped at linkGbps when that is known (> 0):
// timestamps taken by a host, not the wire, can bunch packets closer than
// the link sent them. 0 for a flow of one packet. final says no packet
// will follow: the partial window then counts, joined to the last whole
// one.
func (w *peakWindow) gbps(lastNs int64, lastBytes uint32, linkGbps float64, final bool) float64 {
	g := w.peakGbps
	switch {
	// The window still open counts when it is full (a flow of 200 packets
	// has two windows, the second ended by no later packet) or the only
	// one: up to its own last packet, whose bytes are left out.
	case (!w.whole || w.n == PeakWindowPackets) && w.n >= 2 && lastNs > w.startNs:
		g = max(g, float64(w.bytes-min(lastBytes, w.bytes))*8/float64(lastNs-w.startNs))
	// At the end, a partial window after whole ones counts as part of the
	// last of them, to the flow's last packet (its bytes left out).
	case final && w.whole && w.n >= 2 && w.wholeNs != tooLong && lastNs > w.startNs:
		g = max(g, float64(uint64(w.wholeB)+uint64(w.bytes-min(lastBytes, w.bytes)))*8/float64(lastNs-w.startNs+int64(w.wholeNs)))
	}
	if linkGbps > 0 {
		g = min(g, linkGbps)
	}
	return g
}

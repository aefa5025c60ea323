package analyze

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
// 32 bytes: the window's last packet is the flow's (flowState.lastNs), a
// window's bytes fit 32 bits (100 packets of at most 64 KiB).
type peakWindow struct {
	startNs   int64   // the window's first packet
	peakGbps  float64 // the best whole window so far
	bytes     uint32  // wire bytes of its packets
	lastBytes uint32  // the latest packet's wire bytes
	n         uint8   // packets in the window, up to PeakWindowPackets
	whole     bool    // a window was completed
}

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
		w.whole = true
		w.n, w.bytes = 0, 0
	}
	if w.n == 0 {
		w.startNs = tsNs
	}
	w.n++
	w.bytes += wireBytes
	w.lastBytes = wireBytes
}

// gbps is the peak so far, lastNs the flow's latest packet, capped at
// linkGbps when that is known (> 0): timestamps taken by a host, not the
// wire, can bunch packets closer than the link sent them. 0 for a flow of
// one packet.
func (w *peakWindow) gbps(lastNs int64, linkGbps float64) float64 {
	g := w.peakGbps
	// The window still open counts when it is full (a flow of 200 packets
	// has two windows, the second ended by no later packet) or the only
	// one: up to its own last packet, whose bytes are left out.
	if (!w.whole || w.n == PeakWindowPackets) && w.n >= 2 && lastNs > w.startNs {
		g = max(g, float64(w.bytes-w.lastBytes)*8/float64(lastNs-w.startNs))
	}
	if linkGbps > 0 {
		g = min(g, linkGbps)
	}
	return g
}

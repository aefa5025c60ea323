package sim

import (
	"sort"

	"github.com/ibscope/ibscope/decode"
)

// IFA 2.0 probes (flows[].ifa_every): the sender marks a data packet as a
// probe, carrying the IFA header and an empty metadata stack; each switch
// adds its metadata as the packet leaves, the stack growing by
// decode.IFAHopLen bytes a hop, so the probe's size on the wire and in the
// next switch's queue grows too.
const (
	ifaHopLimit = 8                                  // hops that may add metadata
	ifaMaxWords = ifaHopLimit * decode.IFAHopLen / 4 // the stack's most, in 4-byte words
	// ifaProbeBytes is what IFA adds to the packet at its sender: the IFA
	// header and the metadata header.
	ifaProbeBytes = decode.IFAHeaderLen + decode.IFAMetadataHeaderLen
	// ifaLNS is the local namespace the hops' metadata is laid out by
	// (decode.IFAHop's layout).
	ifaLNS = 1
)

// probe is an IFA probe's journey: the hops that stamped it, oldest first.
type probe struct {
	flow int
	psn  uint32
	hops []probeHop
}

// probeHop is what one switch knows of the probe, and writes into it.
type probeHop struct {
	sw          *node
	in, out     *port
	rxPs        int64 // its last byte arrived at the input (store-and-forward)
	residencePs int64 // from then until its first byte left the output
	queueBytes  int   // bytes queued ahead of it at its input, for its priority, when it arrived
	prio        uint8
	ttl         uint8 // the IP TTL it arrived with
	epochNs     int64
}

// metadata is the hop's entry in the decode.IFAHop layout: residence time
// in ns, receive time as seconds and ns since the Unix epoch, and the queue
// depth in bytes in the first 4 opaque bytes (big-endian), where ibsim
// puts it (the draft leaves the opaque data to the namespace).
func (h *probeHop) metadata() decode.IFAHop {
	rxNs := h.epochNs + floorDiv(h.rxPs, 1000)
	m := decode.IFAHop{LNS: ifaLNS, DeviceID: uint32(h.sw.lid), IPTTL: h.ttl, EgressPortSpeed: ifaPortSpeed(h.out.eth.gbps),
		QueueID: h.prio, RxTimeSec: uint32(rxNs / 1e9), RxTimeNs: uint32(rxNs % 1e9), EgressPort: uint16(h.out.num), IngressPort: uint16(h.in.num),
		ResidenceNs: uint32(min(h.residencePs/1000, 0xFFFFFFFF))}
	q := uint32(min(h.queueBytes, 0xFFFFFFFF))
	m.Opaque[0], m.Opaque[1], m.Opaque[2], m.Opaque[3] = byte(q>>24), byte(q>>16), byte(q>>8), byte(q)
	return m
}

// ifaPortSpeed is the metadata's 4-bit egress port speed code: 0 10G, 1
// 25G, 2 40G, 3 50G, 4 100G, 5 200G, 6 400G; 15 for any other rate.
func ifaPortSpeed(gbps int) uint8 {
	for code, g := range []int{10, 25, 40, 50, 100, 200, 400} {
		if g == gbps {
			return uint8(code)
		}
	}
	return 15
}

// stampProbe adds switch output p's hop to a probe leaving it now, and
// grows the packet by the hop's metadata.
func (r *run) stampProbe(p *port, pkt *packet) {
	pr := pkt.probe
	if len(pr.hops) >= ifaHopLimit {
		return // the hop limit is spent: later hops add nothing
	}
	pr.hops = append(pr.hops, probeHop{sw: p.node, in: pkt.inPort, out: p, rxPs: pkt.arrivedPs,
		residencePs: r.nowPs - pkt.arrivedPs, queueBytes: pkt.queueAheadBytes, prio: pkt.vl, ttl: roceTTL - pkt.routed, epochNs: r.s.EpochNs})
	pkt.wireBytes += decode.IFAHopLen
}

// hopKey is one way through a switch: input, output and priority.
type hopKey struct {
	in, out *port
	prio    uint8
}

// hopAcc sums the residence of every data packet one way through a switch.
type hopAcc struct {
	packets       int64
	sumPs, maxPs  int64
	sumQueueBytes int64
}

// hopStat counts data packet pkt leaving switch output p now.
func (r *run) hopStat(in, p *port, pkt *packet) {
	k := hopKey{in, p, pkt.vl}
	a := r.hops[k]
	if a == nil {
		if r.hops == nil {
			r.hops = map[hopKey]*hopAcc{}
		}
		a = &hopAcc{}
		r.hops[k] = a
	}
	d := r.nowPs - pkt.arrivedPs
	a.packets++
	a.sumPs += d
	a.maxPs = max(a.maxPs, d)
	a.sumQueueBytes += int64(pkt.queueAheadBytes)
}

// hopsTruth lists the ways through the switches in port order, and the
// probes.
func (r *run) hopsTruth(t *Truth) {
	keys := make([]hopKey, 0, len(r.hops))
	for k := range r.hops {
		keys = append(keys, k)
	}
	idx := map[*port]int{}
	for i, p := range r.ports {
		idx[p] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if idx[a.in] != idx[b.in] {
			return idx[a.in] < idx[b.in]
		}
		if idx[a.out] != idx[b.out] {
			return idx[a.out] < idx[b.out]
		}
		return a.prio < b.prio
	})
	for _, k := range keys {
		a := r.hops[k]
		t.Hops = append(t.Hops, HopTruth{Switch: k.in.node.name, In: k.in.name, Out: k.out.name, Priority: int(k.prio),
			Packets: a.packets, MeanResidenceNs: a.sumPs / a.packets / 1000, MaxResidenceNs: a.maxPs / 1000,
			MeanQueueBytes: a.sumQueueBytes / a.packets})
	}
	for _, pr := range r.probes {
		pt := ProbeTruth{Flow: pr.flow, PSN: pr.psn}
		for _, h := range pr.hops {
			pt.Hops = append(pt.Hops, ProbeHopTruth{Switch: h.sw.name, DeviceID: uint32(h.sw.lid), In: h.in.name, Out: h.out.name,
				RxNs: r.ns(h.rxPs), ResidenceNs: h.residencePs / 1000, QueueBytes: h.queueBytes})
		}
		t.Probes = append(t.Probes, pt)
	}
}

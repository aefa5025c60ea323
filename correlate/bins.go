package correlate

import (
	"slices"
	"sort"

	"github.com/ibscope/ibscope/decode"
)

// dirStats is what the capture shows in one interval for one direction.
type dirStats struct {
	packets   uint64 // frames
	bytes     uint64 // bytes on the wire (frame length as captured on the link)
	dataBytes uint64 // message payload bytes of data-carrying opcodes
	ecnCE     uint64 // RoCE packets with IP ECN = CE, native IB packets with FECN set
	cnps      uint64 // congestion notification packets
	naks      uint64 // ACKs whose AETH says NAK (RNR NAKs not included)
	retrans   uint64 // packets whose PSN their QP direction had sent before (protostate.QPSequences)
	ipdN      int    // inter-packet delays measured (0: no IPD columns)
	ipdP50Ns  int64  // median inter-packet delay, ns
	ipdP99Ns  int64  // 99th percentile inter-packet delay, ns
}

// Direction slots of intervalStats: what the NIC sent, what it received, and
// every packet including those whose direction is unknown.
const (
	slotTx  = 0
	slotRx  = 1
	slotAll = 2
)

type intervalStats [3]dirStats

// packetFacts is what one frame contributes, worked out once for all the
// interval sets it is binned into.
type packetFacts struct {
	tsNs                 int64
	dir                  dir
	bytes, dataBytes     uint64
	ce, cnp, nak, retran bool
}

func factsOf(f *decode.Frame, d dir, rt *retransmits) packetFacts {
	p := packetFacts{tsNs: f.TsNs, dir: d, bytes: uint64(f.WireLen)}
	if f.Has&decode.HasBTH != 0 {
		op := f.BTH.OpCode
		if op.IsData() {
			p.dataBytes = uint64(len(f.Payload))
		}
		p.cnp = op.IsCNP()
		p.ce = f.BTH.FECN && f.Transport == decode.TransportIB
		p.retran = rt.seen(f)
	}
	if f.Has&(decode.HasIPv4|decode.HasIPv6) != 0 && f.ECN == 3 {
		p.ce = true
	}
	if f.Has&decode.HasAETH != 0 && f.AETH.Kind() == decode.AckKindNAK {
		p.nak = true
	}
	return p
}

// binner assigns packets to a sorted set of non-overlapping half-open
// intervals [startNs, endNs) and accumulates their statistics. Packets are
// expected in time order (captureSet merges files); a packet older than the
// current interval is still counted, but its inter-packet delay is dropped
// (the interval's percentiles are final) and counted in lateIPDs.
type binner struct {
	startNs, endNs []int64
	stats          [][]intervalStats // in chunks of statsChunk intervals, nil until a packet falls in one
	cur            int               // interval of the latest packet, -1 before any
	ipds           [3][]int64        // inter-packet delays of interval cur, per slot
	lastNs         [3]int64          // time of the previous packet, per slot
	haveLast       [3]bool
	lateIPDs       int64
	cong           congestion // pauses and IFA probes (congestion.go)
}

// statsChunk intervals share one allocation of their statistics, made when
// the first packet falls in one of them: telemetry sampled far finer than
// the traffic, or over far longer than the capture, costs nothing for its
// intervals without packets (it cost 240 bytes each: a 2M-row sidecar
// beside a 77-frame capture took 480 MB).
const statsChunk = 1024

func newBinner(startNs, endNs []int64) *binner {
	return &binner{startNs: startNs, endNs: endNs, stats: make([][]intervalStats, (len(startNs)+statsChunk-1)/statsChunk), cur: -1}
}

// statsOf returns the statistics of interval i to add to.
func (b *binner) statsOf(i int) *intervalStats {
	k := i / statsChunk
	if b.stats[k] == nil {
		b.stats[k] = make([]intervalStats, min(statsChunk, len(b.startNs)-k*statsChunk))
	}
	return &b.stats[k][i%statsChunk]
}

// noPackets is the statistics of an interval without packets.
var noPackets intervalStats

// statsAt returns the statistics of interval i to read (not to change).
func (b *binner) statsAt(i int) *intervalStats {
	if c := b.stats[i/statsChunk]; c != nil {
		return &c[i%statsChunk]
	}
	return &noPackets
}

// find returns the interval holding ts, or -1.
func (b *binner) find(ts int64) int {
	n := len(b.startNs)
	for _, i := range [2]int{b.cur, b.cur + 1} {
		if i >= 0 && i < n && ts >= b.startNs[i] && ts < b.endNs[i] {
			return i
		}
	}
	i := sort.Search(n, func(i int) bool { return b.endNs[i] > ts })
	if i < n && b.startNs[i] <= ts {
		return i
	}
	return -1
}

func (b *binner) add(p *packetFacts) {
	i := b.find(p.tsNs)
	if i > b.cur {
		b.closeCurrent()
		b.cur = i
	}
	slots := [2]int{slotAll, -1}
	switch p.dir {
	case dirTx:
		slots[1] = slotTx
	case dirRx:
		slots[1] = slotRx
	}
	for _, s := range slots {
		if s < 0 {
			continue
		}
		ipd, haveIPD := p.tsNs-b.lastNs[s], b.haveLast[s] && p.tsNs >= b.lastNs[s]
		if !b.haveLast[s] || p.tsNs > b.lastNs[s] {
			b.lastNs[s], b.haveLast[s] = p.tsNs, true
		}
		if i < 0 {
			continue
		}
		st := &b.statsOf(i)[s]
		st.packets++
		st.bytes += p.bytes
		st.dataBytes += p.dataBytes
		if p.ce {
			st.ecnCE++
		}
		if p.cnp {
			st.cnps++
		}
		if p.nak {
			st.naks++
		}
		if p.retran {
			st.retrans++
		}
		if haveIPD {
			if i == b.cur {
				b.ipds[s] = append(b.ipds[s], ipd)
			} else {
				b.lateIPDs++
			}
		}
	}
}

// closeCurrent turns the current interval's delays into percentiles.
func (b *binner) closeCurrent() {
	if b.cur < 0 {
		return
	}
	for s := range b.ipds {
		v := b.ipds[s]
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		st := &b.statsOf(b.cur)[s]
		st.ipdN = len(v)
		st.ipdP50Ns = nearestRank(v, 50)
		st.ipdP99Ns = nearestRank(v, 99)
		b.ipds[s] = v[:0]
	}
}

// nearestRank is the p-th percentile of sorted v by the nearest-rank method.
func nearestRank(v []int64, p int) int64 {
	k := (p*len(v) + 99) / 100 // ceil(p/100 · n)
	return v[max(k, 1)-1]
}

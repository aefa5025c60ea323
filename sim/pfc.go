package sim

import (
	"math"
	"sort"

	"github.com/ibscope/ibscope/decode"
)

// ethPort is an Ethernet port's state: no credits, but priority flow
// control. A switch input counts the bytes queued per priority and pauses
// its upstream neighbour by PFC (IEEE 802.1Qbb); every port's transmitter
// honours the pauses its peer sends.
type ethPort struct {
	gbps int
	// quantumPs is one pause quantum (512 bit times) at the link's rate.
	quantumPs float64

	// Receive side, switch inputs only (pfc nil on hosts); the slices are
	// per priority.
	pfc         []pfcLevel
	queuedBytes []int    // bytes of the frames waiting here
	maxQueued   []int    // the most queuedBytes reached
	xoff        []bool   // an XOFF went out and no XON since
	refreshAtPs []int64  // when the refresh due is, to tell a stale timer
	xoffFrames  []uint64 // PFC frames sent that pause the priority
	xonFrames   []uint64 // ... and that resume it (quanta 0)
	overflows   []uint64 // frames that arrived with the queue past XOFF plus headroom
	pending     *packet  // PFC frame not yet sent; later changes merge into it

	// Transmit side: the pauses the peer asked for, per priority.
	pausedUntilPs []int64
	open          []pauseRec // the pause in force, per priority
	isOpen        []bool
	pausedPs      []int64 // per priority, the pauses that ended, summed
	pauses        []int   // ... and counted
}

func newEthPort(gbps, vls int) *ethPort {
	e := &ethPort{gbps: gbps, quantumPs: decode.PauseQuantumBits * 1000 / float64(gbps),
		pausedUntilPs: make([]int64, decode.PFCPriorities), open: make([]pauseRec, decode.PFCPriorities),
		isOpen: make([]bool, decode.PFCPriorities), pausedPs: make([]int64, decode.PFCPriorities), pauses: make([]int, decode.PFCPriorities)}
	return e
}

// pfcLevel is one priority's PFC settings at a switch input.
type pfcLevel struct {
	PFCPriority
	quanta    uint16
	refreshPs int64
}

// enablePFC makes the port a switch input with c's thresholds.
func (e *ethPort) enablePFC(c *PFC, vls int) {
	for n := range vls {
		l := pfcLevel{PFCPriority: c.pfcFor(n), quanta: uint16(c.pfcFor(n).PauseQuanta)}
		l.refreshPs = l.RefreshNs * 1000
		if l.refreshPs == 0 {
			l.refreshPs = max(1, e.pausePs(l.quanta)/2)
		}
		e.pfc = append(e.pfc, l)
	}
	e.queuedBytes, e.maxQueued = make([]int, vls), make([]int, vls)
	e.xoff, e.refreshAtPs = make([]bool, vls), make([]int64, vls)
	e.xoffFrames, e.xonFrames, e.overflows = make([]uint64, vls), make([]uint64, vls), make([]uint64, vls)
}

// pausePs is how long quanta pause this link, in ps.
func (e *ethPort) pausePs(quanta uint16) int64 {
	return int64(math.Round(float64(quanta) * e.quantumPs))
}

// pauseRec is one interval during which a port's priority was paused.
type pauseRec struct {
	port, peer     *port // the paused transmitter, and the switch input that paused it
	prio           int
	startPs, endPs int64
	end            string // how it ended: PauseEndXON, PauseEndExpiry or PauseEndRun
	frames         int    // PFC frames with a non-zero time that started or extended it
}

// How a pause ends.
const (
	PauseEndXON    = "xon"    // a PFC frame with time 0 resumed the priority
	PauseEndExpiry = "expiry" // its time ran out without a refresh
	PauseEndRun    = "end_of_run"
)

// ethIngress queues a data frame at switch input q: past XOFF the port
// pauses its upstream neighbour, and keeps doing so every refresh period
// while the queue stays above XOFF.
func (r *run) ethIngress(q *port, pkt *packet) {
	e, vl := q.eth, pkt.vl
	pkt.heldBytes = pkt.wireBytes
	pkt.queueAheadBytes = e.queuedBytes[vl]
	e.queuedBytes[vl] += pkt.heldBytes
	e.maxQueued[vl] = max(e.maxQueued[vl], e.queuedBytes[vl])
	c := &e.pfc[vl]
	if e.queuedBytes[vl] > c.XOFFBytes+c.HeadroomBytes {
		e.overflows[vl]++
	}
	if e.queuedBytes[vl] > c.XOFFBytes && !e.xoff[vl] {
		e.xoff[vl] = true
		r.sendPFC(q, vl, c.quanta)
		e.refreshAtPs[vl] = r.nowPs + c.refreshPs
		r.q.push(event{atPs: e.refreshAtPs[vl], kind: evPFCRefresh, port: q, prio: vl})
	}
}

// ethRelease frees a frame's bytes at switch input q once it has left; at
// or below XON the port resumes its upstream neighbour.
func (r *run) ethRelease(q *port, pkt *packet) {
	e, vl := q.eth, pkt.vl
	e.queuedBytes[vl] -= pkt.heldBytes
	if e.xoff[vl] && e.queuedBytes[vl] <= e.pfc[vl].XONBytes {
		e.xoff[vl] = false
		r.sendPFC(q, vl, 0)
	}
}

// pfcRefresh sends the pause again if the queue is still above XOFF, and
// looks again a refresh period later while the priority is paused.
func (r *run) pfcRefresh(q *port, vl uint8) {
	e := q.eth
	if !e.xoff[vl] || e.refreshAtPs[vl] != r.nowPs {
		return // resumed, or a timer of an earlier pause
	}
	c := &e.pfc[vl]
	if e.queuedBytes[vl] > c.XOFFBytes {
		r.sendPFC(q, vl, c.quanta)
	}
	e.refreshAtPs[vl] = r.nowPs + c.refreshPs
	r.q.push(event{atPs: e.refreshAtPs[vl], kind: evPFCRefresh, port: q, prio: vl})
}

// sendPFC asks q's peer to pause priority vl for quanta (0: resume). A PFC
// frame not yet on the wire takes the change, so one frame may carry
// several priorities; it goes before any data.
func (r *run) sendPFC(q *port, vl uint8, quanta uint16) {
	e := q.eth
	if e.pending == nil {
		e.pending = &packet{pfc: true, wireBytes: pfcFrameBytes, blocks: 1, flow: -1, injectPs: r.nowPs}
	}
	e.pending.pfcEnable |= 1 << vl
	e.pending.pfcQuanta[vl] = quanta
	r.tryTx(q)
}

// takePFC returns the PFC frame waiting to go, counting what it says.
func (e *ethPort) takePFC() *packet {
	pkt := e.pending
	e.pending = nil
	for n := range decode.PFCPriorities {
		if pkt.pfcEnable>>n&1 == 0 {
			continue
		}
		if pkt.pfcQuanta[n] > 0 {
			e.xoffFrames[n]++
		} else {
			e.xonFrames[n]++
		}
	}
	return pkt
}

// pfcArrive applies a PFC frame whose last byte reached q: each priority it
// names is paused for its time from now (extending a pause in force), or
// resumed by a time of 0.
func (r *run) pfcArrive(q *port, pkt *packet) {
	e := q.eth
	r.endPauses(q)
	for n := range decode.PFCPriorities {
		if pkt.pfcEnable>>n&1 == 0 {
			continue
		}
		quanta := pkt.pfcQuanta[n]
		if quanta == 0 {
			if e.isOpen[n] {
				r.endPause(q, n, r.nowPs, PauseEndXON)
			}
			e.pausedUntilPs[n] = min(e.pausedUntilPs[n], r.nowPs)
			continue
		}
		if !e.isOpen[n] {
			e.isOpen[n], e.open[n] = true, pauseRec{port: q, peer: q.peer, prio: n, startPs: r.nowPs}
		}
		e.open[n].frames++
		e.pausedUntilPs[n] = r.nowPs + e.pausePs(quanta)
		r.q.push(event{atPs: e.pausedUntilPs[n], kind: evPauseEnd, port: q})
	}
	r.tryTx(q)
}

// endPauses closes the pauses of q whose time has run out.
func (r *run) endPauses(q *port) {
	e := q.eth
	for n, open := range e.isOpen {
		if open && e.pausedUntilPs[n] <= r.nowPs {
			r.endPause(q, n, e.pausedUntilPs[n], PauseEndExpiry)
		}
	}
}

// endPause closes q's pause of priority n at endPs: it counts in q's
// totals, and is listed while the list holds fewer than MaxTruthPauses.
func (r *run) endPause(q *port, n int, endPs int64, how string) {
	e := q.eth
	pr := e.open[n]
	pr.endPs, pr.end = endPs, how
	e.isOpen[n] = false
	e.pausedPs[n] += endPs - pr.startPs
	e.pauses[n]++
	if len(r.pauses) < MaxTruthPauses {
		r.pauses = append(r.pauses, pr)
	} else {
		r.pausesLeftOut++
	}
}

// mayTx reports whether p may send a packet of blocks on vl now: on
// InfiniBand if the peer's credits cover it, on Ethernet if the peer has
// not paused the priority.
func (r *run) mayTx(p *port, vl uint8, blocks int) bool {
	if p.eth != nil {
		return p.eth.pausedUntilPs[vl] <= r.nowPs
	}
	return p.canSend(vl, blocks)
}

// portEthernetTruth fills in the time each priority of p was paused, and a
// switch input's PFC.
func (r *run) portEthernetTruth(p *port, pt *PortTruth) {
	e := p.eth
	for n := range r.s.VLs {
		if e.pauses[n] > 0 {
			pt.PausedNs = make([]int64, r.s.VLs)
			break
		}
	}
	for n := range pt.PausedNs {
		pt.PausedNs[n] = e.pausedPs[n] / 1000
	}
	if e.pfc == nil {
		return
	}
	for n, c := range e.pfc {
		pt.PFC = append(pt.PFC, PriorityPFCTruth{Priority: n, XOFFBytes: c.XOFFBytes, XONBytes: c.XONBytes, HeadroomBytes: c.HeadroomBytes,
			PauseQuanta: c.PauseQuanta, PauseNs: e.pausePs(c.quanta) / 1000, RefreshNs: c.refreshPs / 1000,
			XOFFFrames: e.xoffFrames[n], XONFrames: e.xonFrames[n], MaxQueuedBytes: e.maxQueued[n], HeadroomOverflows: e.overflows[n]})
	}
}

// closeOpenPauses ends, at the end of the run, the pauses still in force.
func (r *run) closeOpenPauses() {
	for _, p := range r.ports {
		if p.eth == nil {
			continue
		}
		r.endPauses(p)
		for n, open := range p.eth.isOpen {
			if open {
				r.endPause(p, n, r.nowPs, PauseEndRun)
			}
		}
	}
}

// ethernetTruth lists the pauses, the ways through the switches and the
// probes.
func (r *run) ethernetTruth(t *Truth) {
	sort.SliceStable(r.pauses, func(i, j int) bool { return r.pauses[i].startPs < r.pauses[j].startPs })
	t.PausesLeftOut = r.pausesLeftOut
	for _, pr := range r.pauses {
		t.Pauses = append(t.Pauses, PauseTruth{Port: pr.port.name, Peer: pr.peer.name, Priority: pr.prio,
			StartNs: r.ns(pr.startPs), EndNs: r.ns(pr.endPs), PausedNs: (pr.endPs - pr.startPs) / 1000, End: pr.end, Frames: pr.frames})
	}
	r.hopsTruth(t)
}

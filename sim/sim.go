package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ibscope/ibscope/internal/outfile"
	"github.com/ibscope/ibscope/protostate"
)

// Run simulates the scenario and writes its taps, telemetry and truth.json
// under outDir (created if needed). It validates the scenario first. Every
// file is written by outfile's rule, inside outDir: under a temporary name
// until the whole run has succeeded, then renamed into place, so a run that
// fails (a write error stops it at once) leaves none of its files, and
// replaces none of an earlier run's.
func Run(s *Scenario, outDir string) (*Truth, error) {
	return runLimited(s, outDir, MaxEvents)
}

// runLimited is Run stopping after maxEvents events (fuzzing runs short).
func runLimited(s *Scenario, outDir string, maxEvents uint64) (*Truth, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	d, err := outfile.OpenDir(outDir)
	if err != nil {
		return nil, err
	}
	r, err := build(s, d)
	if err == nil {
		err = r.loop(maxEvents)
	}
	var t *Truth
	if err == nil {
		t, err = r.finish()
	}
	if err != nil {
		for _, f := range r.files {
			f.Abort()
		}
		d.Abort()
		return nil, err
	}
	d.Keep()
	return t, nil
}

// create starts writing name in the output directory; finish commits it.
func (r *run) create(name string) (*outfile.File, error) {
	f, err := r.dir.Create(name)
	if err != nil {
		return nil, err
	}
	r.files = append(r.files, f)
	return f, nil
}

// writeErr is the first error of a writer, for the loop to stop at.
func (r *run) writeErr() error {
	for _, t := range r.taps {
		if t.err != nil {
			return t.err
		}
	}
	if r.sc != nil && r.sc.err != nil {
		return r.sc.err
	}
	for _, f := range r.files {
		if err := f.Err(); err != nil {
			return err
		}
	}
	return nil
}

// finish flushes the writers, writes the sysfs tree and truth.json, and
// renames every file into place once all are complete.
func (r *run) finish() (*Truth, error) {
	if err := r.closeOutputs(); err != nil {
		return nil, err
	}
	t := r.truth()
	if tl := r.s.Telemetry; tl != nil && tl.SysfsDir != "" {
		if err := r.writeSysfs(tl.SysfsDir); err != nil {
			return nil, err
		}
	}
	f, err := r.create(TruthFile)
	if err != nil {
		return nil, err
	}
	if err := t.write(f); err != nil {
		return nil, err
	}
	for _, f := range r.files {
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	for _, f := range r.files {
		if err := f.Commit(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// run is one simulation in progress.
type run struct {
	s     *Scenario
	rng   *rand.Rand
	q     eventQueue
	nowPs int64
	nodes []*node
	ports []*port
	flows []*flowState

	flowsLeft     int   // flows with data not yet sent
	live          int   // data packets and ACKs sent and not yet delivered
	stopPs        int64 // end of the run once traffic is over, -1 before
	fcpPeriod     map[*port]int64
	samplePs      int64
	samples       int
	pauses        []pauseRec // Ethernet: the pauses PFC frames caused, as they ended (at most MaxTruthPauses)
	pausesLeftOut int
	probes        []*probe // Ethernet: IFA probes delivered
	hops          map[hopKey]*hopAcc
	pq            *perfqueryWriter
	sc            *sidecars
	taps          []*tapWriter
	tapPorts      []string
	events        uint64
	dataPkts      int64
	packetLog     bool
	samplePorts   []*port
	dir           *outfile.Dir
	files         []*outfile.File // every output, committed by finish
}

func build(s *Scenario, dir *outfile.Dir) (*run, error) {
	r := &run{s: s, rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x1b5c09e)), stopPs: -1, fcpPeriod: map[*port]int64{}, packetLog: s.TruthPackets, dir: dir}
	byName := r.addNodes()
	if err := r.addLinks(byName); err != nil {
		return r, err
	}
	r.buildRoutes()
	if err := r.addFlows(byName); err != nil {
		return r, err
	}
	portByName := map[string]*port{}
	for _, p := range r.ports {
		portByName[p.name] = p
	}
	if err := r.addTaps(portByName); err != nil {
		return r, err
	}
	if err := r.addTelemetry(portByName); err != nil {
		return r, err
	}
	r.startLinks()
	return r, nil
}

// addNodes makes the hosts and switches, numbering their LIDs from 1 in
// the scenario's order, and returns them by name.
func (r *run) addNodes() map[string]*node {
	s := r.s
	byName := map[string]*node{}
	lid := uint16(1)
	for _, h := range s.Hosts {
		n := &node{name: h.Name, lid: lid, flows: make([][]*flowState, s.VLs), flowRR: make([]int, s.VLs), acks: make([][]*packet, s.VLs)}
		lid++
		r.nodes = append(r.nodes, n)
		byName[n.name] = n
	}
	for _, w := range s.Switches {
		n := &node{name: w.Name, isSwitch: true, lid: lid, route: map[uint16]*port{}}
		lid++
		r.nodes = append(r.nodes, n)
		byName[n.name] = n
	}
	return byName
}

// addLinks makes both ports of every link and gives each port its buffers:
// a host's one port VLBufferBytes, a switch's ports their per-VL buffers
// (and PFC, on Ethernet).
func (r *run) addLinks(byName map[string]*node) error {
	s := r.s
	tickPs := max(1, int64(math.Round(s.TickNs*1000)))
	maxPktBytes := dataWireBytes(rethBytes, s.MTUBytes)
	if s.ethernet() {
		maxPktBytes = roceWireBytes(rethBytes, s.MTUBytes) + ethGapBytes
	}
	for _, l := range s.Links {
		a, b := r.newPort(byName[l.A], l, tickPs, maxPktBytes), r.newPort(byName[l.B], l, tickPs, maxPktBytes)
		a.peer, b.peer = b, a
	}
	for i, h := range s.Hosts {
		n := byName[h.Name]
		if len(n.ports) != 1 {
			return keyErr("links", "host %q (hosts[%d]) has %d links; a host has exactly one port", h.Name, i, len(n.ports))
		}
		for vl := range s.VLs {
			n.ports[0].capBlocks[vl] = h.VLBufferBytes / blockBytes
		}
	}
	for _, w := range s.Switches {
		for _, p := range byName[w.Name].ports {
			for vl := range s.VLs {
				p.capBlocks[vl] = w.VLBufferBytes[vl] / blockBytes
			}
			if p.eth != nil {
				p.eth.enablePFC(w.PFC, s.VLs)
			}
		}
	}
	return nil
}

// newPort adds port number len(n.ports)+1 to n for link l: its rate, its
// buffers per VL, its PortXmitWait ticking (tickPs, merging stalls closer
// than four of the largest packets) and its flow-control period.
func (r *run) newPort(n *node, l Link, tickPs int64, maxPktBytes int) *port {
	s := r.s
	rate, _ := protostate.ParseLinkRate(l.Rate)
	lanes := l.Lanes
	if s.ethernet() {
		rate, lanes = ethernetRate(l.Gbps), 1
	}
	// One byte's serialisation time over the link's lanes, ps.
	p := &port{node: n, num: len(n.ports) + 1, rate: rate, lanes: lanes, psPerByte: 8000 / rate.DataGbps(lanes),
		propPs: l.PropagationNs * 1000, fctbsBlocks: make([]uint32, s.VLs), fccl: make([]uint16, s.VLs),
		haveFCCL: make([]bool, s.VLs), capBlocks: make([]int, s.VLs), usedBlocks: make([]int, s.VLs),
		abrBlocks: make([]uint32, s.VLs), fifo: make([][]*packet, s.VLs), fcpPending: make([]bool, s.VLs), inRR: make([]int, s.VLs)}
	p.name = fmt.Sprintf("%s/%d", n.name, p.num)
	if s.ethernet() {
		p.eth = newEthPort(l.Gbps, s.VLs)
	}
	p.xw = xmitWait{tickPs: tickPs, phasePs: r.rng.Int64N(tickPs), startPs: -1, mergeGapPs: 4 * p.serPs(maxPktBytes)}
	n.ports = append(n.ports, p)
	r.ports = append(r.ports, p)
	period := s.FCPPeriodNs * 1000
	if period == 0 {
		period = int64(math.Round(65536 * rate.SymbolTimeNs * 1000))
	}
	r.fcpPeriod[p] = period
	return p
}

// addFlows queues each flow at its sending host, ready at its start time.
func (r *run) addFlows(byName map[string]*node) error {
	s := r.s
	for i, f := range s.Flows {
		src, dst := byName[f.Src], byName[f.Dst]
		if !r.reachable(src, dst) {
			return keyErr(fmt.Sprintf("flows[%d].dst", i), "host %q cannot be reached from %q over the links", f.Dst, f.Src)
		}
		fs := &flowState{idx: i, cfg: f, src: src, dst: dst, vl: uint8(f.SL), destQP: 0x100 + uint32(i), srcQP: 0x200 + uint32(i),
			mtuBytes: s.MTUBytes, write: f.Op == "write", bytesLeft: f.Bytes, readyPs: f.StartNs * 1000, eth: s.ethernet()}
		src.flows[fs.vl] = append(src.flows[fs.vl], fs)
		r.flows = append(r.flows, fs)
		r.flowsLeft++
		r.q.push(event{atPs: fs.readyPs, kind: evFlowReady, port: src.ports[0]})
	}
	return nil
}

// addTaps opens each tap's capture file and hangs its writer on the port,
// sent and/or received side.
func (r *run) addTaps(portByName map[string]*port) error {
	s := r.s
	for _, t := range s.Taps {
		f, err := r.create(t.File)
		if err != nil {
			return err
		}
		p := portByName[t.Port]
		w, err := newTapWriter(f, t, s.EpochNs, t.QuantizeNs, s.MTUBytes, s.ethernet(), uint64(math.Round(p.rate.DataGbps(p.lanes)*1e9)))
		if err != nil {
			return err
		}
		w.noFCP, w.snap = t.DataOnly, t.SnapBytes
		if t.Direction != TapRx {
			p.taps = append(p.taps, w)
		}
		if t.Direction != TapTx {
			p.rxTaps = append(p.rxTaps, w)
		}
		r.taps = append(r.taps, w)
		r.tapPorts = append(r.tapPorts, t.Port)
	}
	return nil
}

// addTelemetry opens the perfquery file (and sidecars) and schedules the
// first sample.
func (r *run) addTelemetry(portByName map[string]*port) error {
	t := r.s.Telemetry
	if t == nil {
		return nil
	}
	r.samplePorts = r.ports
	if len(t.Ports) > 0 {
		r.samplePorts = nil
		for _, name := range t.Ports {
			r.samplePorts = append(r.samplePorts, portByName[name])
		}
	}
	f, err := r.create(t.File)
	if err != nil {
		return err
	}
	r.pq = newPerfqueryWriter(f, r.samplePorts)
	if t.SidecarDir != "" {
		sc, err := r.newSidecars(t.SidecarDir)
		if err != nil {
			return err
		}
		r.sc = sc
	}
	r.samplePs = t.PeriodNs * 1000
	r.q.push(event{atPs: 0, kind: evSample})
	return nil
}

// startLinks initialises the links: every port advertises its buffers, then
// keeps sending FCPs at its period (InfiniBand; Ethernet has no credits),
// and every port with something to send starts.
func (r *run) startLinks() {
	for _, p := range r.ports {
		if p.eth != nil {
			continue
		}
		for vl := range r.s.VLs {
			p.queueFCP(vl)
		}
		r.q.push(event{atPs: r.fcpPeriod[p], kind: evFCPTimer, port: p})
	}
	for _, p := range r.ports {
		r.tryTx(p)
	}
}

// buildRoutes fills each switch's forwarding table with the first hop of a
// shortest path to every host (breadth-first from each host).
func (r *run) buildRoutes() {
	for _, h := range r.nodes {
		if h.isSwitch {
			continue
		}
		seen := map[*node]bool{h: true}
		frontier := []*node{h}
		for len(frontier) > 0 {
			var next []*node
			for _, n := range frontier {
				for _, p := range n.ports {
					m := p.peer.node
					if seen[m] {
						continue
					}
					seen[m] = true
					if m.isSwitch {
						m.route[h.lid] = p.peer
						next = append(next, m)
					}
				}
			}
			frontier = next
		}
	}
}

func (r *run) reachable(src, dst *node) bool {
	p := src.ports[0].peer
	for hops := 0; hops <= len(r.nodes); hops++ {
		if p.node == dst {
			return true
		}
		if !p.node.isSwitch {
			return false
		}
		out, ok := p.node.route[dst.lid]
		if !ok {
			return false
		}
		p = out.peer
	}
	return false
}

// writeCheckEvents is how often, in events, the loop looks for a write
// error: often enough to stop within a few MB of output.
const writeCheckEvents = 1 << 12

// loop runs the events until none is left; it stops at the first write
// error, or after maxEvents events.
func (r *run) loop(maxEvents uint64) error {
	for len(r.q.h) > 0 {
		e := r.q.pop()
		r.nowPs = e.atPs
		r.events++
		if r.events%writeCheckEvents == 0 {
			if err := r.writeErr(); err != nil {
				return err
			}
		}
		if r.events > maxEvents {
			return fmt.Errorf("stopped after %d simulator events, the most one run may take: simulate less (flows[].bytes, fcp_period_ns, telemetry.period_ns)", maxEvents)
		}
		switch e.kind {
		case evTxDone:
			r.txDone(e.port, e.pkt)
		case evArrive:
			r.arrive(e.port, e.pkt)
		case evFCPTimer:
			p := e.port
			for vl := range r.s.VLs {
				p.queueFCP(vl)
			}
			r.tryTx(p)
			if next := r.nowPs + r.fcpPeriod[p]; r.stopPs < 0 || next <= r.stopPs {
				r.q.push(event{atPs: next, kind: evFCPTimer, port: p})
			}
		case evFlowReady:
			r.tryTx(e.port)
		case evCredit:
			e.port.queueFCP(int(e.pkt.vl))
			r.tryTx(e.port)
		case evPauseEnd:
			r.endPauses(e.port)
			r.tryTx(e.port)
		case evPFCRefresh:
			if r.stopPs < 0 || r.nowPs <= r.stopPs {
				r.pfcRefresh(e.port, e.prio)
			}
		case evSample:
			r.pq.sample(r.ns(r.nowPs), r.nowPs)
			if r.sc != nil {
				r.sc.sample(r.ns(r.nowPs), r.nowPs)
			}
			r.samples++
			if next := r.nowPs + r.samplePs; r.stopPs < 0 || next < r.stopPs {
				r.q.push(event{atPs: next, kind: evSample})
			}
		}
	}
	for _, p := range r.ports {
		p.xw.stop(r.nowPs)
	}
	r.closeOpenPauses()
	return nil
}

// checkDone starts the idle tail once every flow's data is delivered.
func (r *run) checkDone() {
	if r.flowsLeft > 0 || r.live > 0 || r.stopPs >= 0 {
		return
	}
	tail := r.s.TailNs * 1000
	if tail == 0 {
		for _, p := range r.fcpPeriod {
			tail = max(tail, 2*p)
		}
	}
	r.stopPs = r.nowPs + tail
	if r.pq != nil {
		r.q.push(event{atPs: r.stopPs, kind: evSample})
	}
}

// tryTx starts the next frame on an idle port: a pending FCP first, then a
// data packet the peer has credits for. A port with data and no credits
// starts (or keeps) waiting, which is what PortXmitWait counts.
func (r *run) tryTx(p *port) {
	if p.busy {
		return
	}
	var pkt *packet
	if p.fcpAny {
		pkt = p.takeFCP()
	}
	if pkt == nil && p.eth != nil && p.eth.pending != nil {
		pkt = p.eth.takePFC()
	}
	var kick *port
	if pkt == nil {
		var waiting bool
		if p.node.isSwitch {
			pkt, waiting, kick = r.pickSwitch(p)
		} else {
			pkt, waiting = r.pickHost(p)
		}
		if pkt == nil {
			if waiting {
				p.xw.start(r.nowPs)
			} else {
				p.xw.stop(r.nowPs)
			}
			return
		}
		p.xw.stop(r.nowPs)
	}
	r.transmit(p, pkt)
	if kick != nil {
		r.tryTx(kick)
	}
}

// pickHost chooses among ACKs and flows, VL by VL in round-robin order.
func (r *run) pickHost(p *port) (*packet, bool) {
	n, vls, waiting := p.node, r.s.VLs, false
	for i := range vls {
		vl := (p.vlRR + i) % vls
		if q := n.acks[vl]; len(q) > 0 {
			waiting = true
			if r.mayTx(p, uint8(vl), q[0].blocks) {
				n.acks[vl] = q[1:]
				p.vlRR = (vl + 1) % vls
				return q[0], true
			}
			continue
		}
		fl := n.flows[vl]
		for j := range fl {
			k := (n.flowRR[vl] + j) % len(fl)
			f := fl[k]
			if !f.pending(r.nowPs) {
				continue
			}
			waiting = true
			if !r.mayTx(p, uint8(vl), f.nextBlocks()) {
				continue
			}
			n.flowRR[vl] = (k + 1) % len(fl)
			p.vlRR = (vl + 1) % vls
			pkt, msgEnd := f.take(r.nowPs)
			r.live++
			r.dataPkts++
			if f.bytesLeft == 0 && f.msgLeft == 0 {
				r.flowsLeft--
			} else if msgEnd && f.cfg.JitterNs > 0 {
				f.readyPs = r.nowPs + p.serPs(pkt.wireBytes) + r.rng.Int64N(f.cfg.JitterNs*1000+1)
				r.q.push(event{atPs: f.readyPs, kind: evFlowReady, port: p})
			}
			return pkt, true
		}
	}
	return nil, waiting
}

// pickSwitch is the output side of an input-queued switch: VLs in
// round-robin order, and within a VL the input ports in round-robin order,
// each offering the packet at the head of its buffer if it goes here. When
// the packet taken uncovers one for another output, that port is returned
// to be kicked.
func (r *run) pickSwitch(p *port) (*packet, bool, *port) {
	n, vls, waiting := p.node, r.s.VLs, false
	for i := range vls {
		vl := (p.vlRR + i) % vls
		for j := range n.ports {
			k := (p.inRR[vl] + j) % len(n.ports)
			in := n.ports[k]
			q := in.fifo[vl]
			if len(q) == 0 || q[0].outPort != p {
				continue
			}
			waiting = true
			h := q[0]
			if !r.mayTx(p, uint8(vl), h.blocks) {
				continue
			}
			q[0] = nil
			in.fifo[vl] = q[1:]
			p.inRR[vl] = (k + 1) % len(n.ports)
			p.vlRR = (vl + 1) % vls
			h.queuePs += r.nowPs - h.arrivedPs
			if p.eth != nil && h.flow >= 0 {
				r.hopStat(in, p, h)
			}
			if h.probe != nil {
				r.stampProbe(p, h)
			}
			if p.eth != nil {
				h.routed++
			}
			var kick *port
			if len(in.fifo[vl]) > 0 && in.fifo[vl][0].outPort != p {
				kick = in.fifo[vl][0].outPort
			}
			return h, true, kick
		}
	}
	return nil, waiting, nil
}

// transmit puts a frame on p's link: taps see its first byte now (and at
// the peer a propagation delay later); its last byte arrives after the
// serialisation time plus the propagation delay.
func (r *run) transmit(p *port, pkt *packet) {
	p.busy = true
	pkt.link = p
	if !pkt.fcp && !pkt.pfc {
		p.fctbsBlocks[pkt.vl] += uint32(pkt.blocks)
		p.xmitBytes += uint64(pkt.wireBytes)
		p.xmitPkts++
	}
	for _, t := range p.taps {
		t.record(r.nowPs, r.nowPs, pkt, IfaceTx)
	}
	for _, t := range p.peer.rxTaps {
		t.record(r.nowPs+p.propPs, r.nowPs, pkt, IfaceRx)
	}
	dur := p.serPs(pkt.wireBytes)
	if p.eth != nil {
		dur = p.serPs(pkt.wireBytes + ethGapBytes)
	}
	r.q.push(event{atPs: r.nowPs + dur, kind: evTxDone, port: p, pkt: pkt})
	r.q.push(event{atPs: r.nowPs + dur + p.propPs, kind: evArrive, port: p.peer, pkt: pkt})
}

// txDone frees the link and, for a packet leaving a switch, the input
// buffer blocks it held: the input port then advertises the new credit
// limit to its sender.
func (r *run) txDone(p *port, pkt *packet) {
	p.busy = false
	if !pkt.fcp && pkt.inPort != nil {
		in := pkt.inPort
		pkt.inPort = nil
		if in.eth != nil {
			r.ethRelease(in, pkt)
		} else {
			in.usedBlocks[pkt.vl] -= pkt.blocks
			r.creditUpdate(in, pkt)
		}
	}
	r.tryTx(p)
}

// creditUpdate sends the FCP that advertises freed buffer, after the
// scenario's credit jitter.
func (r *run) creditUpdate(q *port, pkt *packet) {
	if j := r.s.CreditJitterNs; j > 0 {
		r.q.push(event{atPs: r.nowPs + r.rng.Int64N(j*1000+1), kind: evCredit, port: q, pkt: pkt})
		return
	}
	q.queueFCP(int(pkt.vl))
	r.tryTx(q)
}

// arrive handles a frame whose last byte reached port q.
func (r *run) arrive(q *port, pkt *packet) {
	vl := pkt.vl
	if pkt.pfc {
		r.pfcArrive(q, pkt)
		return
	}
	if pkt.fcp {
		q.fccl[vl] = pkt.fccl
		q.haveFCCL[vl] = true
		r.tryTx(q)
		return
	}
	q.abrBlocks[vl] += uint32(pkt.blocks)
	q.rcvBytes += uint64(pkt.wireBytes)
	q.rcvPkts++
	n := q.node
	if n.isSwitch {
		if q.eth != nil {
			r.ethIngress(q, pkt)
		} else {
			q.usedBlocks[vl] += pkt.blocks
		}
		pkt.arrivedPs = r.nowPs
		pkt.inPort = q
		pkt.outPort = n.route[pkt.dlid]
		q.fifo[vl] = append(q.fifo[vl], pkt)
		if len(q.fifo[vl]) == 1 {
			r.tryTx(pkt.outPort)
		}
		return
	}
	// A host drains its receive buffer at once, so every packet raises the
	// credit limit it advertises.
	if q.eth == nil {
		r.creditUpdate(q, pkt)
	}
	r.live--
	if pkt.flow >= 0 {
		r.deliver(r.flows[pkt.flow], pkt)
		if pkt.ackReq {
			f := r.flows[pkt.flow]
			if pkt.op.IsLast() {
				f.msn++
			}
			w := dataWireBytes(aethBytes, 0)
			if q.eth != nil {
				w = roceWireBytes(aethBytes, 0)
			}
			ack := &packet{vl: vl, sl: vl, slid: n.lid, dlid: pkt.slid, op: 0x11, qp: f.srcQP, psn: pkt.psn,
				msn: f.msn, wireBytes: w, blocks: blocksOf(w), flow: -1, injectPs: r.nowPs}
			n.acks[vl] = append(n.acks[vl], ack)
			r.live++
		}
	}
	r.tryTx(q)
	r.checkDone()
}

func (r *run) deliver(f *flowState, pkt *packet) {
	f.delivered++
	f.lastPs = r.nowPs
	f.queueSumPs += pkt.queuePs
	f.queueMx = max(f.queueMx, pkt.queuePs)
	if pkt.probe != nil {
		r.probes = append(r.probes, pkt.probe)
	}
	if r.packetLog {
		f.truth = append(f.truth, PacketTruth{Flow: f.idx, PSN: pkt.psn, InjectNs: r.ns(pkt.injectPs), DeliverNs: r.ns(r.nowPs), QueueNs: pkt.queuePs / 1000})
	}
}

// ns converts simulated ps to wall-clock ns since the epoch.
func (r *run) ns(ps int64) int64 { return r.s.EpochNs + floorDiv(ps, 1000) }

func (r *run) closeOutputs() error {
	var first error
	for _, t := range r.taps {
		if err := t.close(); err != nil && first == nil {
			first = err
		}
	}
	if r.pq != nil {
		if err := r.pq.close(); err != nil && first == nil {
			first = err
		}
	}
	if r.sc != nil {
		if err := r.sc.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *run) truth() *Truth {
	s := r.s
	t := &Truth{Scenario: s.Name, Seed: s.Seed, StartNs: s.EpochNs, EndNs: r.ns(r.nowPs), TickNs: s.TickNs,
		MTUBytes: s.MTUBytes, DataPackets: r.dataPkts, Events: r.events}
	seen := map[*port]bool{}
	for _, p := range r.ports {
		if !seen[p] {
			seen[p], seen[p.peer] = true, true
			t.Links = append(t.Links, LinkTruth{A: p.name, B: p.peer.name, Rate: p.rate.Name, Lanes: p.lanes,
				PropagationNs: p.propPs / 1000, NsPerByte: p.psPerByte / 1000, SymbolNs: p.rate.SymbolTimeNs})
			if p.eth != nil {
				t.Links[len(t.Links)-1].Gbps = p.eth.gbps
			}
		}
		pt := PortTruth{Port: p.name, Peer: p.peer.name, LID: p.node.lid, Switch: p.node.isSwitch,
			SymbolNs: p.rate.SymbolTimeNs, TickSymbols: s.TickNs / p.rate.SymbolTimeNs,
			XmitWaitTicks: p.xw.ticks, XmitWaitNs: p.xw.waitPs / 1000, Waits: p.xw.intervals,
			XmitPkts: p.xmitPkts, RcvPkts: p.rcvPkts, XmitDataBytes: p.xmitBytes, RcvDataBytes: p.rcvBytes}
		for _, c := range p.capBlocks {
			pt.VLBufferBytes = append(pt.VLBufferBytes, c*blockBytes)
		}
		if p.eth != nil {
			r.portEthernetTruth(p, &pt)
		}
		for _, e := range p.xw.episodes {
			pt.Congestion = append(pt.Congestion, Interval{StartNs: r.ns(e.startPs), EndNs: r.ns(e.endPs),
				WaitNs: e.waitPs / 1000, Ticks: e.ticks, Waits: e.waits})
		}
		t.Ports = append(t.Ports, pt)
	}
	for _, f := range r.flows {
		ft := FlowTruth{Src: f.src.name, Dst: f.dst.name, SLID: f.src.lid, DLID: f.dst.lid, DestQP: f.destQP,
			SL: f.cfg.SL, Bytes: f.cfg.Bytes, Packets: f.packets, FirstNs: r.ns(f.firstPs), LastNs: r.ns(f.lastPs),
			MaxQueueNs: f.queueMx / 1000}
		if f.delivered > 0 {
			ft.MeanQueueNs = f.queueSumPs / f.delivered / 1000
		}
		t.Flows = append(t.Flows, ft)
		t.Packets = append(t.Packets, f.truth...)
	}
	for i, w := range r.taps {
		t.Taps = append(t.Taps, TapTruth{Port: r.tapPorts[i], File: s.Taps[i].File, Frames: w.frames,
			QuantizeNs: s.Taps[i].QuantizeNs, SnapBytes: s.Taps[i].SnapBytes, IfaceTx: IfaceTx, IfaceRx: IfaceRx})
	}
	if s.ethernet() {
		t.LinkLayer = LinkEthernet
		r.ethernetTruth(t)
	}
	if tl := s.Telemetry; tl != nil {
		tt := &TelemetryTruth{File: tl.File, PeriodNs: tl.PeriodNs, Samples: r.samples, SysfsDir: tl.SysfsDir, SidecarDir: tl.SidecarDir}
		for _, p := range r.samplePorts {
			tt.Ports = append(tt.Ports, p.name)
		}
		t.Telemetry = tt
	}
	return t
}

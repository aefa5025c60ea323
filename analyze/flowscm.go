package analyze

import (
	"maps"

	"github.com/ibscope/ibscope/decode"
)

// FlowConnection names the CM connection a flow belongs to: the REQ that
// set it up named the flow's destination QP (the active end's) or the REP
// did (the passive end's). It is the `connection` object of a flow.
type FlowConnection struct {
	ServiceID    uint64 `json:"service_id"`
	ActiveCommID uint32 `json:"active_comm_id"`
	// FromActive says the flow carries the active end's packets (to the
	// QP the REP named); else the passive end's (to the REQ's QP).
	FromActive bool `json:"from_active"`
	// rdma_cm's ports, when the REQ's private data gave them.
	ActivePort  uint16 `json:"active_port,omitempty"`
	PassivePort uint16 `json:"passive_port,omitempty"`
}

// flowConns is what the flows analysis keeps of the CM: the connection of
// each flow a REQ or REP named, and the REQs waiting for their REP. Both
// are bounded by the flows bound; they stay empty in a capture without CM.
type flowConns struct {
	byFlow map[decode.FlowKey]FlowConnection
	reqs   map[cmKey]FlowConnection // by the active end's address and communication ID
}

// restartFor starts afresh the PSN sequences of the flow a CM REQ or REP
// sets up (protostate.QPSequences.Restart): a REQ names its sender's QP
// and the PSN it will start its requests at, so the packets to that QP
// (the flow the other way, to the named QP) begin new sequences whatever
// PSN they carry; a REP does the same for its sender's QP. A flow not seen
// yet needs nothing: its first packet starts it. Either way the flow is
// named by its connection.
func (a *FlowsAnalysis) restartFor(p *Packet) {
	m := p.CM
	if m.Message != decode.CMRequest && m.Message != decode.CMReply {
		return
	}
	k := reversePair(p.Key)
	k.DestQP = m.QPN
	a.nameFlow(p, k)
	pk := packKey(&k)
	if i, ok := a.index.find(&pk); ok {
		a.state(i).psn.Restart()
	}
}

// nameFlow records the connection of flow k, set up by p's REQ or REP.
func (a *FlowsAnalysis) nameFlow(p *Packet, k decode.FlowKey) {
	c := &a.conns
	if c.byFlow == nil {
		c.byFlow, c.reqs = map[decode.FlowKey]FlowConnection{}, map[cmKey]FlowConnection{}
	}
	m := p.CM
	var conn FlowConnection
	if m.Message == decode.CMRequest {
		conn = FlowConnection{ServiceID: m.ServiceID, ActiveCommID: m.LocalCommID, ActivePort: m.SrcPort, PassivePort: m.DstPort}
		if len(c.reqs) < a.maxFlows {
			c.reqs[cmKey{pairOf(p.Key), m.LocalCommID}] = conn
		}
	} else {
		var ok bool
		if conn, ok = c.reqs[cmKey{reversePair(p.Key), m.RemoteCommID}]; !ok {
			conn = FlowConnection{ActiveCommID: m.RemoteCommID} // the REQ was not captured
		}
		conn.FromActive = true
	}
	if _, ok := c.byFlow[k]; ok || len(c.byFlow) < a.maxFlows {
		c.byFlow[k] = conn
	}
}

// connections returns a copy of the flows' connections for a result
// (nil without CM), so that later packets leave a report as it was.
func (a *FlowsAnalysis) connections() map[decode.FlowKey]FlowConnection {
	if a.conns.byFlow == nil {
		return nil
	}
	return maps.Clone(a.conns.byFlow)
}

package analyze

import (
	"fmt"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// The cm analysis lists the connections the capture saw the communication
// manager set up or tear down (IBA chapter 12; rdma_cm's connections on
// RoCE too): the two ends, their QPs and starting PSNs, the service, how
// long REQ took to REP and REP to RTU, MRAs, rejects with their reason,
// path changes (LAP/APR) and disconnects, and the connections that never
// completed. A connection is its active side (the REQ's sender, its
// address and local communication ID); a message from the passive side
// names it by the remote communication ID. Messages of connections whose
// REQ the capture missed open a connection without a REQ (state
// "unseen_setup"). Memory: about 300 bytes a connection, at most
// MaxConnections (then the messages of new ones are only counted).

// DefaultMaxConnections bounds the connections the cm analysis keeps apart.
const DefaultMaxConnections = 100_000

// MaxConnectionsLimit is the largest bound a caller may set.
const MaxConnectionsLimit = 10_000_000

// CMConnection is one connection as the CM messages describe it.
type CMConnection struct {
	// Active and Passive are the two ends: the REQ's sender and receiver
	// (an IP, a GID, or lid:N), as the flows' keys name them.
	Transport string `json:"transport"`
	Active    string `json:"active"`
	Passive   string `json:"passive"`
	// ActiveCommID and PassiveCommID are the ends' communication IDs.
	ActiveCommID  uint32 `json:"active_comm_id"`
	PassiveCommID uint32 `json:"passive_comm_id,omitempty"`
	ServiceID     uint64 `json:"service_id,omitempty"`
	// rdma_cm's addresses and ports (an IP CM service ID), when the REQ had them.
	ActiveIP    string `json:"active_ip,omitempty"`
	ActivePort  uint16 `json:"active_port,omitempty"`
	PassiveIP   string `json:"passive_ip,omitempty"`
	PassivePort uint16 `json:"passive_port,omitempty"`
	// The QPs (REQ: active, REP: passive) and the PSNs each end starts its
	// requests at: the REP's starting PSN is the active end's, the REQ's
	// the passive end's (each names the PSN its sender expects to receive).
	ActiveQPN   uint32 `json:"active_qpn,omitempty"`
	ActivePSN   uint32 `json:"active_psn,omitempty"`
	PassiveQPN  uint32 `json:"passive_qpn,omitempty"`
	PassivePSN  uint32 `json:"passive_psn,omitempty"`
	REQNs       int64  `json:"req_ns,omitempty"`
	REPNs       int64  `json:"rep_ns,omitempty"`
	RTUNs       int64  `json:"rtu_ns,omitempty"`
	REQToREPNs  int64  `json:"req_to_rep_ns,omitempty"`
	REPToRTUNs  int64  `json:"rep_to_rtu_ns,omitempty"`
	REQs        int    `json:"reqs"` // REQs seen (more than one: resent)
	MRAs        int    `json:"mras,omitempty"`
	PathChanges int    `json:"path_changes,omitempty"` // LAP messages
	// Reject is the REJ's reason, with its name; RejectedMessage says what
	// it rejected (0 REQ, 1 REP, 2 other).
	RejectReason     uint16 `json:"reject_reason,omitempty"`
	RejectReasonName string `json:"reject_reason_name,omitempty"`
	RejectedMessage  *uint8 `json:"rejected_message,omitempty"`
	DREQNs           int64  `json:"dreq_ns,omitempty"`
	DREPNs           int64  `json:"drep_ns,omitempty"`
	// State: "established" (RTU seen), "rejected", "disconnected" (DREQ
	// or DREP seen), "incomplete" (a REQ, or REQ and REP, and nothing
	// after), "unseen_setup" (messages of a connection whose REQ the
	// capture does not hold).
	State   string `json:"state"`
	FirstNs int64  `json:"first_ns"`
	LastNs  int64  `json:"last_ns"`
}

// CMReport is the cm analysis' result.
type CMReport struct {
	Input       Input          `json:"input"`
	Messages    map[string]int `json:"messages"` // per message name: REQ, MRA, REJ, ...
	Established int            `json:"established"`
	Rejected    int            `json:"rejected"`
	Incomplete  int            `json:"incomplete"`
	// MaxConnections is set, with OtherMessages, when connections past the
	// bound were only counted.
	MaxConnections int            `json:"max_connections,omitempty"`
	OtherMessages  int            `json:"other_messages,omitempty"`
	Connections    []CMConnection `json:"connections"`
}

// cmKey names a connection: its active end's address (FlowKey without QP,
// active end as Src) and communication ID.
type cmKey struct {
	ends decode.FlowKey
	id   uint32
}

// CMAnalysis is the cm analysis (an Analysis driven by Run over a Stream
// opened with StreamOptions.CM).
type CMAnalysis struct {
	max      int
	conns    map[cmKey]*CMConnection
	passive  map[cmKey]*CMConnection // by the passive end's address and ID, once the REP names it
	order    []*CMConnection
	messages [decode.CMAltPathResponse - decode.CMRequest + 1]int
	other    int
}

// NewCMAnalysis returns an empty analysis keeping at most maxConnections
// apart (0: DefaultMaxConnections).
func NewCMAnalysis(maxConnections int) (*CMAnalysis, error) {
	switch {
	case maxConnections == 0:
		maxConnections = DefaultMaxConnections
	case maxConnections < 0 || maxConnections > MaxConnectionsLimit:
		return nil, fmt.Errorf("bound of %d connections: want 1 to %d", maxConnections, MaxConnectionsLimit)
	}
	return &CMAnalysis{max: maxConnections, conns: map[cmKey]*CMConnection{}, passive: map[cmKey]*CMConnection{}}, nil
}

// Err is always nil: a CM message the analysis cannot place is counted.
func (a *CMAnalysis) Err() error { return nil }

// Add reads one packet; packets that are not CM messages are passed over.
func (a *CMAnalysis) Add(p *Packet) {
	m := p.CM
	if m == nil || m.Message == 0 {
		return
	}
	a.messages[m.Message-decode.CMRequest]++
	from, to := pairOf(p.Key), reversePair(p.Key)
	var c *CMConnection
	switch m.Message {
	case decode.CMRequest:
		if c = a.conns[cmKey{from, m.LocalCommID}]; c == nil {
			c = a.open(cmKey{from, m.LocalCommID}, p)
			if c == nil {
				return
			}
		}
		c.REQs++
		if c.REQNs == 0 {
			c.REQNs = p.TsNs
		}
		c.ServiceID, c.ActiveQPN, c.PassivePSN = m.ServiceID, m.QPN, m.StartingPSN
		if m.SrcIP.IsValid() {
			c.ActiveIP, c.ActivePort, c.PassiveIP, c.PassivePort = m.SrcIP.String(), m.SrcPort, m.DstIP.String(), m.DstPort
		}
	case decode.CMSIDRRequest, decode.CMSIDRReply:
		return // service ID resolution: counted, no connection
	default:
		c = a.find(m, from, to, p)
		if c == nil {
			return
		}
	}
	c.LastNs = p.TsNs
	switch m.Message {
	case decode.CMReply:
		c.PassiveCommID, c.PassiveQPN, c.ActivePSN = m.LocalCommID, m.QPN, m.StartingPSN
		a.passive[cmKey{from, m.LocalCommID}] = c
		if c.REPNs == 0 {
			c.REPNs = p.TsNs
		}
	case decode.CMReadyToUse:
		if c.RTUNs == 0 {
			c.RTUNs = p.TsNs
		}
	case decode.CMMessageRcptAck:
		c.MRAs++
	case decode.CMReject:
		c.RejectReason, c.RejectReasonName = m.RejectReason, decode.RejectReasonName(m.RejectReason)
		t := m.MessageTarget
		c.RejectedMessage = &t
	case decode.CMLoadAltPath:
		c.PathChanges++
	case decode.CMDisconnectRequest:
		if c.DREQNs == 0 {
			c.DREQNs = p.TsNs
		}
	case decode.CMDisconnectReply:
		if c.DREPNs == 0 {
			c.DREPNs = p.TsNs
		}
	}
}

// find returns the connection a message other than REQ belongs to: sent
// by the active end (its local ID), or by the passive end (the remote ID
// is the active end's; or its local ID, once a REP named it). A message of
// a connection whose REQ was not captured opens one, the sender taken as
// the passive end when it answers (MRA, REJ, REP, APR, DREP), else as the
// active end.
func (a *CMAnalysis) find(m *decode.CMMessage, from, to decode.FlowKey, p *Packet) *CMConnection {
	if c := a.conns[cmKey{from, m.LocalCommID}]; c != nil {
		return c
	}
	if c := a.conns[cmKey{to, m.RemoteCommID}]; c != nil {
		return c
	}
	if c := a.passive[cmKey{from, m.LocalCommID}]; c != nil {
		return c
	}
	answer := m.Message == decode.CMMessageRcptAck || m.Message == decode.CMReject || m.Message == decode.CMReply ||
		m.Message == decode.CMAltPathResponse || m.Message == decode.CMDisconnectReply
	if answer && m.RemoteCommID != 0 {
		return a.open(cmKey{to, m.RemoteCommID}, p)
	}
	return a.open(cmKey{from, m.LocalCommID}, p)
}

// open makes a connection whose active end is k (nil past the bound).
func (a *CMAnalysis) open(k cmKey, p *Packet) *CMConnection {
	if len(a.order) >= a.max {
		a.other++
		return nil
	}
	c := &CMConnection{Transport: k.ends.Transport.String(), Active: endName(k.ends, true), Passive: endName(k.ends, false),
		ActiveCommID: k.id, FirstNs: p.TsNs}
	a.conns[k] = c
	a.order = append(a.order, c)
	return c
}

// endName names one end of a key: its source (src) or its destination.
func endName(k decode.FlowKey, src bool) string {
	if k.Transport == decode.TransportIB {
		if src {
			return fmt.Sprintf("lid:%d", k.SLID)
		}
		return fmt.Sprintf("lid:%d", k.DLID)
	}
	if src {
		return k.Src.String()
	}
	return k.Dst.String()
}

// Report returns the connections in the order the capture first showed
// them, with their states and times; it changes nothing.
func (a *CMAnalysis) Report(s *Stream) (*CMReport, error) {
	r := &CMReport{Messages: map[string]int{}, Connections: make([]CMConnection, 0, len(a.order))}
	if s != nil {
		r.Input = s.Input()
	}
	for i, n := range a.messages {
		if n > 0 {
			r.Messages[decode.CMMessageName(uint16(i)+decode.CMRequest)] = n
		}
	}
	for _, c := range a.order {
		cc := *c
		if cc.REQNs != 0 && cc.REPNs != 0 {
			cc.REQToREPNs = cc.REPNs - cc.REQNs
		}
		if cc.REPNs != 0 && cc.RTUNs != 0 {
			cc.REPToRTUNs = cc.RTUNs - cc.REPNs
		}
		switch {
		case cc.RejectedMessage != nil:
			cc.State = "rejected"
			r.Rejected++
		case cc.DREQNs != 0 || cc.DREPNs != 0:
			cc.State = "disconnected"
		case cc.RTUNs != 0:
			cc.State = "established"
		case cc.REQNs == 0:
			cc.State = "unseen_setup"
		default:
			cc.State = "incomplete"
			r.Incomplete++
		}
		if cc.RTUNs != 0 {
			r.Established++
		}
		r.Connections = append(r.Connections, cc)
	}
	slices.SortStableFunc(r.Connections, func(x, y CMConnection) int { return int(min(max(x.FirstNs-y.FirstNs, -1), 1)) })
	if a.other > 0 {
		r.MaxConnections, r.OtherMessages = a.max, a.other
	}
	return r, nil
}

package sim

// node is a host (one port, flows, ACK generation) or an input-queued switch.
type node struct {
	name     string
	isSwitch bool
	lid      uint16
	ports    []*port
	route    map[uint16]*port // switch: destination LID to output port

	// Host: flows it sends, per VL, and ACKs waiting to go, per VL.
	flows  [][]*flowState
	flowRR []int
	acks   [][]*packet
}

package sim

import "github.com/ibscope/ibscope/decode"

// blockBytes is one flow-control credit.
const blockBytes = decode.BlockBytes

// Header sizes of the packets the simulator builds, in bytes.
const (
	lrhBytes  = decode.LRHLen
	bthBytes  = decode.BTHLen
	rethBytes = decode.RETHLen
	aethBytes = decode.AETHLen
	icrcBytes = decode.ICRCLen
	vcrcBytes = decode.VCRCLen
)

// packet is one frame on a link: a data packet (RDMA WRITE, SEND, ACK) or a
// flow-control packet.
type packet struct {
	fcp bool
	// Ethernet: a PFC frame (priority_enable_vector and time[0..7]).
	pfc       bool
	pfcEnable uint8
	pfcQuanta [decode.PFCPriorities]uint16
	// Flow-control packet fields (mod 4096).
	fcpOp        uint8
	fctbs, fccl  uint16
	vl           uint8 // data packets: the VL too (SL2VL is the identity)
	sl           uint8
	slid, dlid   uint16
	op           decode.Opcode
	qp           uint32
	psn          uint32
	ackReq       bool
	payloadBytes int
	dmaLenBytes  uint32 // RETH DMA length (first packet of a WRITE)
	msn          uint32 // AETH MSN (ACKs)

	wireBytes int // LRH through VCRC (6 for an FCP); Ethernet: the frame with its FCS
	blocks    int // credits the packet costs: ceil(wireBytes/64)

	flow      int   // index into the run's flows, -1 for ACKs
	injectPs  int64 // when the source started sending it
	arrivedPs int64 // when its tail last arrived at a switch input
	queuePs   int64 // time spent waiting in switch input buffers
	inPort    *port // switch input port holding its blocks while it waits
	outPort   *port // switch output port it is routed to
	heldBytes int   // Ethernet: bytes it holds in the switch input queue
	// Ethernet: the port that last put it on a link (its frame goes from
	// that port's MAC to its peer's), and the switches it has passed (each
	// routes it, taking one off the IP TTL).
	link   *port
	routed uint8
	probe  *probe // Ethernet: an IFA 2.0 probe's hops so far, nil for other packets
	// queueAheadBytes is, for a probe at a switch input, the bytes queued
	// there for its priority when it arrived.
	queueAheadBytes int
}

// dataWireBytes is a data packet's size from the first byte of the LRH
// through the VCRC, which is what flow control counts.
func dataWireBytes(extBytes, payloadBytes int) int {
	pad := (4 - payloadBytes%4) % 4
	return lrhBytes + bthBytes + extBytes + payloadBytes + pad + icrcBytes + vcrcBytes
}

// blocksOf is the credit cost of a data packet of wireBytes (LRH through
// VCRC). IBA Vol. 1, 7.9.4 (flow control): a data packet consumes as many
// 64-byte blocks as its length from the first byte of the LRH through the
// VCRC, rounded up. The 2015 study's 2074-byte packets (LRH 8 + BTH 12 +
// 2048 data + ICRC 4 + VCRC 2) took 33 blocks, which agrees.
func blocksOf(wireBytes int) int { return (wireBytes + blockBytes - 1) / blockBytes }

// maxPacketBlocks is the credit cost of the largest packet at an MTU: a
// first RDMA WRITE packet, which carries a RETH.
func maxPacketBlocks(mtuBytes int) int { return blocksOf(dataWireBytes(rethBytes, mtuBytes)) }

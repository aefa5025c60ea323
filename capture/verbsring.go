package capture

import "fmt"

// Receive ring limits for the verbs backend.
const (
	verbsMinSlots     = 256
	verbsRepostBatch  = 64   // completed slots reposted per doorbell
	verbsSlotAlign    = 64   // bytes: slots start on cache lines
	verbsIBFrameBytes = 4224 // LRH+GRH+BTH+extended headers+4096-byte MTU payload+ICRC+VCRC, rounded up
	verbsEthOverhead  = 14 + 8 + 4
)

// ringPlan is the shape of the verbs receive ring: Slots receive buffers of
// SlotBytes each, all in one registered memory region.
type ringPlan struct {
	Slots     int // receive work requests kept posted
	SlotBytes int // bytes per buffer: the largest frame the port can deliver
}

// planRing sizes the ring from -B (ringBytes), the largest frame the port
// delivers (maxFrameBytes) and the device's limit on receive work requests
// per QP (maxWR). The device cannot cut packets to a snap length, so every
// slot holds a whole frame; the snap length applies when writing.
func planRing(ringBytes, maxFrameBytes, maxWR int) (ringPlan, error) {
	if maxFrameBytes <= 0 {
		return ringPlan{}, fmt.Errorf("verbs ring: frame size %d bytes", maxFrameBytes)
	}
	slot := (maxFrameBytes + verbsSlotAlign - 1) / verbsSlotAlign * verbsSlotAlign
	n := ringBytes / slot
	if maxWR > 0 && n > maxWR {
		n = maxWR
	}
	if n < verbsMinSlots {
		if maxWR > 0 && maxWR < verbsMinSlots {
			return ringPlan{}, fmt.Errorf("verbs ring: the device allows %d receive requests per QP, fewer than the %d a capture needs", maxWR, verbsMinSlots)
		}
		n = verbsMinSlots
	}
	return ringPlan{Slots: n, SlotBytes: slot}, nil
}

// maxFrameBytes is the largest frame a port delivers: an IB packet at the
// 4096-byte MTU, or an Ethernet frame at the netdev's MTU with a VLAN tag
// and FCS.
func maxFrameBytes(linkLayer string, netdevMTU int) int {
	if linkLayer == "InfiniBand" {
		return verbsIBFrameBytes
	}
	if netdevMTU <= 0 {
		netdevMTU = 9000 // unknown: assume jumbo frames, the RoCE norm
	}
	return netdevMTU + verbsEthOverhead
}

// recvRing keeps the accounting of the posted receive buffers: which slots
// the device holds, which ones are waiting to be posted again, and how close
// the device came to running out (when it does, it drops packets and counts
// them in out_of_buffer).
type recvRing struct {
	plan        ringPlan
	posted      int      // slots the device holds
	pending     []uint32 // slots completed and read, waiting to be reposted
	emptyEvents uint64   // times the device was left with no posted slot
}

func newRecvRing(plan ringPlan) *recvRing {
	r := &recvRing{plan: plan, pending: make([]uint32, 0, plan.Slots)}
	for i := 0; i < plan.Slots; i++ {
		r.pending = append(r.pending, uint32(i))
	}
	return r
}

// filled is how many slots the device filled that are not posted again:
// read, or waiting in pending to be reposted. (Completions polled but not
// yet read still count as posted.)
func (r *recvRing) filled() int { return r.plan.Slots - r.posted }

// offset returns the byte offset of slot id in the memory region.
func (r *recvRing) offset(id uint32) int { return int(id) * r.plan.SlotBytes }

// completed records that the device filled slot id (a completion's wr_id)
// and returns the slot's byte offset. The caller reads the packet, then the
// slot waits in pending until the next repost.
func (r *recvRing) completed(id uint64) (int, error) {
	if id >= uint64(r.plan.Slots) {
		return 0, fmt.Errorf("verbs ring: completion for slot %d of %d", id, r.plan.Slots)
	}
	if r.posted == 0 {
		return 0, fmt.Errorf("verbs ring: completion for slot %d while no slot is posted", id)
	}
	r.posted--
	if r.posted == 0 {
		r.emptyEvents++
	}
	r.pending = append(r.pending, uint32(id))
	return r.offset(uint32(id)), nil
}

// toRepost returns the slots to post again now: a batch once enough have
// gathered, or all of them when force is set (an idle poll, or the ring
// running low). The caller posts them and then calls reposted.
func (r *recvRing) toRepost(force bool) []uint32 {
	if len(r.pending) == 0 || (!force && len(r.pending) < verbsRepostBatch && r.posted > r.plan.Slots/2) {
		return nil
	}
	return r.pending
}

// reposted records that the first n slots from toRepost went back to the device.
func (r *recvRing) reposted(n int) {
	r.posted += n
	r.pending = append(r.pending[:0], r.pending[n:]...)
}

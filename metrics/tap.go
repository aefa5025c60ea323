package metrics

import (
	"sync/atomic"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
)

// headerBytes is how much of each frame the tap copies for the flow
// analysis: every header decode reads (Ethernet, IPv6, UDP, BTH and its
// extended headers, about 100 bytes at most; native IB's LRH, GRH and
// BTH and its extended headers the same) fits, and the payload is not needed.
const headerBytes = 128

// DefaultQueuePackets is the tap's queue between the capture loop and the
// analysis goroutine, in packets.
const DefaultQueuePackets = 1 << 14

// tapSlot is one queued frame's headers.
type tapSlot struct {
	tsNs    int64
	wireLen int
	capLen  int // len(Packet.Data)
	n       int // bytes copied into data
	data    [headerBytes]byte
}

// tap is a single-producer single-consumer ring: the capture loop (through
// Source.Next) copies each frame's headers into the next free slot and
// never waits; when the analysis falls behind, the frame is counted in
// lost instead. Producer and consumer meet only at the two atomic indexes,
// each on its own cache line; the producer pays one atomic store a packet
// and reads the consumer's index only when its cached copy says full.
//
// A consumer that found the ring empty for a while parks (park); the
// producer reads parked with each packet (a line that only changes when
// the consumer parks or wakes) and wakes it with the first packet after.
type tap struct {
	slots     []tapSlot
	mask      uint64
	wake      chan struct{} // capacity 1: put's signal to a parked consumer
	_         [64]byte      // what the producer writes, on cache lines of its own
	head      atomic.Uint64 // next slot the producer fills
	tailSeen  uint64        // the producer's copy of tail
	lost      atomic.Uint64 // frames not queued because the ring was full
	lostBytes atomic.Uint64 // their bytes
	_         [64]byte
	parked    atomic.Bool // the consumer waits on wake
	_         [64]byte
	tail      atomic.Uint64 // next slot the consumer reads
}

func newTap(packets int) *tap {
	n := 1
	for n < packets {
		n <<= 1
	}
	return &tap{slots: make([]tapSlot, n), mask: uint64(n - 1), wake: make(chan struct{}, 1)}
}

// put queues p's headers, or counts p lost when the ring is full.
func (t *tap) put(p *capfile.Packet) {
	h := t.head.Load() // only put stores head: a plain load
	if h-t.tailSeen > t.mask {
		if t.tailSeen = t.tail.Load(); h-t.tailSeen > t.mask {
			t.lost.Add(1)
			t.lostBytes.Add(uint64(len(p.Data)))
			return
		}
	}
	s := &t.slots[h&t.mask]
	s.tsNs, s.wireLen, s.capLen = p.TsNs, p.WireLenBytes, len(p.Data)
	s.n = copy(s.data[:], p.Data)
	t.head.Store(h + 1)
	if t.parked.Load() && t.parked.CompareAndSwap(true, false) {
		select {
		case t.wake <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// park waits until put queues a packet or done is closed; it returns at
// once when a packet is queued already. parked is stored before the ring
// is looked at, and put stores head before it reads parked (atomics are
// sequentially consistent in Go), so either park sees the packet or put
// sees parked: a wake-up is never lost. A signal left over from an earlier
// park only makes the consumer look at the ring once more.
func (t *tap) park(done <-chan struct{}) {
	t.parked.Store(true)
	if _, n := t.queued(1); n > 0 {
		t.parked.Store(false)
		return
	}
	select {
	case <-t.wake:
	case <-done:
		t.parked.Store(false)
	}
}

// queued returns the oldest queued slots, at most max: the n slots from
// index first on (slot(first), slot(first+1), ...), which stay the
// consumer's until release(n). head is read once for them all, so the
// consumer touches the producer's cache line once a batch, not once a packet.
func (t *tap) queued(max int) (first uint64, n int) {
	first = t.tail.Load() // only release stores tail: a plain load
	return first, int(min(t.head.Load()-first, uint64(max)))
}

// slot is the slot of queue index i.
func (t *tap) slot(i uint64) *tapSlot { return &t.slots[i&t.mask] }

// release hands the n oldest queued slots back to the producer.
func (t *tap) release(n int) { t.tail.Store(t.tail.Load() + uint64(n)) }

// tapSource is a capture.Source whose packets are also queued to the tap.
type tapSource struct {
	capture.Source
	t *tap
}

func (s tapSource) Next() (capfile.Packet, error) {
	p, err := s.Source.Next()
	if err == nil {
		s.t.put(&p)
	}
	return p, err
}

package metrics

import (
	"sync/atomic"

	"github.com/ibscope/ibscope/capture"
)

// headerBytes is how much of each frame the tap copies for the flow
// analysis: every header decode reads (Ethernet, IPv6, UDP, BTH and its
// extended headers) fits, and the payload is not needed.
const headerBytes = 192

// DefaultQueuePackets is the tap's queue between the capture loop and the
// analysis goroutine, in packets.
const DefaultQueuePackets = 1 << 14

// tapSlot is one queued frame's headers.
type tapSlot struct {
	tsNs    int64
	wireLen int
	n       int
	data    [headerBytes]byte
}

// tap is a single-producer single-consumer ring: the capture loop (through
// Source.Next) copies each frame's headers into the next free slot and
// never waits; when the analysis falls behind, the frame is counted in
// lost instead. Producer and consumer meet only at the two atomic indexes.
type tap struct {
	slots []tapSlot
	mask  uint64
	head  atomic.Uint64 // next slot the producer fills
	tail  atomic.Uint64 // next slot the consumer reads
	lost  atomic.Uint64 // frames not queued because the ring was full
	bytes atomic.Uint64 // bytes of every frame offered (only the producer adds)
}

func newTap(packets int) *tap {
	n := 1
	for n < packets {
		n <<= 1
	}
	return &tap{slots: make([]tapSlot, n), mask: uint64(n - 1)}
}

// put queues p's headers, or counts p lost when the ring is full.
func (t *tap) put(p *capture.Packet) {
	t.bytes.Add(uint64(len(p.Data)))
	h := t.head.Load()
	if h-t.tail.Load() > t.mask {
		t.lost.Add(1)
		return
	}
	s := &t.slots[h&t.mask]
	s.tsNs, s.wireLen = p.TsNs, p.WireLenBytes
	s.n = copy(s.data[:], p.Data)
	t.head.Store(h + 1)
}

// get returns the oldest queued slot, nil when none; release hands it back.
func (t *tap) get() *tapSlot {
	tl := t.tail.Load()
	if tl == t.head.Load() {
		return nil
	}
	return &t.slots[tl&t.mask]
}

func (t *tap) release() { t.tail.Add(1) }

// tapSource is a capture.Source whose packets are also queued to the tap.
type tapSource struct {
	capture.Source
	t *tap
}

func (s tapSource) Next() (capture.Packet, error) {
	p, err := s.Source.Next()
	if err == nil {
		s.t.put(&p)
	}
	return p, err
}

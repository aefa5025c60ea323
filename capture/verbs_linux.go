//go:build linux && (amd64 || arm64)

package capture

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture/internal/ibverbs"
	"github.com/ibscope/ibscope/decode"
)

// Idle polling backs off from verbsSpinMin to verbsSpinMax between empty
// polls: the posted ring absorbs what arrives meanwhile (at 200 µs and
// 10 Mpps, 2000 of the thousands of posted slots).
const (
	verbsSpinMin      = 2 * time.Microsecond
	verbsSpinMax      = 200 * time.Microsecond
	verbsReanchorEach = time.Second
)

// VerbsAvailable returns nil when the verbs sniffer can run here, that is
// when libibverbs ($IBSCOPE_LIBIBVERBS, or libibverbs.so.1) loads and has
// every function the sniffer calls; otherwise an error that wraps
// ErrVerbsUnavailable and says what to install.
func VerbsAvailable() error {
	_, err := loadVerbs()
	return err
}

func loadVerbs() (*ibverbs.Lib, error) {
	lib, err := ibverbs.Open(libibverbsPath())
	if err != nil {
		return nil, fmt.Errorf("%w: %v; %s", ErrVerbsUnavailable, err, installVerbsAdvice)
	}
	return lib, nil
}

// verbsSource captures from an RDMA port with a raw packet QP that a sniffer
// flow feeds with every packet of the port, both directions.
type verbsSource struct {
	s           *ibverbs.Sniffer
	name        string
	port        RDMAPort
	mem         []byte // the ring's memory: mmap'd, so the GC never sees it and the device may keep it
	ring        *recvRing
	clock       *hcaClock // nil when completions carry wall-clock ns
	anchorAt    time.Time
	snap        int
	filter      frameFilter
	notRoCE     uint64
	pollTimeout time.Duration
	comps       []ibverbs.Completion // the last poll's, valid until the next
	next        int
	drops       *dropCounter
	errs        uint64 // completions with an error status
	firstErr    string // the status of the first of them
	received    uint64
	last        int64 // slot of the packet handed out last, -1 if none
}

func openVerbs(t Target, c Config) (Source, error) {
	dev, p := t.Device, t.Port
	if err := checkTimestampType(dev.Name, c.TimestampType, []string{TimestampAdapter}); err != nil {
		return nil, err
	}
	lib, err := loadVerbs()
	if err != nil {
		return nil, fmt.Errorf("capture on %s: %w", dev.Name, err)
	}
	if portLinkType(p) != decode.LinkTypeEthernet {
		c.All = true // the RoCE rule is for Ethernet frames
	}
	_, filter, err := captureFilter(c, portLinkType(p))
	if err != nil {
		return nil, fmt.Errorf("capture on %s port %d: %w", dev.Name, p.Num, err)
	}
	v := &verbsSource{name: fmt.Sprintf("%s port %d", dev.Name, p.Num), port: p, snap: c.SnapLenBytes,
		filter: filter, pollTimeout: time.Duration(c.PollTimeoutMs) * time.Millisecond, last: -1}
	if v.s, err = lib.OpenDevice(dev.Name); err != nil {
		return nil, verbsError(dev.Name, p.Netdev, err)
	}
	ok := false
	defer func() {
		if !ok {
			v.Close()
		}
	}()
	info, err := v.s.Query()
	if err != nil {
		return nil, verbsError(dev.Name, p.Netdev, err)
	}
	plan, err := planRing(c.RingBytes, portFrameBytes(p), info.MaxQPWR)
	if err != nil {
		return nil, fmt.Errorf("capture on %s: %w", v.name, err)
	}
	v.ring = newRecvRing(plan)
	v.mem, err = unix.Mmap(-1, 0, plan.Slots*plan.SlotBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("capture on %s: ring memory (%d bytes): %w", v.name, plan.Slots*plan.SlotBytes, err)
	}
	// Each slot is a page or more apart: on 4 kB pages every packet would
	// take a TLB miss (on the host, and an IOTLB or MTT miss on the
	// device). Huge pages where the kernel offers them; without, the
	// ring works the same, slower.
	_ = unix.Madvise(v.mem, unix.MADV_HUGEPAGE)
	// The pages are faulted in now, not by the first packets: a device's
	// memory registration pins them here anyway, and a fault (with huge
	// pages, a compaction) in the receive loop stalls it.
	_ = unix.Madvise(v.mem, unix.MADV_POPULATE_WRITE)
	if err := v.s.Setup(p.Num, uint32(plan.Slots), unsafe.Pointer(&v.mem[0]), len(v.mem), true); err != nil {
		return nil, verbsError(dev.Name, p.Netdev, err)
	}
	if !v.s.Wallclock {
		if v.clock, err = newHCAClock(info.CoreClockKHz, info.TimestampMask); err != nil {
			return nil, fmt.Errorf("capture on %s: %w", v.name, err)
		}
		if err := v.reanchor(); err != nil {
			return nil, err
		}
	}
	if err := v.repost(true); err != nil {
		return nil, err
	}
	// Counters are read before the flow exists, so every drop of the
	// capture is counted and none before it.
	v.drops = newDropCounter(t.PortDir())
	if err := v.s.AttachFlow(p.Num); err != nil {
		return nil, verbsError(dev.Name, p.Netdev, err)
	}
	ok = true
	return v, nil
}

// verbsError explains an error of the verbs binding in one line: the step
// and what it needs (verbsStageError; netdev is the port's, "" if none), or
// that libibverbs does not list the device.
func verbsError(device, netdev string, err error) error {
	var ce *ibverbs.CallError
	if errors.As(err, &ce) {
		return verbsStageError(device, netdev, ce.Step, ce.Errno)
	}
	var nl *ibverbs.NotListedError
	if errors.As(err, &nl) {
		return fmt.Errorf("capture on %s: %w (libibverbs lists: %s)", device, errNoDevice, namesOrNone(nl.Listed))
	}
	return fmt.Errorf("capture on %s: %w", device, err)
}

// reanchor pairs the device clock with the host's wall clock.
func (v *verbsSource) reanchor() error {
	before := time.Now()
	cycles, err := v.s.RawClock()
	after := time.Now()
	if err != nil {
		return verbsError(v.name, v.port.Netdev, err)
	}
	v.clock.anchor(cycles, before.UnixNano(), after.UnixNano())
	v.anchorAt = after
	return nil
}

// repost gives the slots read back to the device, when enough have
// gathered or force is set.
func (v *verbsSource) repost(force bool) error {
	if ids := v.ring.toRepost(force); len(ids) > 0 {
		return v.post(ids)
	}
	return nil
}

// post posts the receive requests of slots ids.
func (v *verbsSource) post(ids []uint32) error {
	posted, err := v.s.PostRecv(ids, uint32(v.ring.plan.SlotBytes))
	v.ring.reposted(posted)
	if err != nil {
		return verbsError(v.name, v.port.Netdev, err)
	}
	return nil
}

func (v *verbsSource) Next() (capfile.Packet, error) {
	for {
		if v.last >= 0 {
			// The caller is done with the last packet: its slot may go back.
			v.last = -1
			// repost(false), without a call per packet.
			if ids := v.ring.toRepost(false); len(ids) > 0 {
				if err := v.post(ids); err != nil {
					return capfile.Packet{}, err
				}
			}
		}
		if v.next >= len(v.comps) {
			if err := v.poll(); err != nil {
				return capfile.Packet{}, err
			}
		}
		for v.next < len(v.comps) {
			c := &v.comps[v.next]
			v.next++
			off, err := v.ring.completed(c.WRID)
			if err != nil {
				return capfile.Packet{}, fmt.Errorf("capture on %s: %w", v.name, err)
			}
			v.last = int64(c.WRID)
			if c.Status == ibverbs.StatusFlushErr {
				// The queue is in the error state (after a failed
				// completion, or a device error): every buffer comes
				// back flushed, empty, at once. Polling on would spin.
				return capfile.Packet{}, queueErrorState(v.name, v.firstErr)
			}
			if c.Status != ibverbs.StatusSuccess {
				// Lost: a frame larger than a slot.
				v.errs++
				if v.firstErr == "" {
					v.firstErr = v.s.StatusString(c.Status)
				}
				continue
			}
			v.received++
			n := int(c.ByteLen)
			whole := v.mem[off : off+min(n, v.ring.plan.SlotBytes)]
			// A sniffer flow has no kernel filter: the port's other traffic
			// is dropped here, by the rule the AF_PACKET filter applies.
			if !v.filter.keep(whole) {
				v.notRoCE++
				continue
			}
			ts := int64(c.TS)
			if v.clock != nil {
				ts = v.clock.toNs(c.TS)
			}
			return capfile.Packet{Data: whole[:min(len(whole), v.snap)], TsNs: ts, WireLenBytes: n}, nil
		}
	}
}

// poll waits for the next batch of completions, backing off while the CQ
// is empty, and returns ErrTimeout after the poll interval.
func (v *verbsSource) poll() error {
	idle := verbsSpinMin
	var start time.Time // read when the CQ is first found empty: a busy CQ costs no clock read
	for {
		comps, err := v.s.Poll()
		if err != nil {
			return verbsError(v.name, v.port.Netdev, err)
		}
		if len(comps) > 0 {
			v.comps, v.next = comps, 0
			break
		}
		// Idle: give every read slot back before waiting.
		if err := v.repost(true); err != nil {
			return err
		}
		if start.IsZero() {
			start = time.Now()
		}
		// The time waited is measured: a sleep of a few µs lasts far
		// longer (timer slack, a busy machine), five times the poll
		// interval when the requested sleeps were summed.
		if time.Since(start) >= v.pollTimeout {
			return ErrTimeout
		}
		time.Sleep(idle)
		idle = min(2*idle, verbsSpinMax)
	}
	if v.clock != nil && time.Since(v.anchorAt) > verbsReanchorEach {
		return v.reanchor()
	}
	return nil
}

func (v *verbsSource) LinkType() int  { return portLinkType(v.port) }
func (v *verbsSource) Device() string { return v.name }

func (v *verbsSource) Stats() (Stats, error) {
	st := Stats{Received: v.received + v.errs, CompletionErrors: v.errs, NotRoCE: v.notRoCE, RingEmptied: v.ring.emptyEvents,
		RingFilled: uint64(v.ring.filled() + len(v.comps) - v.next), RingSlots: uint64(v.ring.plan.Slots)}
	if v.drops != nil {
		st.DeviceDrops, st.DeviceDropsKnown = v.drops.drops()
	}
	return st, nil
}

// Close releases the flow, QP, memory registration, CQ, protection domain
// and context, in that order (the reverse of their creation), then the
// ring's memory, which the device no longer uses.
func (v *verbsSource) Close() error {
	var err error
	if v.s != nil {
		err = v.s.Close()
	}
	v.comps = nil
	if v.mem != nil {
		unix.Munmap(v.mem)
		v.mem = nil
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", v.name, err)
	}
	return nil
}

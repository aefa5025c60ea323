//go:build linux

package txring

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ring is an AF_PACKET TPACKET_V2 transmit ring bound to one interface.
type Ring struct {
	fd        int
	ring      []byte
	frames    int
	frameSize int
	next      int
}

const (
	txFrameSize = 2048
	txFrames    = 4096
	txDataOff   = 32 // TPACKET_ALIGN(sizeof(struct tpacket2_hdr)): where a frame's data goes
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Open opens a sender on ifname, in the calling thread's network namespace.
func Open(ifname string) (*Ring, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tx socket: %w", err)
	}
	t := &Ring{fd: fd, frames: txFrames, frameSize: txFrameSize}
	fail := func(what string, err error) (*Ring, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("tx ring: %s: %w", what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return fail("TPACKET_V2", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		return fail("qdisc bypass", err)
	}
	req := unix.TpacketReq{Block_size: 1 << 20, Block_nr: txFrames * txFrameSize >> 20, Frame_size: txFrameSize, Frame_nr: txFrames}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
		return fail("PACKET_TX_RING", err)
	}
	if t.ring, err = unix.Mmap(fd, 0, txFrames*txFrameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return fail("mmap", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index, Protocol: htons(unix.ETH_P_ALL)}); err != nil {
		return fail("bind", err)
	}
	return t, nil
}

func (t *Ring) status(i int) *uint32 { return (*uint32)(unsafe.Pointer(&t.ring[i*t.frameSize])) }

// queue puts one frame into the ring, waiting for a free slot.
func (t *Ring) queue(frame []byte) error {
	if len(frame) > t.frameSize-txDataOff {
		return fmt.Errorf("tx ring: %d-byte frame exceeds the %d-byte slot", len(frame), t.frameSize-txDataOff)
	}
	st := t.status(t.next)
	for atomic.LoadUint32(st) != unix.TP_STATUS_AVAILABLE {
		if err := t.flush(); err != nil { // the ring is full: let the kernel send
			return err
		}
	}
	base := t.next * t.frameSize
	copy(t.ring[base+txDataOff:], frame)
	*(*uint32)(unsafe.Pointer(&t.ring[base+4])) = uint32(len(frame)) // tp_len
	atomic.StoreUint32(st, unix.TP_STATUS_SEND_REQUEST)
	t.next = (t.next + 1) % t.frames
	return nil
}

// flush has the kernel send every queued frame and waits until it has.
func (t *Ring) flush() error {
	_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(t.fd), 0, 0, 0, 0, 0)
	if e != 0 && e != unix.EAGAIN {
		return fmt.Errorf("tx ring: sendto: %w", e)
	}
	return nil
}

// Send transmits n frames, cycling through frames, at pps frames per
// second (0: as fast as the kernel takes them), and returns the rate
// achieved.
func (t *Ring) Send(frames [][]byte, n int, pps float64) (float64, error) {
	const slot = time.Millisecond
	perSlot := n
	if pps > 0 {
		perSlot = max(1, int(pps*slot.Seconds()))
	}
	start := time.Now()
	for sent := 0; sent < n; {
		k := min(perSlot, n-sent)
		for i := range k {
			if err := t.queue(frames[(sent+i)%len(frames)]); err != nil {
				return 0, err
			}
		}
		if err := t.flush(); err != nil {
			return 0, err
		}
		sent += k
		if pps > 0 {
			// Pace against the start, not the last slot, so small sleeps'
			// overshoot does not accumulate.
			due := start.Add(time.Duration(float64(sent) / pps * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
	}
	// Wait for the last frames to leave.
	for i := 0; i < t.frames; i++ {
		for atomic.LoadUint32(t.status(i)) == unix.TP_STATUS_SEND_REQUEST || atomic.LoadUint32(t.status(i)) == unix.TP_STATUS_SENDING {
			t.flush()
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// Close releases the ring and the socket.
func (t *Ring) Close() {
	unix.Munmap(t.ring)
	unix.Close(t.fd)
}

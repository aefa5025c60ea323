package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
)

// RunOptions say when a capture stops and what it reports on the way.
type RunOptions struct {
	// Count stops the capture after this many packets are written; 0 means no limit.
	Count uint64
	// Duration stops the capture after this long; 0 means no limit.
	Duration time.Duration
	// Filter keeps packets by their headers; nil keeps all.
	Filter *Filter
	// FlushEvery is the longest a written packet stays in memory before
	// it reaches the file; 0 means DefaultFlushEvery.
	FlushEvery time.Duration
	// DrainTimeout bounds how long Run keeps reading the ring after a stop
	// request while packets keep arriving; 0 means DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Status, when set, is called about once per FlushEvery with the
	// counts so far (for a live status line).
	Status func(Report)
	// Direction keeps only the packets that went this way (tcpdump -Q),
	// as the source tells it (capfile.Packet.Direction; a packet of unknown
	// direction is kept: Config.Direction chose it in the kernel);
	// DirectionUnknown keeps every packet.
	Direction decode.Direction
	// PacketBuffered flushes each packet to the file or pipe as soon as
	// it is written (tcpdump -U), for a reader that follows the capture
	// live; it costs a write system call per packet.
	PacketBuffered bool
}

// Defaults for RunOptions' zero fields.
const (
	DefaultFlushEvery   = time.Second
	DefaultDrainTimeout = 2 * time.Second
)

// Report accounts for every packet of a capture. Packets are counted once:
// Captured = Written + Filtered + Unwritten, and the drops are packets that
// never reached ibcap.
type Report struct {
	Device   string // what was captured, e.g. "eth2" or "mlx5_0 port 1"
	Captured uint64 // packets taken from the ring
	Written  uint64 // packets written to the file
	Bytes    uint64 // captured bytes of the written packets (after the snap length)
	// Filtered counts packets taken but not written because of the header
	// filters (--qp, --lid, --opcode) or their direction (-Q), plus the frames dropped in user space
	// because they are not RoCE (Stats.NotRoCE). After a kernel filter
	// (Stats.KernelFilter) it is only what was filtered in user space:
	// what the kernel kept out is unknown.
	Filtered uint64
	// Unwritten counts packets taken but lost to a write error.
	Unwritten uint64
	// Stats are the source's counters when the report was made: its
	// drops (kernel, device, receive completions) and how full its ring is.
	Stats
	// Elapsed is the capture's duration so far.
	Elapsed time.Duration
}

// Dropped is every packet lost before ibcap could take it.
func (r *Report) Dropped() uint64 { return r.KernelDrops + r.DeviceDrops + r.CompletionErrors }

// Run moves packets from src to w until ctx is cancelled, opts.Count
// packets are written, opts.Duration has passed or src has no more (a
// file's Next returns io.EOF). On a stop request it
// drains what the ring holds, then flushes w; every packet taken is written
// unless a write fails, and then the Report counts the packets the writer
// lost as Unwritten. It does not close src or w. The Report is valid even
// when an error is returned.
func Run(ctx context.Context, src Source, w *Writer, opts RunOptions) (Report, error) {
	// Packets buffered before Run are not its to count.
	if err := w.Flush(); err != nil {
		return Report{Device: src.Device()}, err
	}
	inFile0, inFileBytes0 := w.Written()
	flushEvery := opts.FlushEvery
	if flushEvery <= 0 {
		flushEvery = DefaultFlushEvery
	}
	drainTimeout := opts.DrainTimeout
	if drainTimeout <= 0 {
		drainTimeout = DefaultDrainTimeout
	}
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	var tick, stop atomic.Bool
	defer runClock(ctx, flushEvery, &tick, &stop)()

	r := Report{Device: src.Device()}
	start := time.Now()
	dec := decode.Decoder{LinkType: src.LinkType()}
	var frame decode.Frame
	filtering := !opts.Filter.Empty()
	dirty := false
	var drainUntil time.Time
	var runErr error
	// One Packet for the whole run: the writer takes it by pointer through
	// an interface, which would otherwise move each one to the heap.
	var p capfile.Packet
	var err error
	// The receive loop is one function, long as it is: its state (the
	// report, dirty, drainUntil, the packet) stays in registers and on the
	// stack, where methods of a loop state would pass it through memory on
	// every packet; what runs only now and then is already apart
	// (runClock, fill, finishWrites).
loop:
	for {
		if stop.Load() {
			if drainUntil.IsZero() {
				drainUntil = time.Now().Add(drainTimeout)
			} else if time.Now().After(drainUntil) {
				break
			}
		}
		p, err = src.Next()
		if err != nil && errors.Is(err, ErrTimeout) {
			// The ring is empty: a drain is complete, and an idle moment is
			// the time to flush.
			if !drainUntil.IsZero() {
				break
			}
			if dirty {
				if runErr = w.Flush(); runErr != nil {
					break
				}
				dirty = false
			}
			if tick.Load() {
				tick.Store(false)
				if opts.Status != nil {
					opts.Status(fill(r, src, start))
				}
			}
			continue
		}
		if err == io.EOF {
			break // a file's last packet (OpenFile)
		}
		if err != nil {
			runErr = err
			break
		}
		r.Captured++
		if opts.Direction != decode.DirectionUnknown && p.Direction != decode.DirectionUnknown && p.Direction != opts.Direction {
			r.Filtered++
			continue
		}
		if filtering {
			// The lengths tell the decoder when the snap length cut the
			// frame, so that the headers still decode. A frame that does
			// not decode cannot match a header filter.
			frame.CapLen, frame.WireLen = len(p.Data), p.WireLenBytes
			if dec.Decode(p.Data, &frame) != nil || !opts.Filter.Match(&frame) {
				r.Filtered++
				continue
			}
		}
		if runErr = w.Write(&p); runErr != nil {
			r.Unwritten++
			break
		}
		dirty = true
		r.Written++
		r.Bytes += uint64(len(p.Data))
		if opts.PacketBuffered {
			if runErr = w.Flush(); runErr != nil {
				break
			}
			dirty = false
		}
		if opts.Count > 0 && r.Written >= opts.Count {
			break loop
		}
		// A plain load first: Swap is a locked instruction on every packet.
		if tick.Load() {
			tick.Store(false)
			// Without waiting for the write: the receive loop goes on
			// while the writer's goroutine writes.
			if runErr = w.flushAsync(); runErr != nil {
				break
			}
			dirty = false
			if opts.Status != nil {
				opts.Status(fill(r, src, start))
			}
		}
	}
	runErr = finishWrites(w, &r, runErr, inFile0, inFileBytes0)
	return fill(r, src, start), runErr
}

// runClock starts a goroutine that turns the clock and the context into
// flags, so that the receive loop pays an atomic load per packet instead of
// a select or a clock read: tick every flushEvery, stop when ctx is done.
// It returns the function that ends the goroutine.
func runClock(ctx context.Context, flushEvery time.Duration, tick, stop *atomic.Bool) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				tick.Store(true)
			case <-ctx.Done():
				stop.Store(true)
				return
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// finishWrites flushes what the writer holds, even after a read error, so
// that the report counts what is in the file and nothing is left for Close
// to lose; after a write error it moves the packets the writer lost (counted
// as written when they went into its buffer) to Unwritten. inFile0 and
// inFileBytes0 are what the file held before Run. It returns runErr joined
// with the flush's error.
func finishWrites(w *Writer, r *Report, runErr error, inFile0, inFileBytes0 uint64) error {
	if err := w.Flush(); runErr == nil {
		runErr = err
	} else if err != nil && err != runErr {
		runErr = errors.Join(runErr, err)
	}
	if w.failed() {
		n, b := w.Written()
		n, b = n-inFile0, b-inFileBytes0
		lost := r.Written - min(n, r.Written)
		r.Written, r.Bytes, r.Unwritten = r.Written-lost, min(b, r.Bytes), r.Unwritten+lost
	}
	return runErr
}

// fill completes a report with the source's counters.
func fill(r Report, src Source, start time.Time) Report {
	r.Elapsed = time.Since(start)
	if st, err := src.Stats(); err == nil {
		r.Stats = st
		r.Captured += st.NotRoCE
		r.Filtered += st.NotRoCE
	}
	return r
}

// String is the final report's text, one count per line.
func (r *Report) String() string {
	packets := func(n uint64) string { return units.Count(n, "packet") }
	s := fmt.Sprintf("%s captured on %s in %.3f s\n%s written (%s)\n",
		packets(r.Captured), r.Device, r.Elapsed.Seconds(), packets(r.Written), units.Count(r.Bytes, "byte"))
	// A count is said only where it is the whole truth: the frames a
	// kernel filter kept out were never counted.
	switch {
	case !r.KernelFilter:
		s += packets(r.Filtered) + " filtered out\n"
	case r.Filtered > 0:
		s += packets(r.Filtered) + " filtered out in ibcap (not counting what the kernel filter kept out)\n"
	}
	s += packets(r.KernelDrops) + " dropped by the kernel\n"
	if r.DeviceDropsKnown {
		s += packets(r.DeviceDrops) + " dropped by the device (out_of_buffer)\n"
	}
	if r.RingEmptied > 0 {
		s += fmt.Sprintf("the receive ring ran out of buffers %s (a larger -B helps)\n", units.Count(r.RingEmptied, "time"))
	}
	if r.CompletionErrors > 0 {
		s += packets(r.CompletionErrors) + " lost to receive completion errors\n"
	}
	if r.LinkDowns > 0 {
		s += fmt.Sprintf("the interface went down %s during the capture (nothing is captured while it is down)\n", units.Count(r.LinkDowns, "time"))
	}
	if r.Unwritten > 0 {
		s += packets(r.Unwritten) + " captured but not written (write error)\n"
	}
	return s
}

// InterfaceCounts gives src's counts as a pcapng Interface Statistics
// Block holds them (WriterConfig.Counts): what the ring received, the
// device's drops (out_of_buffer) as the interface's, the kernel's and the
// receive queue's as the OS's. Counts that cannot be read are left 0.
func InterfaceCounts(src Source) func() capfile.InterfaceStats {
	return func() capfile.InterfaceStats {
		st, err := src.Stats()
		if err != nil {
			return capfile.InterfaceStats{}
		}
		return capfile.InterfaceStats{Received: st.Received, InterfaceDrops: st.DeviceDrops, InterfaceDropsKnown: st.DeviceDropsKnown,
			OSDrops: st.KernelDrops + st.CompletionErrors}
	}
}

package sim

// evKind says what an event does when its time comes.
type evKind uint8

const (
	evTxDone     evKind = iota // a port finished sending a frame
	evArrive                   // a frame's last byte reached the peer port
	evFCPTimer                 // a port's periodic flow-control packets are due
	evFlowReady                // a flow may send again (start, or after message jitter)
	evSample                   // telemetry snapshot
	evCredit                   // a receiver's delayed credit update is ready to go
	evPauseEnd                 // Ethernet: a pause a PFC frame asked for runs out
	evPFCRefresh               // Ethernet: a switch input above XOFF sends its PFC frame again
)

// event is one scheduled action; seq breaks ties so runs are deterministic.
type event struct {
	atPs int64
	seq  uint64
	kind evKind
	prio uint8 // evPFCRefresh: the priority
	port *port
	pkt  *packet
}

// eventQueue is a binary min-heap on (atPs, seq), kept by hand because
// container/heap's interface calls cost a fifth of the run time.
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	return a.atPs < b.atPs || a.atPs == b.atPs && a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	e := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return e
}

package correlate

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// batchWriter writes record batches on its own goroutine, so that encoding
// and compressing one batch overlaps with decoding and building the next.
// It holds at most two batches in flight, which bounds memory.
type batchWriter struct {
	jobs chan batchJob
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error // the first write error; later batches are dropped
}

type batchJob struct {
	w    *TableWriter
	rec  arrow.RecordBatch
	done func() // called once rec is written (or dropped) and released; may be nil
}

func (j batchJob) finish() {
	j.rec.Release()
	if j.done != nil {
		j.done()
	}
}

func newBatchWriter() *batchWriter {
	bw := &batchWriter{jobs: make(chan batchJob), done: make(chan struct{})}
	go bw.run()
	return bw
}

func (bw *batchWriter) run() {
	defer close(bw.done)
	for j := range bw.jobs {
		if bw.failed() == nil {
			if err := j.w.Write(j.rec); err != nil {
				bw.mu.Lock()
				bw.err = err
				bw.mu.Unlock()
			}
		}
		j.finish()
	}
}

func (bw *batchWriter) failed() error {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	return bw.err
}

// write queues rec for w and takes ownership of it; done, if not nil, is
// called (on the writer's goroutine) once rec is written and released. It
// returns an earlier write's error, if any, so the producer stops early.
func (bw *batchWriter) write(w *TableWriter, rec arrow.RecordBatch, done func()) error {
	j := batchJob{w: w, rec: rec, done: done}
	if err := bw.failed(); err != nil {
		j.finish()
		return err
	}
	bw.jobs <- j
	return nil
}

// stop waits for the queued batches and returns the first write error. It
// may be called more than once.
func (bw *batchWriter) stop() error {
	bw.once.Do(func() { close(bw.jobs) })
	<-bw.done
	return bw.failed()
}

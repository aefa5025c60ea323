package capture

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// lockedBuffer is stdout written by the writer's goroutine and read by
// the test's source.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// watchedSource notes, each time a packet is taken, how much of the
// capture has reached stdout.
type watchedSource struct {
	memSource
	out    *lockedBuffer
	seenAt []int
}

func (s *watchedSource) Next() (capfile.Packet, error) {
	s.seenAt = append(s.seenAt, s.out.Len())
	return s.memSource.Next()
}

// With PacketBuffered (-U) each packet is on stdout before the next one is
// taken; without, they wait for the flush interval.
func TestRunPacketBuffered(t *testing.T) {
	roce, _ := mixedTraffic(20, false)
	for _, buffered := range []bool{true, false} {
		out := &lockedBuffer{}
		src := &watchedSource{memSource: memSource{frames: roce, n: len(roce)}, out: out}
		w, err := NewWriter(WriterConfig{Path: "-", Stdout: out, Format: FormatPcap, LinkType: decode.LinkTypeEthernet, SnapLenBytes: 128})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), src, w, RunOptions{PacketBuffered: buffered}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		grew := 0
		for i := 1; i < len(src.seenAt); i++ {
			if src.seenAt[i] > src.seenAt[i-1] {
				grew++
			}
		}
		if buffered && grew != len(roce) {
			t.Errorf("-U: stdout grew before %d of the %d packets after the first, want every one: %v", grew, len(roce), src.seenAt)
		}
		if !buffered && grew > 1 {
			t.Errorf("without -U: stdout grew %d times during a run shorter than the flush interval", grew)
		}
	}
}

package capfile

import (
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// endless is a capture that never ends: head, then record over and over,
// counting the bytes read so far.
type endless struct {
	head, record []byte
	at           int
	read         atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		src := e.record
		if e.at < len(e.head) {
			src = e.head[e.at:]
		} else {
			src = src[(e.at-len(e.head))%len(e.record):]
		}
		c := copy(p[n:], src)
		n += c
		e.at += c
	}
	e.read.Add(int64(n))
	return n, nil
}

// A stream asked to stop ends, however long the run of frames it is
// skipping: frames Keep leaves out (an endless pcap of non-RoCE frames),
// frames that cannot be decoded, and records that are no frames at all
// (endless ERF padding). Before, Stop was looked at only between frames
// handed out, and such a stream never heard it.
func TestStreamStopsInsideSkippedFrames(t *testing.T) {
	notRoCE := make([]byte, 60) // an Ethernet frame of ethertype 0x0800 (IPv4) that is no RoCE
	notRoCE[12] = 0x08
	pcapEnc, err := NewEncoder(EncoderConfig{LinkType: decode.LinkTypeEthernet, SnapLenBytes: 65535})
	if err != nil {
		t.Fatal(err)
	}
	pcapRec, _ := pcapEnc.AppendPacket(nil, &Packet{Data: notRoCE, TsNs: 1_700_000_000_000_000_000})
	cut := append([]byte(nil), rocePacket(t, 0x04, 64)...)
	badRec, _ := pcapEnc.AppendPacket(nil, &Packet{Data: cut[:50], TsNs: 1_700_000_000_000_000_000, WireLenBytes: 2000})
	first, _ := AppendERFRecord(nil, 1_700_000_000_000_000_000, decode.ERFTypeEthernet, notRoCE, len(notRoCE), 0)
	pad, _ := AppendERFRecord(nil, 1_700_000_000_000_000_000, erfTypePad, make([]byte, 48), 48, 0)
	for _, c := range []struct {
		name         string
		head, record []byte
		keep         func(*decode.Frame) bool
	}{
		{"frames left out", pcapEnc.AppendHeader(nil), pcapRec, func(f *decode.Frame) bool { return f.Transport != decode.TransportNone }},
		{"frames not decoded", pcapEnc.AppendHeader(nil), badRec, nil},
		{"ERF padding", first, pad, func(*decode.Frame) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &endless{head: c.head, record: c.record}
			r, err := NewReader(in, "endless")
			if err != nil {
				t.Fatal(err)
			}
			stop := new(atomic.Bool)
			// Stop once the stream is well into the endless run; a stream
			// deaf to it would never return, and the test time out.
			go func() {
				for in.read.Load() < 4<<20 {
					// Yield until 4 MB were read: no fixed time.
					runtime.Gosched()
				}
				stop.Store(true)
			}()
			// NewStream reads up to the first frame it hands out: the
			// endless run starts there.
			s := NewStream([]*Reader{r}, StreamOptions{Keep: c.keep, OnDecodeError: func(*DecodeError) {}, Stop: stop})
			for {
				_, _, err := s.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				var de *DecodeError
				if err != nil && !errors.As(err, &de) {
					t.Fatal(err)
				}
			}
			if in.read.Load() > 64<<20 {
				t.Errorf("read %d MB after being asked to stop at 4 MB", in.read.Load()>>20)
			}
		})
	}
}

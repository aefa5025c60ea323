package correlate

import (
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
)

// BenchmarkPacketBatchAdd adds the frames of the generated captures to a
// batch, one row per op: the export's per-frame cost without the encoding.
func BenchmarkPacketBatchAdd(b *testing.B) {
	var frames []decode.Frame
	for _, name := range []string{"rocev2_ipv4.pcap", "ib_native_erf.pcap", "mixed.pcapng"} {
		r, err := capfile.Open("../testdata/pcaps/" + name)
		if err != nil {
			b.Fatal(err)
		}
		var f decode.Frame
		for {
			err := r.Next(&f)
			if err == io.EOF {
				break
			}
			var de *capfile.DecodeError
			if err != nil && !errors.As(err, &de) {
				b.Fatal(err)
			}
			frames = append(frames, f)
		}
		r.Close()
	}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.Append("bench")
	files := sb.NewArray()
	defer files.Release()
	batch := newPacketBatch(batchSchema(PacketSchema(nil)), files)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if batch.n == BatchRows {
			batch.reset()
		}
		batch.add(&frames[i%len(frames)], 0, dirUnknown, "")
		i++
	}
}

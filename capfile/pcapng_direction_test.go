package capfile

import (
	"bytes"
	"io"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// TestPcapngDirection writes packets with each direction (and odd lengths,
// so the options follow padding) and reads epb_flags back as Frame.Dir; a
// pcap file has none to say. Both give back the snap length written.
func TestPcapngDirection(t *testing.T) {
	dirs := []decode.Direction{decode.DirectionOutbound, decode.DirectionInbound, decode.DirectionUnknown, decode.DirectionOutbound}
	for _, ng := range []bool{true, false} {
		var buf bytes.Buffer
		w, err := NewPcapWriterConfig(&buf, EncoderConfig{LinkType: decode.LinkTypeEthernet, SnapLenBytes: 9216, PcapNG: ng})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range dirs {
			pkt := make([]byte, 61+i) // an Ethernet frame of odd size; its contents do not matter here
			if err := w.WritePacket(&Packet{TsNs: int64(1_700_000_000_000_000_000 + i), Data: pkt, Direction: d}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(buf.Bytes()), "dir")
		if err != nil {
			t.Fatal(err)
		}
		if r.SnapLen() != 9216 {
			t.Errorf("pcapng %v: snap length %d, want 9216", ng, r.SnapLen())
		}
		var f decode.Frame
		for i := 0; ; i++ {
			_, err := r.NextRecord(&f)
			if err == io.EOF {
				if i != len(dirs) {
					t.Fatalf("pcapng %v: %d frames, want %d", ng, i, len(dirs))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := dirs[i]
			if !ng {
				want = decode.DirectionUnknown
			}
			if f.Dir != want {
				t.Errorf("pcapng %v frame %d: direction %d, want %d", ng, i+1, f.Dir, want)
			}
		}
	}
}

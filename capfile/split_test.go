package capfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// pcapOf writes a classic pcap of frames, big-endian if big, each record
// stamped 1 µs after the one before.
func pcapOf(big bool, frames ...[]byte) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	b := order.AppendUint32(nil, magicMicro)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, 4)
	b = append(b, make([]byte, 8)...)
	b = order.AppendUint32(b, 1<<20)
	b = order.AppendUint32(b, decode.LinkTypeEthernet)
	for i, f := range frames {
		b = order.AppendUint32(b, 1_700_000_000+uint32(i/1_000_000))
		b = order.AppendUint32(b, uint32(i%1_000_000))
		b = order.AppendUint32(b, uint32(len(f)))
		b = order.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// pcapngOf writes a pcapng file of frames (ns timestamps, or us if micro),
// each packet block with a direction, one in three inbound.
func pcapngOf(t *testing.T, micro bool, frames ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewPcapWriterConfig(&buf, EncoderConfig{LinkType: decode.LinkTypeEthernet, PcapNG: true, Micro: micro, SnapLenBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		dir := decode.DirectionOutbound
		if i%3 == 0 {
			dir = decode.DirectionInbound
		}
		if err := w.WritePacket(&Packet{TsNs: 1_700_000_000_000_000_000 + int64(i)*1000, Data: f, Direction: dir}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSplitSameAsOneCore: a pcap or pcapng file cut in pieces (split.go)
// gives a caller exactly what one goroutine reading it in order gives,
// where the pieces' guesses hold and where they do not: big-endian
// records, pieces of many small records, a record longer than several
// pieces, payloads that hold a chain of record headers of their own (a
// wrong guess, which the caller must catch), a file whose last record is
// cut short, and a pcapng file of two sections.
func TestSplitSameAsOneCore(t *testing.T) {
	good := []([]byte){rocePacket(t, 0x06, 128), rocePacket(t, 0x07, 128), rocePacket(t, 0x08, 128), rocePacket(t, 0x11, 0)}
	tiny := []byte("not a frame, but a record")
	var many [][]byte
	for i := range 3000 {
		switch {
		case i%500 == 7:
			many = append(many, rocePacket(t, 0x0A, 9000)) // longer than a piece of 4000 bytes
		case i%3 == 0:
			many = append(many, tiny)
		default:
			many = append(many, good[i%len(good)])
		}
	}
	// A payload of fake record headers, each claiming a record of 24
	// bytes, one after the other: findRecord takes the first place in
	// them it looks at for a record's start, and is wrong.
	var fake []byte
	for range 40 {
		fake = binary.LittleEndian.AppendUint32(fake, 1_700_000_000)
		fake = binary.LittleEndian.AppendUint32(fake, 5)
		fake = binary.LittleEndian.AppendUint32(fake, 24)
		fake = binary.LittleEndian.AppendUint32(fake, 24)
		fake = append(fake, make([]byte, 24)...)
	}
	liar := rocePacket(t, 0x0A, len(fake))
	copy(liar[len(liar)-4-len(fake):], fake)
	var lies [][]byte
	for i := range 2000 {
		if i%5 == 0 {
			lies = append(lies, liar)
		} else {
			lies = append(lies, good[i%len(good)])
		}
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"big-endian":    pcapOf(true, many...),
		"many":          pcapOf(false, many...),
		"fake headers":  pcapOf(false, lies...),
		"cut short":     pcapOf(false, many...)[:200_000],
		"one long":      pcapOf(false, rocePacket(t, 0x0A, 60_000)),
		"header only":   pcapOf(false),
		"fake, cut":     pcapOf(false, lies...)[:100_001],
		"little-endian": pcapOf(false, good...),
		"pcapng":        pcapngOf(t, false, many...),
		"pcapng, micro": pcapngOf(t, true, lies...),
		"pcapng x2":     append(pcapngOf(t, false, many...), pcapngOf(t, true, good...)...),
		"pcapng cut":    pcapngOf(t, false, many...)[:150_003],
	}
	project := func(int) Projection { return &lineProjection{} }
	for name, data := range files {
		path := filepath.Join(dir, name+".pcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []StreamOptions{
			{CheckCRC: true, Undecoded: true, Untimed: true, Heads: true, Project: project},
			{Heads: true, HeadsOnly: true},
		} {
			want := transcript(t, []string{path}, opts, 0)
			for _, piece := range []int64{100, 1000, 4000, 64 << 10} {
				t.Run(fmt.Sprintf("%s/headsonly=%v/pieces of %d", name, opts.HeadsOnly, piece), func(t *testing.T) {
					cutInPieces(t, piece)
					o := opts
					o.Workers = 2
					if got := transcript(t, []string{path}, o, 0); got != want {
						t.Errorf("the stream differs from one decoded on one goroutine:\n%s", firstDifference(got, want))
					}
					// Mapped (mapping.go), in chunks of a page and of many,
					// for two of the piece sizes: each costs the race run
					// (make race) as much as the rest.
					if piece != 1000 && piece != 64<<10 {
						return
					}
					for _, chunk := range []int{4096, 1 << 20} {
						mapSmall(t, chunk)
						o.Map = true
						if got := transcript(t, []string{path}, o, 0); got != want {
							t.Errorf("mapped, shown %d bytes at a time: the stream differs from one decoded on one goroutine:\n%s", chunk, firstDifference(got, want))
						}
					}
				})
			}
		}
	}
}

// TestFindRecord: the guess at where a record starts takes the first
// place with a chain of plausible headers, never one past a record's
// true start, and none in bytes that hold none.
func TestFindRecord(t *testing.T) {
	s := &split{nsPerTs: 1000}
	file := pcapOf(false, []byte("abcdefghijklmnopqrstuvwxyz"), []byte("0123456789"), []byte("frame three"), []byte("four"))
	recs := file[24:]
	if got := s.findRecord(recs, len(recs)); got != 0 {
		t.Errorf("at a record's start: found %d, want 0", got)
	}
	// 5 bytes into the first record: the next starts at 37, and the
	// guess is there or before it (where the bytes happen to look like a
	// chain of records, a wrong guess the caller catches).
	if got := s.findRecord(recs[5:], len(recs)-5); got < 0 || got > 16+26-5 {
		t.Errorf("5 bytes into a record: found %d, want %d or before", got, 16+26-5)
	}
	if got := s.findRecord(make([]byte, 100), 100); got != 0 {
		t.Errorf("zeros: found %d, want 0 (a chain of empty records)", got)
	}
	junk := make([]byte, 100)
	for i := range junk {
		junk[i] = 0xff
	}
	if got := s.findRecord(junk, len(junk)); got != -1 {
		t.Errorf("0xff bytes: found %d, want -1", got)
	}
}

// TestCutInPieces: the files read in pieces are the regular pcap and
// pcapng files (either byte order) of minSplitBytes or more; asking of a
// FIFO does not open it.
func TestCutInPieces(t *testing.T) {
	dir := t.TempDir()
	frames := [][]byte{rocePacket(t, 0x04, 100)}
	for range 50 {
		frames = append(frames, frames[0])
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pcap, big, ng := write("a.pcap", pcapOf(false, frames...)), write("b.pcap", pcapOf(true, frames...)), write("c.pcapng", pcapngOf(t, false, frames...))
	short := write("short.pcap", pcapOf(false, frames[0]))
	text := write("text", bytes.Repeat([]byte("not a capture\n"), 1000))
	fifo := filepath.Join(dir, "fifo") // opened, it would wait for a writer
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	was := minSplitBytes
	minSplitBytes = 4096
	t.Cleanup(func() { minSplitBytes = was })
	for path, want := range map[string]bool{pcap: true, big: true, ng: true, short: false, text: false, fifo: false, dir: false, filepath.Join(dir, "absent"): false} {
		if got := CutInPieces(path); got != want {
			t.Errorf("CutInPieces(%s) = %v, want %v", filepath.Base(path), got, want)
		}
	}
}

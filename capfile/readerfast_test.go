package capfile_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// emptyPcap is a nanosecond pcap file of no records: read beside a file, it
// has the stream merge with nothing to merge.
func emptyPcap() []byte {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h, 0xa1b23c4d)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], decode.LinkTypeEthernet)
	return h
}

// chunks reads at most n bytes a call: the reader's buffer then holds
// parts of records, and a record is read whole in one call and cut in the
// next. Its Len gives the reader a buffer of the file's size, as a
// bytes.Reader does (a fuzzing run allocates no read buffer of 1 MB).
type chunks struct {
	r *bytes.Reader
	n int
}

func (c *chunks) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
func (c *chunks) Len() int                   { return c.r.Len() }

// soloRun is what a stream of one file handed out and told.
type soloRun struct {
	frames []decode.Frame
	errs   []string
	done   []int64 // Progress's bytes read, after each frame
	told   []string
	stats  capfile.StreamStats
	resNs  int64
}

// readSolo reads file, stored at path, as a stream's only file, or beside
// an empty file on the general path (general: the merge, no fast path),
// through reads of at most chunk bytes when chunk > 0.
func readSolo(t *testing.T, file []byte, path string, chunk int, general, undecoded, keepOdd, headsOnly bool) soloRun {
	t.Helper()
	var run soloRun
	in := func(b []byte) io.Reader {
		if chunk > 0 {
			return &chunks{bytes.NewReader(b), chunk}
		}
		return bytes.NewReader(b)
	}
	r, err := capfile.NewReader(in(file), path) // Progress stats path
	if err != nil {
		return run
	}
	readers := []*capfile.Reader{r}
	if general {
		e, err := capfile.NewReader(in(emptyPcap()), "b")
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, e)
	}
	opts := capfile.StreamOptions{CheckCRC: true, Undecoded: undecoded, Untimed: true, HeadsOnly: headsOnly,
		OnDecodeError: func(de *capfile.DecodeError) { run.told = append(run.told, de.Error()) },
		OnFileError:   func(err error) { run.told = append(run.told, err.Error()) }}
	if keepOdd {
		opts.Keep = func(f *decode.Frame) bool { return f.Number%2 == 1 }
	}
	s := capfile.NewStream(readers, opts)
	defer s.Close()
	if general {
		capfile.GeneralPath(s)
	}
	for {
		f, i, err := s.Next()
		if err == io.EOF {
			break
		}
		if i != 0 {
			t.Fatalf("frame %d from file %d", f.Number, i)
		}
		fr := *f
		fr.Payload = bytes.Clone(f.Payload)
		run.frames = append(run.frames, fr)
		run.errs = append(run.errs, fmt.Sprint(err))
		done, _ := s.Progress()
		run.done = append(run.done, done)
	}
	run.stats, run.resNs = s.Stats(), s.ResolutionNs()
	return run
}

// checkSoloSame reads file as one stream's only file (Next's fast path)
// and beside an empty file (the general path): the frames, their errors,
// what was told, the counts and the resolution are the same.
func checkSoloSame(t *testing.T, file []byte, chunk int, undecoded, keepOdd bool) {
	// A file of its own, not in t.TempDir(): fuzzing, that made a run of a
	// few executions a second.
	tf, err := os.CreateTemp("", "solo-*.pcap")
	if err != nil {
		t.Fatal(err)
	}
	path := tf.Name()
	defer os.Remove(path)
	_, err = tf.Write(file)
	if err := errors.Join(err, tf.Close()); err != nil {
		t.Fatal(err)
	}
	solo := readSolo(t, file, path, chunk, false, undecoded, keepOdd, false)
	general := readSolo(t, file, path, chunk, true, undecoded, keepOdd, false)
	if !reflect.DeepEqual(solo, general) {
		t.Fatalf("undecoded %v, keep odd %v, chunk %d: one file alone read\n%+v\nand beside an empty one\n%+v",
			undecoded, keepOdd, chunk, solo, general)
	}
	// With HeadsOnly: the same heads, errors and counts.
	heads := headsOf(readSolo(t, file, path, chunk, false, undecoded, keepOdd, true))
	if solo = headsOf(solo); !reflect.DeepEqual(heads, solo) {
		t.Fatalf("undecoded %v, keep odd %v, chunk %d: read for the heads only\n%+v\nread whole\n%+v",
			undecoded, keepOdd, chunk, heads, solo)
	}
}

// headsOf is run with only the heads of its frames (what HeadsOnly keeps).
func headsOf(run soloRun) soloRun {
	heads := make([]decode.Frame, len(run.frames))
	for i, f := range run.frames {
		heads[i] = decode.Frame{Number: f.Number, Offset: f.Offset, TsNs: f.TsNs, NoTs: f.NoTs, CapLen: f.CapLen, WireLen: f.WireLen,
			Iface: f.Iface, Dir: f.Dir, Transport: f.Transport, Has: f.Has, ICRCOK: f.ICRCOK, VCRCOK: f.VCRCOK}
	}
	run.frames = heads
	return run
}

// TestSoloStreamSameAsMerged: a capture read alone (Next's fast path for
// plain pcap records and pcapng packet blocks) gives what it gives read
// through the merge, on captures with frames that cannot be decoded,
// records with impossible headers, microsecond and big-endian files, and
// records cut by the reads. 20 frames: more than the stamps ResolutionNs
// trusts.
func TestSoloStreamSameAsMerged(t *testing.T) {
	for _, file := range soloSeeds(t, 20) {
		for _, chunk := range []int{0, 1, 7, 100} {
			for _, undecoded := range []bool{false, true} {
				checkSoloSame(t, file, chunk, undecoded, false)
				checkSoloSame(t, file, chunk, undecoded, true)
			}
		}
	}
}

// soloSeeds are pcap and pcapng files of frames frames (at least 3), each
// with something the fast path leaves to the general one.
func soloSeeds(t testing.TB, frames int) [][]byte {
	// Stamped 100 ns apart at the finest, every fourth a step back.
	pkts := testcap.Stream(frames, 1, 2, 7, 0, 64, testcap.BaseNs, func(i int) int64 { return int64(1000*(3-i%4) - 1700) })
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	nano := read(testcap.Write(t, "nano.pcap", false, pkts))
	micro := read(testcap.WriteMicro(t, "micro.pcap", pkts))
	native := read(testcap.Write(t, "native.pcap", true, pkts))
	// The third record: the first is read as the stream opens, before Next.
	third := 24
	for range 2 {
		third += 16 + int(binary.LittleEndian.Uint32(nano[third+8:]))
	}
	badOpcode := bytes.Clone(nano)
	badOpcode[third+16+14+20+8] = 0x1f // an opcode no transport defines
	badWireLen := bytes.Clone(nano)
	binary.LittleEndian.PutUint32(badWireLen[third+12:], 1) // original length below captured length
	bigEndian := bytes.Clone(nano)
	for off := 0; off+4 <= 24; off += 4 { // the header's words, then each record's
		if off == 4 { // two 16-bit version numbers
			binary.BigEndian.PutUint16(bigEndian[4:], 2)
			binary.BigEndian.PutUint16(bigEndian[6:], 4)
			continue
		}
		binary.BigEndian.PutUint32(bigEndian[off:], binary.LittleEndian.Uint32(nano[off:]))
	}
	for off := 24; off+16 <= len(nano); {
		for w := 0; w < 16; w += 4 {
			binary.BigEndian.PutUint32(bigEndian[off+w:], binary.LittleEndian.Uint32(nano[off+w:]))
		}
		off += 16 + int(binary.LittleEndian.Uint32(nano[off+8:]))
	}
	cut := nano[:len(nano)-5]
	ng := read(testcap.WriteUntimed(t, "ng.pcapng", pkts))
	ngUntimed := read(testcap.WriteUntimed(t, "untimed.pcapng", pkts, 3, 9))
	// Two interfaces, the second native InfiniBand with times in
	// microseconds (no if_tsresol), and enhanced packet blocks on each in
	// turn with an epb_flags option: inbound, outbound.
	le := binary.LittleEndian
	ngFlags := testcap.PcapngBlock(testcap.PcapngHead(nil), 1, []byte{byte(decode.LinkTypeInfiniBand), 0, 0, 0, 0, 0, 0, 0})
	for i, p := range pkts {
		frame, iface, ts := testcap.RoCEFrame(t, p), uint32(0), uint64(p.TsNs)
		if i%2 == 1 {
			frame, iface, ts = testcap.NativeFrame(t, p), 1, ts/1000
		}
		var b []byte
		b = le.AppendUint32(b, iface)
		b = le.AppendUint32(b, uint32(ts>>32))
		b = le.AppendUint32(b, uint32(ts))
		b = le.AppendUint32(b, uint32(len(frame)))
		b = le.AppendUint32(b, uint32(len(frame)))
		b = append(b, frame...)
		b = append(b, make([]byte, (4-len(frame)%4)%4)...)
		b = append(b, 2, 0, 4, 0, byte(1+i%2), 0, 0, 0, 0, 0, 0, 0)
		ngFlags = testcap.PcapngBlock(ngFlags, 6, b)
	}
	return [][]byte{nano, micro, native, badOpcode, badWireLen, bigEndian, cut, ng, ngUntimed, ngFlags}
}

// FuzzSoloStream: any bytes, read as a stream's only file, give what they
// give read through the merge, and, read for the heads only
// (StreamOptions.HeadsOnly), the same heads. The seeds are of 5 frames: the fuzzer
// minimizes each new input, and that took minutes on files of 20.
//
//	go test -run=^$ -fuzz=FuzzSoloStream -fuzztime=30s ./capfile/
func FuzzSoloStream(f *testing.F) {
	for _, seed := range soloSeeds(f, 5) {
		f.Add(seed, uint8(0), true, false)
		f.Add(seed, uint8(7), false, true)
	}
	f.Fuzz(func(t *testing.T, file []byte, chunk uint8, undecoded, keepOdd bool) {
		checkSoloSame(t, file, int(chunk), undecoded, keepOdd)
	})
}

package capfile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// Fuzz targets of the Reader: pcap (plain and gzip) and pcapng (sections,
// if_tsresol, simple packet blocks). Seeds come from testdata/pcaps.
//
//	go test -run=^$ -fuzz=FuzzReaderPcapng -fuzztime=20s ./capfile/

// fuzzReader reads whole files: it must end with EOF or a FileError, and
// every error must name the file. The seeds are the generated captures cut
// after a few records: the fuzzer minimizes each new input for up to a
// minute (-fuzzminimizetime), and on 13 KB files that stalled it for minutes.
func fuzzReader(f *testing.F, ng bool) {
	const seedRecords = 4
	for _, name := range generatedFiles(f) {
		if strings.HasSuffix(name, ".pcapng") != ng {
			continue
		}
		b, err := os.ReadFile(filepath.Join(pcapsDir, name))
		if err != nil {
			f.Fatal(err)
		}
		if frames := readAll(f, filepath.Join(pcapsDir, name)); len(frames) > seedRecords {
			b = b[:frames[seedRecords].Offset]
		}
		f.Add(b)
	}
	if ng {
		for _, seed := range ngSeeds(f) {
			f.Add(seed)
		}
	} else { // a gzip capture: the decompressing path
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(pcapFile(true, rocePacket(f, 0x04, 8)))
		zw.Close()
		f.Add(gz.Bytes())
		// The second hostile round: bytes after the compressed data (it
		// read as a record header cut short).
		f.Add(append(append([]byte(nil), gz.Bytes()...), "garbage after the gzip stream"...))
	}
	f.Fuzz(checkReaderOn)
}

// checkReaderOn reads file to its end: opening fails with a FileError or
// not at all, every frame's error is a DecodeError naming the file or a
// FileError that ends it, and each frame's record starts past the one
// before (a count of frames against the file's length does not bound a
// compressed file: 209 bytes of gzip hold 10,000 empty records).
func checkReaderOn(t *testing.T, file []byte) {
	r, err := NewReader(bytes.NewReader(file), "fuzz.pcap")
	if err != nil {
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("open: %v is not a *FileError", err)
		}
		return
	}
	var fr decode.Frame
	last := int64(-1)
	for n := 0; ; n++ {
		err := r.Next(&fr)
		if err == io.EOF {
			return
		}
		var fe *FileError
		if errors.As(err, &fe) {
			return
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("frame %d: %v is neither a DecodeError nor a FileError", n+1, err)
		}
		if err != nil && !strings.Contains(err.Error(), "fuzz.pcap") {
			t.Fatalf("error %q does not name the file", err)
		}
		if fr.Offset <= last {
			t.Fatalf("frame %d at byte offset %d, the one before at %d: the reader does not advance", n+1, fr.Offset, last)
		}
		last = fr.Offset
	}
}

// ngSeeds are pcapng files with what the generated captures lack: two
// sections in both byte orders, if_tsresol in powers of 2 and 10, an
// if_tsoffset, a simple packet block.
func ngSeeds(f *testing.F) [][]byte {
	p := rocePacket(f, 0x04, 8)
	var w ngFile
	w.section(binary.LittleEndian)
	w.iface(decode.LinkTypeEthernet, 0x80|32, 1_700_000_000)
	w.epb(0, 1<<30, p, len(p))
	w.spb(p)
	w.section(binary.BigEndian)
	w.iface(decode.LinkTypeInfiniBand, 20, 0)
	w.iface(decode.LinkTypeEthernet, 9, -5)
	w.epb(1, 7, p, len(p))
	w.epb(0, 7, ibPacket(f, 0x04, 8), 0)
	return [][]byte{w.buf.Bytes()}
}

func FuzzReaderPcap(f *testing.F)   { fuzzReader(f, false) }
func FuzzReaderPcapng(f *testing.F) { fuzzReader(f, true) }

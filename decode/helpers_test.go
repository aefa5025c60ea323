package decode

import (
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/ibscope/ibscope/internal/pcapexpect"
)

// pcapsDir holds the captures testdata/gen writes, relative to this package.
const pcapsDir = "../testdata/pcaps"

// expectation is testdata/gen's expect.json entry for one file.
type expectation = pcapexpect.Expectation

func loadExpect(t testing.TB) map[string]expectation {
	t.Helper()
	return pcapexpect.Load(t, pcapsDir)
}

// generatedFiles lists the generated captures, sorted.
func generatedFiles(t testing.TB) []string {
	t.Helper()
	return pcapexpect.Names(t, pcapsDir)
}

// fileRecords returns the records of a pcap file (not pcapng) as gopacket's
// pcapgo reads them, and the file's link type: decode's tests read
// captures without ibscope's own reader, which lives above decode.
func fileRecords(t testing.TB, path string) (linkType int, recs []record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			return int(r.LinkType()), recs
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, n, err)
		}
		recs = append(recs, record{Number: n, Data: data, WireLen: ci.Length})
	}
}

// record is one record of a capture file: its 1-based number, the bytes
// captured and the packet's length on the wire.
type record struct {
	Number  int
	Data    []byte
	WireLen int
}

func contains(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

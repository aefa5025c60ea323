package capfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// TestRecordedLinkBitsPerSec: a pcapng file's if_speed is read through
// Open; a classic pcap file, little- or big-endian, micro or nano, says
// none without being opened as a capture; a file too short for a magic,
// and one that is no capture, are errors, as Open gives them.
func TestRecordedLinkBitsPerSec(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ng := AppendNgSectionHeader(nil, nil)
	ng = AppendNgInterface(ng, decode.LinkTypeEthernet, 65535, []NgOption{NgUint64(NgOptIfSpeed, 100e9)})
	bigEndian := binary.BigEndian.AppendUint32(nil, magicNano)
	bigEndian = append(bigEndian, make([]byte, 20)...)
	for _, c := range []struct {
		name string
		b    []byte
		want uint64
		err  bool
	}{
		{"speed.pcapng", ng, 100e9, false},
		{"nospeed.pcapng", AppendNgInterface(AppendNgSectionHeader(nil, nil), decode.LinkTypeEthernet, 65535, nil), 0, false},
		{"nano.pcap", AppendPcapFileHeader(nil, decode.LinkTypeEthernet, 65535, false), 0, false},
		{"micro.pcap", AppendPcapFileHeader(nil, decode.LinkTypeEthernet, 65535, true), 0, false},
		{"bigendian.pcap", bigEndian, 0, false},
		{"short", []byte{0xd4, 0xc3}, 0, true},
		{"text", []byte("not a capture at all, only words"), 0, true},
	} {
		got, err := RecordedLinkBitsPerSec(write(c.name, c.b))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %d, %v; want %d, error %v", c.name, got, err, c.want, c.err)
		}
	}
	if _, err := RecordedLinkBitsPerSec(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file: no error")
	}
}

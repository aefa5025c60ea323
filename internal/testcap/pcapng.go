package testcap

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// PcapngBlock appends to file a little-endian pcapng block of type typ
// holding body, padded to a multiple of 4 bytes, its total length before
// and after it.
func PcapngBlock(file []byte, typ uint32, body []byte) []byte {
	le := binary.LittleEndian
	body = append(body, make([]byte, (4-len(body)%4)%4)...)
	n := uint32(12 + len(body))
	file = le.AppendUint32(le.AppendUint32(file, typ), n)
	return le.AppendUint32(append(file, body...), n)
}

// PcapngHead appends to file the start of a little-endian pcapng: its
// section header and one interface, Ethernet with times in ns.
func PcapngHead(file []byte) []byte {
	// Section header: byte-order magic, version 1.0, section length unknown.
	file = PcapngBlock(file, 0x0A0D0D0A, []byte{0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	// Interface 0: Ethernet, no snap length, if_tsresol 10^-9, end of options.
	return PcapngBlock(file, 1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0})
}

// WriteUntimed writes RoCEv2 frames of pkts to a little-endian pcapng named
// name in t.TempDir(), each in an Enhanced Packet Block with its time in ns,
// except those whose index is in untimed: a Simple Packet Block, which
// carries no time.
func WriteUntimed(t testing.TB, name string, pkts []Packet, untimed ...int) string {
	t.Helper()
	le := binary.LittleEndian
	file := PcapngHead(nil)
	for i, p := range pkts {
		frame := RoCEFrame(t, p)
		if slices.Contains(untimed, i) {
			file = PcapngBlock(file, 3, append(le.AppendUint32(nil, uint32(len(frame))), frame...))
			continue
		}
		var b []byte
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, uint32(uint64(p.TsNs)>>32))
		b = le.AppendUint32(b, uint32(p.TsNs))
		b = le.AppendUint32(b, uint32(len(frame)))
		b = le.AppendUint32(b, uint32(len(frame)))
		file = PcapngBlock(file, 6, append(b, frame...))
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

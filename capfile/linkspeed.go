package capfile

import (
	"encoding/binary"
	"io"
	"math/bits"
	"os"
)

// RecordedLinkBitsPerSec returns the link speed the capture file at path
// records (Reader.LinkBitsPerSec: pcapng's if_speed of its first
// interface), 0 when it records none. A classic pcap file records none,
// as its first four bytes say: it is not opened as a capture, which
// reads a whole buffer ahead (1 MiB of a large file: a millisecond of
// page faults and copying for an analysis that asks before it reads).
// Its errors are Open's, or the read of those four bytes.
func RecordedLinkBitsPerSec(path string) (uint64, error) {
	magic, err := readMagic(path)
	if err != nil {
		return 0, err
	}
	if classicPcap(magic) {
		return 0, nil
	}
	r, err := Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.LinkBitsPerSec(), nil
}

// readMagic reads the first four bytes of the file at path, as a
// little-endian number.
func readMagic(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(magic[:]), nil
}

// regularMagic is readMagic of a regular file of minBytes or more, false
// for any other. It stats first: opening a FIFO would wait for its writer,
// and closing it would end the writer's stream before the command opens it
// to read.
func regularMagic(path string, minBytes int64) (uint32, bool) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() < minBytes {
		return 0, false
	}
	magic, err := readMagic(path)
	return magic, err == nil
}

// classicPcap reports whether magic (readMagic's) is a classic pcap
// file's, of either byte order and timestamp unit.
func classicPcap(magic uint32) bool {
	switch magic {
	case magicMicro, magicNano, bits.ReverseBytes32(magicMicro), bits.ReverseBytes32(magicNano):
		return true
	}
	return false
}

package decode

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoCEv2FastPathEdges compares Decode with the general path
// (checkRoCEv2FastPath) on every Ethernet frame of the generated captures
// cut at every length, with trailing bytes, and with each field the fast
// path tests or reads changed: IP and UDP lengths one off either way or
// too short, every opcode, every pad count, IP options, fragments, another
// protocol or port. The fuzz targets make the same comparison on what they
// find; this holds the edges to it on every run.
func TestRoCEv2FastPathEdges(t *testing.T) {
	taken := 0
	check := func(data []byte) {
		t.Helper()
		for _, cut := range []uint16{0, 9} {
			checkRoCEv2FastPath(t, data, cut)
		}
		var f Frame
		d := Decoder{LinkType: LinkTypeEthernet}
		if ok, _ := d.ethernetRoCEv2(data, &f, false); ok {
			taken++
		}
	}
	for _, name := range generatedFiles(t) {
		if strings.HasSuffix(name, ".pcapng") {
			continue
		}
		lt, recs := fileRecords(t, filepath.Join(pcapsDir, name))
		if lt != LinkTypeEthernet {
			continue
		}
		swept := 0
		for _, rec := range recs {
			frame := rec.Data
			for n := range len(frame) + 1 {
				check(frame[:n])
			}
			check(append(frame[:len(frame):len(frame)], make([]byte, 15)...))
			if len(frame) < ethIPv4UDPLen+BTHLen {
				continue
			}
			mutate := func(change func(b []byte)) {
				b := append([]byte(nil), frame...)
				change(b)
				check(b)
			}
			total, udp := binary.BigEndian.Uint16(frame[16:]), binary.BigEndian.Uint16(frame[38:])
			for _, delta := range []int{-1, 1} {
				mutate(func(b []byte) { binary.BigEndian.PutUint16(b[16:], uint16(int(total)+delta)) })
				mutate(func(b []byte) { binary.BigEndian.PutUint16(b[38:], uint16(int(udp)+delta)) })
				mutate(func(b []byte) {
					binary.BigEndian.PutUint16(b[16:], uint16(int(total)+delta))
					binary.BigEndian.PutUint16(b[38:], uint16(int(udp)+delta))
				})
			}
			for _, l := range []uint16{0, 8, 8 + BTHLen + ICRCLen - 1, 8 + BTHLen + ICRCLen} {
				mutate(func(b []byte) {
					binary.BigEndian.PutUint16(b[16:], 20+l)
					binary.BigEndian.PutUint16(b[38:], l)
				})
			}
			mutate(func(b []byte) { b[14] = 0x46 })                            // IP options
			mutate(func(b []byte) { b[20] |= 0x20 })                           // more fragments
			mutate(func(b []byte) { b[21] = 1 })                               // a fragment offset
			mutate(func(b []byte) { b[23] = IPProtocolIFA })                   // not UDP
			mutate(func(b []byte) { b[37]++ })                                 // another port
			mutate(func(b []byte) { b[12], b[13] = 0x81, 0x00 })               // a VLAN tag
			mutate(func(b []byte) { b[24], b[25], b[40], b[41] = 1, 2, 3, 4 }) // checksums
			var f Frame
			d := Decoder{LinkType: LinkTypeEthernet}
			if ok, _ := d.ethernetRoCEv2(frame, &f, false); !ok || swept == 2 {
				continue // every opcode and pad count on the first two frames of a file the fast path takes
			}
			swept++
			for op := range 256 {
				for pad := range 4 {
					mutate(func(b []byte) { b[42], b[43] = byte(op), b[43]&^0x30|byte(pad)<<4 })
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("no frame took the fast path: the comparison compared nothing")
	}
	t.Logf("%d frames took the fast path", taken)
}

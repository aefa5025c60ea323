package decode

import (
	"syscall"
	"testing"
)

// FuzzICRCRoCEv2IPv4: the assembly ICRC of RoCEv2 over IPv4 (icrcIPv4,
// which reads the packet in place) equals the bitwise CRC of the masked
// packet and the general path's, for any bytes and length up to a jumbo
// frame's (TestICRCRoCEv2IPv4 tries rests up to 400 bytes), and reads no
// byte outside the packet: the bytes are placed against a page that may
// not be read, once ending there and once starting there.
func FuzzICRCRoCEv2IPv4(f *testing.F) {
	if !useFoldIPv4 {
		f.Skip("no carry-less multiply and PSHUFB: the IPv4 path is not taken")
	}
	for _, n := range []int{ipUDPBTHLen, ipUDPBTHLen + 15, ipUDPBTHLen + 16, ipUDPBTHLen + 17, 1078, 4136} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		b[0] = 0x45
		f.Add(b)
	}
	page := syscall.Getpagesize()
	const maxLen = 9216 // a jumbo frame's IP packet
	dataPages := (maxLen + page - 1) / page
	mem, err := syscall.Mmap(-1, 0, (dataPages+2)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		f.Fatal(err)
	}
	// A page no byte may be read from before the data pages and after them.
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		f.Fatal(err)
	}
	if err := syscall.Mprotect(mem[(dataPages+1)*page:], syscall.PROT_NONE); err != nil {
		f.Fatal(err)
	}
	data := mem[page : (dataPages+1)*page]
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < ipUDPBTHLen || len(b) > maxLen {
			return
		}
		b = append([]byte(nil), b...)
		b[0] = 0x40 | b[0]&0x0F // IPv4: the general path reads the version to know the header
		masked := append([]byte(nil), b...)
		masked[1], masked[8], masked[10], masked[11] = 0xFF, 0xFF, 0xFF, 0xFF // TOS, TTL, checksum
		masked[26], masked[27] = 0xFF, 0xFF                                   // UDP checksum
		masked[28+4] = 0xFF                                                   // BTH resv8a
		want := crc32Bitwise(pseudoLRH[:], masked)
		for _, msg := range [][]byte{data[len(data)-len(b):], data[:len(b):len(b)]} {
			copy(msg, b)
			if got := roceV2IPv4(msg); got != want {
				t.Fatalf("%d bytes: roceV2IPv4 0x%08x, bitwise 0x%08x", len(b), got, want)
			}
		}
		if got := ICRCRoCEv2(b[:20], b[20:]); got != want {
			t.Fatalf("%d bytes: ICRCRoCEv2 0x%08x, bitwise 0x%08x", len(b), got, want)
		}
	})
}

//go:build linux

package decode

import (
	"syscall"
	"testing"
)

// guardedPage maps a read-write page between two pages that fault on any
// access, and returns the middle one: a read past either end of a slice that
// touches the page's edge crashes the test.
func guardedPage(t *testing.T) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	m, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(m) })
	page := m[ps : 2*ps : 2*ps]
	if err := syscall.Mprotect(page, syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return page
}

// TestICRCRoCEv2IPv4PageEdges runs the IPv4 ICRC routine, and the Decoder
// with CRCs checked, over packets that start at a page's first byte or end
// at its last, the next page unreadable: the assembly's loads (the prefix's
// 16-byte blocks, the last block read back over the tail) stay within msg
// for every rest length, a multiple of 16 or not.
func TestICRCRoCEv2IPv4PageEdges(t *testing.T) {
	page := guardedPage(t)
	for i := range page {
		page[i] = byte(i*7 + 3)
	}
	for k := 0; k <= 100; k++ {
		n := ipUDPBTHLen + k
		for _, msg := range [][]byte{page[:n:n], page[len(page)-n:]} {
			msg[0] = 0x45
			want := ICRCRoCEv2(append([]byte(nil), msg[:20]...), append([]byte(nil), msg[20:]...))
			if useFoldIPv4 {
				if got := roceV2IPv4(msg); got != want {
					t.Fatalf("rest %d: roceV2IPv4 0x%08x, general 0x%08x", k, got, want)
				}
			}
		}
		// A whole Ethernet frame, its ICRC the page's last four bytes.
		frame := page[len(page)-(14+n+ICRCLen):]
		for i := range frame {
			frame[i] = 0
		}
		frame[12], frame[13], frame[14] = 0x08, 0x00, 0x45
		total := 20 + 8 + BTHLen + k + ICRCLen
		frame[16], frame[17] = byte(total>>8), byte(total)
		frame[23] = 17
		frame[36], frame[37] = byte(UDPPortRoCEv2>>8), byte(UDPPortRoCEv2&0xFF)
		frame[38], frame[39] = byte((total-20)>>8), byte(total-20)
		frame[42] = 0x04 // RC SEND Only
		frame[43] = 0    // no pad
		icrc := ICRCRoCEv2(frame[14:34], frame[34:len(frame)-ICRCLen])
		frame[len(frame)-4], frame[len(frame)-3], frame[len(frame)-2], frame[len(frame)-1] =
			byte(icrc), byte(icrc>>8), byte(icrc>>16), byte(icrc>>24)
		d := Decoder{LinkType: LinkTypeEthernet, CheckCRC: true}
		var f Frame
		f.CapLen, f.WireLen = len(frame), len(frame)
		if err := d.Decode(frame, &f); err != nil {
			t.Fatalf("rest %d: %v", k, err)
		}
		if f.Has&HasICRC == 0 || !f.ICRCOK {
			t.Fatalf("rest %d: ICRC not checked or not OK (Has %v, OK %v)", k, f.Has&HasICRC != 0, f.ICRCOK)
		}
	}
}

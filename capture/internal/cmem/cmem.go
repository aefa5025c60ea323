// Package cmem reads memory that a C library loaded at run time (libibverbs,
// libpcap) handed back as an address: pointers into it and NUL-terminated
// strings. That memory is C's, never the Go heap's, so the garbage collector
// neither moves nor frees it.
package cmem

import "unsafe"

// Pointer turns an address a C library returned into a pointer.
func Pointer(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// String copies a NUL-terminated C string of at most maxBytes; a nil
// address is the empty string.
func String(addr uintptr, maxBytes int) string {
	if addr == 0 {
		return ""
	}
	b := unsafe.Slice((*byte)(Pointer(addr)), maxBytes)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

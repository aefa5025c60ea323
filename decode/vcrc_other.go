//go:build !amd64 || purego

package decode

// vcrcUpdate runs the VCRC register c over b.
func vcrcUpdate(c uint16, b []byte) uint16 { return vcrcTableUpdate(c, b) }

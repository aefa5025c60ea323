package decode

// PSNs are 24-bit sequence numbers that wrap: arithmetic is modulo 2^24.
const (
	psnMod = 1 << 24
	// PSNMask keeps PSN arithmetic in its 24 bits.
	PSNMask = psnMod - 1
)

// PSNDiff returns a - b as a signed distance modulo 2^24, in [-2^23, 2^23).
func PSNDiff(a, b uint32) int32 {
	d := (a - b) & PSNMask
	if d >= psnMod/2 {
		return int32(d) - psnMod
	}
	return int32(d)
}

// IsReadResponse reports the RDMA READ response opcodes (first, middle,
// last, only) of RC, RD and XRC.
func IsReadResponse(op Opcode) bool {
	low := uint8(op) & 0x1F
	return op.Valid() && op.Family() < FamilyCNP && low >= 0x0D && low <= 0x10
}

// IsReadRequest reports the RDMA READ request opcodes.
func IsReadRequest(op Opcode) bool {
	return op.Valid() && op.Family() < FamilyCNP && uint8(op)&0x1F == 0x0C
}

// IsFlush reports RC FLUSH (IBA 1.5, opcode 0x1C): a request of one
// packet without payload, answered as an RDMA READ request of no data is.
func IsFlush(op Opcode) bool { return op == 0x1C }

// IsAtomicRequest reports the atomic request opcodes (COMPARE_SWAP,
// FETCH_ADD) of RC, RD and XRC.
func IsAtomicRequest(op Opcode) bool {
	low := uint8(op) & 0x1F
	return op.Valid() && op.Family() < FamilyCNP && (low == 0x13 || low == 0x14)
}

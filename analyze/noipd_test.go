package analyze

import (
	"errors"
	"testing"
)

// NoIPDError says what the input held, by kind, naming a few opcodes of each.
func TestNoIPDErrorFound(t *testing.T) {
	var e NoIPDError
	e.ByOpcode[0x14], e.ByOpcode[0x13], e.ByOpcode[0x12] = 3, 3, 6 // FETCH_ADD, COMPARE_SWAP, ATOMIC_ACKNOWLEDGE
	if got, want := e.Found(), "6 atomics (RC_COMPARE_SWAP, RC_FETCH_ADD) and 6 ACKs (RC_ATOMIC_ACKNOWLEDGE)"; got != want {
		t.Errorf("Found() = %q, want %q", got, want)
	}
	if !e.AtomicsOnly() || !errors.Is(&e, ErrNoIPD) {
		t.Error("atomics and ACKs: AtomicsOnly false, or not ErrNoIPD")
	}
	e.ByOpcode[0x81] = 1 // a CNP
	for op := 0x06; op <= 0x0a; op++ {
		e.ByOpcode[op] = 2 // RDMA WRITE FIRST .. ONLY
	}
	want := "10 data packets (RC_RDMA_WRITE_FIRST, RC_RDMA_WRITE_MIDDLE, RC_RDMA_WRITE_LAST, 2 more), 6 atomics (RC_COMPARE_SWAP, RC_FETCH_ADD), 6 ACKs (RC_ATOMIC_ACKNOWLEDGE) and 1 CNP (CNP)"
	if got := e.Found(); got != want || e.AtomicsOnly() {
		t.Errorf("Found() = %q, want %q", got, want)
	}
}

package capture

import (
	"testing"

	"golang.org/x/net/bpf"
)

// The kernel filter and its user-space twin must agree with the decoder on
// what RoCE is.
func TestRoCEFilter(t *testing.T) {
	const snap = 128
	raw, err := RoCEFilter(snap, false)
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("filter does not disassemble")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	roce, _ := mixedTraffic(20, true)
	for i, f := range roce {
		n, err := vm.Run(f)
		if err != nil || n != snap {
			t.Errorf("RoCE frame %d (%d bytes): filter kept %d bytes, err %v; want %d", i, len(f), n, err, snap)
		}
		if !IsRoCEFrame(f) {
			t.Errorf("RoCE frame %d: IsRoCEFrame false", i)
		}
	}
	for k := range 4 {
		f := otherFrame(k)
		if n, err := vm.Run(f); err != nil || n != 0 {
			t.Errorf("non-RoCE frame kind %d: filter kept %d bytes, err %v", k, n, err)
		}
		if IsRoCEFrame(f) {
			t.Errorf("non-RoCE frame kind %d: IsRoCEFrame true", k)
		}
	}
	for _, short := range [][]byte{nil, {0x08}, make([]byte, 14)} {
		if n, _ := vm.Run(append(short[:len(short):len(short)], make([]byte, 0)...)); n != 0 || IsRoCEFrame(short) {
			t.Errorf("%d-byte frame kept", len(short))
		}
	}
	all, err := RoCEFilter(snap, true)
	if err != nil || len(all) != 1 {
		t.Fatalf("--all filter: %v, %d instructions", err, len(all))
	}
}

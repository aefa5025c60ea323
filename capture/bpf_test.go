package capture

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/ibscope/ibscope/decode"
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

// withTags returns frame (untagged Ethernet) with VLAN tags of the given
// TPIDs inserted after the MAC addresses, outermost first.
func withTags(frame []byte, tpids ...uint16) []byte {
	out := append([]byte(nil), frame[:12]...)
	for i, tpid := range tpids {
		out = binary.BigEndian.AppendUint16(out, tpid)
		out = binary.BigEndian.AppendUint16(out, uint16(100+i)) // VLAN ID
	}
	return append(out, frame[12:]...)
}

// TestRoCEFilterVLANTags: the kernel filter, IsRoCEFrame and the decoder
// agree on RoCE frames under 0, 1 and 2 VLAN tags (802.1Q 0x8100, 802.1ad
// 0x88A8, QinQ both), and on 0x9100 (an old QinQ TPID the decoder does not
// read, so neither keeps it): the filter used to drop QinQ RoCEv2.
func TestRoCEFilterVLANTags(t *testing.T) {
	const snap = 256
	raw, err := RoCEFilter(snap, false)
	if err != nil {
		t.Fatal(err)
	}
	ins, _ := bpf.Disassemble(raw)
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	roce, _ := mixedTraffic(10, false)
	for _, tags := range [][]uint16{nil, {0x8100}, {0x88A8}, {0x88A8, 0x8100}, {0x8100, 0x8100}, {0x88A8, 0x88A8}, {0x9100}, {0x9100, 0x8100}} {
		for i, plain := range roce {
			f := withTags(plain, tags...)
			var fr decode.Frame
			d := decode.Decoder{LinkType: decode.LinkTypeEthernet}
			decoded := d.Decode(f, &fr) == nil && fr.Transport != decode.TransportNone
			want := len(tags) == 0 || tags[0] != 0x9100
			if decoded != want {
				t.Fatalf("tags %#x frame %d: decoder reads it as RoCE: %v, want %v", tags, i, decoded, want)
			}
			n, err := vm.Run(f)
			if err != nil || (n == snap) != want || IsRoCEFrame(f) != want {
				t.Errorf("tags %#x frame %d: filter kept %d bytes (err %v), IsRoCEFrame %v; the decoder reads it as RoCE: %v",
					tags, i, n, err, IsRoCEFrame(f), decoded)
			}
		}
		for k := range 4 { // other traffic under the same tags stays out
			f := withTags(otherFrame(k), tags...)
			if n, _ := vm.Run(f); n != 0 || IsRoCEFrame(f) {
				t.Errorf("tags %#x: non-RoCE frame kind %d kept (%d bytes)", tags, k, n)
			}
		}
	}
}

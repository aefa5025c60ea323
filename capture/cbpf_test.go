package capture

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/ibscope/ibscope/decode"
)

// vmKeeps is x/net/bpf's verdict, the reference: an error rejects.
func vmKeeps(t testing.TB, raw []bpf.RawInstruction, pkt []byte) (uint32, bool) {
	t.Helper()
	insns, _ := bpf.Disassemble(raw)
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	n, err := vm.Run(pkt)
	if err != nil {
		return 0, false // an instruction the reference lacks (NEG)
	}
	return uint32(n), true
}

// The interpreter keeps what x/net/bpf's VM keeps, byte count included,
// for libpcap's programs of loads, arithmetic and jumps of every kind, on
// whole frames and on frames cut short anywhere.
func TestCBPFMatchesReference(t *testing.T) {
	requireLibpcap(t)
	_, frames := mixedTraffic(200, true)
	var pkts [][]byte
	for i, f := range frames {
		pkts = append(pkts, f, f[:i%len(f)])
	}
	pkts = append(pkts, nil)
	for _, expr := range []string{
		"udp port 4791", "vlan and udp dst port 4791", "not ip6 and not arp", "ether proto 0x8915",
		"len > 100 and len <= 1000", "greater 200", "less 64",
		"ip[2:2] - 20 > 50", "ip[0] & 0xf = 5", "udp[8] * 2 == 8", "ip[6:2] / 8 > 0", "ip[6:2] % 8 == 0",
		"ip[0] >> 4 == 4", "ip[0] << 1 > 0x80", "ip[1] ^ 3 == 3", "ip[1] | 1 == 1", "ip[2:2] - ip[0] > 0",
		"ether[0] & 1 == 0", "ip[2:2] > len", "udp[4:2] + 20 = ip[2:2]", "ether src " + macA.String(),
		"ip and (udp[2:2] >= 4791 and udp[2:2] < 4792)", "ip[ip[0] & 0xf] == 0", "ip6 and ip6[6] == 17",
	} {
		raw, err := CompileFilter(expr, decode.LinkTypeEthernet, DefaultSnapLenBytes)
		if err != nil {
			t.Fatal(err)
		}
		p, err := newCBPFProgram(raw)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		kept := 0
		for i, pkt := range pkts {
			want, ok := vmKeeps(t, raw, pkt)
			if !ok {
				continue
			}
			if got := p.run(pkt); got != want {
				t.Fatalf("%s: packet %d (%d bytes): keeps %d, reference %d", expr, i, len(pkt), got, want)
			}
			if want > 0 {
				kept++
			}
		}
		if kept == 0 || kept == len(pkts) {
			t.Errorf("%s keeps %d of %d packets: tells nothing apart", expr, kept, len(pkts))
		}
	}
}

// Any program the validation accepts runs without panicking, and agrees
// with the reference wherever the reference has a verdict: not for NEG,
// which it lacks, nor "ldx len", which it loads into A.
func FuzzCBPF(f *testing.F) {
	seed := func(ins []bpf.Instruction, pkt []byte) {
		raw, err := bpf.Assemble(ins)
		if err != nil {
			f.Fatal(err)
		}
		var prog []byte
		for _, r := range raw {
			prog = binary.BigEndian.AppendUint16(prog, r.Op)
			prog = append(prog, r.Jt, r.Jf)
			prog = binary.BigEndian.AppendUint32(prog, r.K)
		}
		f.Add(prog, pkt)
	}
	frame := rocev2Frame(opSendOnly, 0x11, 1, 64, false, true)
	seed([]bpf.Instruction{bpf.LoadAbsolute{Off: 12, Size: 2}, bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x8100, SkipFalse: 1}, bpf.RetConstant{Val: 100}, bpf.RetA{}}, frame)
	seed([]bpf.Instruction{bpf.LoadMemShift{Off: 18}, bpf.LoadIndirect{Off: 20, Size: 4}, bpf.ALUOpX{Op: bpf.ALUOpDiv}, bpf.StoreScratch{Src: bpf.RegA, N: 3},
		bpf.LoadScratch{Dst: bpf.RegX, N: 3}, bpf.TXA{}, bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: 7}, bpf.RetA{}}, frame)
	seed([]bpf.Instruction{bpf.LoadExtension{Num: bpf.ExtLen}, bpf.Jump{Skip: 1}, bpf.RetConstant{Val: 0}, bpf.RetA{}}, frame[:20])
	// Refused: an ancillary load (the VLAN tag), a jump past the end.
	seed([]bpf.Instruction{bpf.LoadExtension{Num: bpf.ExtVLANTagPresent}, bpf.RetA{}}, frame)
	seed([]bpf.Instruction{bpf.Jump{Skip: 1}, bpf.RetA{}}, frame)
	f.Fuzz(func(t *testing.T, prog, pkt []byte) {
		if len(prog) == 0 || len(prog)%8 != 0 || len(prog) > 8*64 {
			return
		}
		var raw []bpf.RawInstruction
		for i := 0; i < len(prog); i += 8 {
			raw = append(raw, bpf.RawInstruction{Op: binary.BigEndian.Uint16(prog[i:]), Jt: prog[i+2], Jf: prog[i+3], K: binary.BigEndian.Uint32(prog[i+4:])})
		}
		p, err := newCBPFProgram(raw)
		if err != nil {
			return
		}
		got := p.run(pkt)
		for _, in := range raw {
			if in.Op == cbpfLDX|cbpfW|cbpfLEN {
				return
			}
		}
		if want, ok := vmKeeps(t, raw, pkt); ok && got != want {
			t.Fatalf("keeps %d, reference %d", got, want)
		}
	})
}

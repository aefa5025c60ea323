package capture

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/ibscope/ibscope/decode"
)

// Ethernet offsets and types the RoCE filter looks at.
const (
	etherTypeOffset = 12
	etherHeaderLen  = 14
	vlanTagLen      = 4
	etherTypeIPv4   = 0x0800
	etherTypeIPv6   = 0x86DD
	etherTypeVLAN   = 0x8100
	etherTypeQinQ   = 0x88A8
	ipProtoUDP      = 17
	ipv6HeaderLen   = 40
)

// maxVLANTags is how many VLAN tags (802.1Q 0x8100 or 802.1ad 0x88A8, in
// any order, as the decoder reads them) the filters look past: two is
// QinQ, a customer tag inside a provider tag.
const maxVLANTags = 2

// RoCEFilterExpr is what RoCEFilter keeps, in libpcap's filter syntax, for
// a file that records its capture filter (pcapng if_filter).
const RoCEFilterExpr = "udp dst port 4791 or ether proto 0x8915 or (vlan and (udp dst port 4791 or ether proto 0x8915))"

// RoCEFilter returns the classic BPF program the kernel runs on each frame
// before it reaches the ring: it keeps RoCEv2 (UDP destination port 4791
// over IPv4 or IPv6, unfragmented or first fragment-free) and RoCEv1
// (ethertype 0x8915), with up to maxVLANTags VLAN tags, and cuts each kept
// frame to snapLenBytes. With all set it keeps every frame (only the snap
// length applies). Running in the kernel, it spares the ring and the copy
// for everything else, which is what lets a busy netdev be captured.
func RoCEFilter(snapLenBytes int, all bool) ([]bpf.RawInstruction, error) {
	snap := uint32(snapLenBytes)
	if all {
		return bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: snap}})
	}
	var a bpfAsm
	// Kernels that strip the outer VLAN tag into metadata show one tag
	// fewer; the tagged forms are for those that leave the tags in the frame.
	for tags := uint32(0); tags <= maxVLANTags; tags++ {
		a.label(fmt.Sprintf("tags%d", tags))
		a.op(bpf.LoadAbsolute{Off: etherTypeOffset + tags*vlanTagLen, Size: 2})
		if tags < maxVLANTags {
			next := fmt.Sprintf("tags%d", tags+1)
			a.jeq(etherTypeVLAN, next, "")
			a.jeq(etherTypeQinQ, next, "")
		}
		roceMatch(&a, etherHeaderLen+tags*vlanTagLen)
	}
	a.label("accept")
	a.op(bpf.RetConstant{Val: snap})
	a.label("reject")
	a.op(bpf.RetConstant{Val: 0})
	ins, err := a.resolve()
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(ins)
}

// roceMatch appends the RoCE test for a frame whose ethertype is in A and
// whose network header starts at byte nh; it ends in a jump to "accept" or
// "reject".
func roceMatch(a *bpfAsm, nh uint32) {
	p := fmt.Sprintf("@%d.", nh) // labels local to this copy
	a.jeq(decode.EtherTypeRoCEv1, "accept", "")
	a.jeq(etherTypeIPv4, p+"ipv4", "")
	a.jeq(etherTypeIPv6, p+"ipv6", "reject")
	a.label(p + "ipv4")
	a.op(bpf.LoadAbsolute{Off: nh + 9, Size: 1}) // protocol
	a.jeq(ipProtoUDP, "", "reject")
	a.op(bpf.LoadAbsolute{Off: nh + 6, Size: 2}) // fragment offset: later fragments hold no UDP header
	a.jset(0x1FFF, "reject", "")
	a.op(bpf.LoadMemShift{Off: nh}) // X = IPv4 header length
	a.op(bpf.LoadIndirect{Off: nh + 2, Size: 2})
	a.jeq(decode.UDPPortRoCEv2, "accept", "reject")
	a.label(p + "ipv6")
	a.op(bpf.LoadAbsolute{Off: nh + 6, Size: 1}) // next header; RoCEv2 carries no extension headers
	a.jeq(ipProtoUDP, "", "reject")
	a.op(bpf.LoadAbsolute{Off: nh + ipv6HeaderLen + 2, Size: 2})
	a.jeq(decode.UDPPortRoCEv2, "accept", "reject")
}

// bpfAsm assembles classic BPF with named jump targets, so the filter reads
// as a flow chart instead of hand-counted skips. An empty target means the
// next instruction.
type bpfAsm struct {
	ins    []bpf.Instruction
	jumps  []bpfJump
	labels map[string]int
}

type bpfJump struct {
	at          int
	cond        bpf.JumpTest
	val         uint32
	true, false string
}

func (a *bpfAsm) op(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *bpfAsm) jeq(val uint32, t, f string)  { a.jump(bpf.JumpEqual, val, t, f) }
func (a *bpfAsm) jset(val uint32, t, f string) { a.jump(bpf.JumpBitsSet, val, t, f) }

func (a *bpfAsm) jump(cond bpf.JumpTest, val uint32, t, f string) {
	a.jumps = append(a.jumps, bpfJump{at: len(a.ins), cond: cond, val: val, true: t, false: f})
	a.ins = append(a.ins, nil) // filled in by resolve
}

func (a *bpfAsm) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("bpf: jump from %d to label %q (at %d) is not a forward jump within 255", from, label, to)
		}
		return uint8(to - from - 1), nil
	}
	for _, j := range a.jumps {
		st, err := skip(j.at, j.true)
		if err != nil {
			return nil, err
		}
		sf, err := skip(j.at, j.false)
		if err != nil {
			return nil, err
		}
		a.ins[j.at] = bpf.JumpIf{Cond: j.cond, Val: j.val, SkipTrue: st, SkipFalse: sf}
	}
	return a.ins, nil
}

// IsRoCEFrame reports whether an Ethernet frame is RoCE by the same rules as
// RoCEFilter. Backends use it for the frames that reached the ring before
// the kernel filter was attached.
func IsRoCEFrame(b []byte) bool {
	if len(b) < etherHeaderLen {
		return false
	}
	off := etherHeaderLen
	et := binary.BigEndian.Uint16(b[etherTypeOffset:])
	for tags := 0; tags < maxVLANTags && (et == etherTypeVLAN || et == etherTypeQinQ); tags++ {
		if len(b) < off+vlanTagLen {
			return false
		}
		et = binary.BigEndian.Uint16(b[off+2:])
		off += vlanTagLen
	}
	switch et {
	case decode.EtherTypeRoCEv1:
		return true
	case etherTypeIPv4:
		if len(b) < off+20 || b[off+9] != ipProtoUDP || binary.BigEndian.Uint16(b[off+6:])&0x1FFF != 0 {
			return false
		}
		ihl := int(b[off]&0x0F) * 4
		return len(b) >= off+ihl+4 && binary.BigEndian.Uint16(b[off+ihl+2:]) == decode.UDPPortRoCEv2
	case etherTypeIPv6:
		return len(b) >= off+ipv6HeaderLen+4 && b[off+6] == ipProtoUDP &&
			binary.BigEndian.Uint16(b[off+ipv6HeaderLen+2:]) == decode.UDPPortRoCEv2
	}
	return false
}

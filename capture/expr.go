package capture

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/net/bpf"

	"github.com/ibscope/ibscope/capture/internal/libpcap"
	"github.com/ibscope/ibscope/decode"
)

// EnvLibpcap names the libpcap that compiles filter expressions instead of
// libpcap.so.0.8 or libpcap.so.1: a file, or a name dlopen looks up.
const EnvLibpcap = "IBSCOPE_LIBPCAP"

func libpcapPaths() []string {
	if p := os.Getenv(EnvLibpcap); p != "" {
		return []string{p}
	}
	return nil // libpcap.DefaultPaths
}

// CompileFilter compiles a capture filter expression in tcpdump's syntax
// (pcap-filter(7)) to classic BPF for frames of the pcap link type
// linkType, with libpcap's own compiler loaded at run time: the program
// tcpdump -ddd prints, returning snapLenBytes for a kept frame. Without
// libpcap the error says what to install.
func CompileFilter(expr string, linkType, snapLenBytes int) ([]bpf.RawInstruction, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("empty filter expression")
	}
	insns, err := libpcap.Compile(libpcapPaths(), expr, linkType, snapLenBytes)
	if err != nil {
		return nil, err
	}
	raw := make([]bpf.RawInstruction, len(insns))
	for i, in := range insns {
		raw[i] = bpf.RawInstruction{Op: in.Op, Jt: in.JT, Jf: in.JF, K: in.K}
	}
	return raw, nil
}

// frameFilter is the capture filter applied in user space, where the
// kernel's cannot be: to the frames that reached an AF_PACKET ring before
// the kernel program was attached, and to every frame of a verbs port,
// whose sniffer flow has no filter. With an expression it runs the same
// program as the kernel (cbpfProgram); otherwise it keeps RoCE, or every
// frame with all.
type frameFilter struct {
	all  bool
	prog *cbpfProgram // the expression's program; nil without one
}

// keep reports whether the capture filter keeps a whole frame (as on the
// wire, VLAN tags in place).
func (f *frameFilter) keep(frame []byte) bool {
	if f.prog != nil {
		return f.prog.run(frame) > 0
	}
	return f.all || IsRoCEFrame(frame)
}

// On a netdev whose NIC (or veth) moves the outer VLAN tag into metadata,
// the kernel runs the filter on the frame without its tag. tcpdump's live
// filter works on that frame too, so "udp port 4791" keeps tagged frames
// and "not udp" drops them, but libpcap's Linux sockets get a program whose
// "vlan" primitive reads the tag from the metadata (ancillary loads), which
// a compiler without a socket does not emit. ibcap keeps what tcpdump
// keeps by running an expression without "vlan" on the untagged frame, in
// the kernel and in user space alike, and one with "vlan" on the frame as
// it was on the wire, with the tag put back: the kernel passes tagged
// frames to user space for that (passStrippedTags).

// usesVLAN reports whether an expression has the "vlan" primitive.
func usesVLAN(expr string) bool {
	for _, w := range strings.FieldsFunc(expr, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) {
		if strings.EqualFold(w, "vlan") {
			return true
		}
	}
	return false
}

// passStrippedTags prefixes an expression's program for an AF_PACKET
// socket: a frame whose VLAN tag is in metadata is passed whole, and the
// user-space filter decides on it once the tag is back in the frame.
// Untagged frames are decided in the kernel exactly as in user space.
func passStrippedTags(prog []bpf.RawInstruction, snapLenBytes int) ([]bpf.RawInstruction, error) {
	if len(prog)+3 > libpcap.MaxInstructions {
		return nil, fmt.Errorf("the filter's %d instructions and 3 for VLAN tags exceed the kernel's %d", len(prog), libpcap.MaxInstructions)
	}
	head, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtVLANTagPresent},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0, SkipTrue: 1},
		bpf.RetConstant{Val: uint32(snapLenBytes)},
	})
	if err != nil {
		return nil, err
	}
	return append(head, prog...), nil
}

// packetOutgoing is the packet type of a frame the host sent
// (PACKET_OUTGOING, linux/if_packet.h).
const packetOutgoing = 4

// keepDirection prefixes an AF_PACKET socket's program with a test of the
// way the frame went (the kernel's packet type: PACKET_OUTGOING for what
// the host sent), which keeps only dir's frames (tcpdump -Q): in the
// kernel, so that a frame whose VLAN tag gopacket puts back in a copy,
// whose direction user space cannot read, is chosen too.
func keepDirection(prog []bpf.RawInstruction, dir decode.Direction) ([]bpf.RawInstruction, error) {
	if len(prog)+3 > libpcap.MaxInstructions {
		return nil, fmt.Errorf("the filter's %d instructions and 3 for the direction exceed the kernel's %d", len(prog), libpcap.MaxInstructions)
	}
	test := bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipFalse: 1} // in: an outgoing frame is dropped
	if dir == decode.DirectionOutbound {
		test = bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipTrue: 1}
	}
	head, err := bpf.Assemble([]bpf.Instruction{bpf.LoadExtension{Num: bpf.ExtType}, test, bpf.RetConstant{Val: 0}})
	if err != nil {
		return nil, err
	}
	return append(head, prog...), nil
}

// captureFilter returns the kernel program and the user-space filter for
// c's frames of linkType: the compiled c.FilterExpr when there is one (it
// replaces the RoCE filter, as a tcpdump expression says what is kept),
// else the RoCE filter, or every frame with c.All.
func captureFilter(c Config, linkType int) ([]bpf.RawInstruction, frameFilter, error) {
	if c.FilterExpr == "" {
		prog, err := RoCEFilter(c.SnapLenBytes, c.All)
		if err != nil {
			return nil, frameFilter{}, fmt.Errorf("build the RoCE filter: %w", err)
		}
		return prog, frameFilter{all: c.All}, nil
	}
	raw, err := CompileFilter(c.FilterExpr, linkType, c.SnapLenBytes)
	if err != nil {
		return nil, frameFilter{}, err
	}
	prog, err := newCBPFProgram(raw)
	if err != nil {
		return nil, frameFilter{}, fmt.Errorf("filter %q: libpcap's program: %w", c.FilterExpr, err)
	}
	return raw, frameFilter{prog: prog}, nil
}

//go:build linux && (amd64 || arm64)

package libpcap

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ibscope/ibscope/capture/internal/cmem"
)

// netmaskUnknown is PCAP_NETMASK_UNKNOWN: "ip broadcast" is refused, every
// other primitive compiles, as on tcpdump -i any.
const netmaskUnknown = 0xFFFFFFFF

// errbufBytes is PCAP_ERRBUF_SIZE, the size of the message pcap_geterr
// returns.
const errbufBytes = 256

// program is struct bpf_program on a 64-bit platform.
type program struct {
	len   uint32  // bf_len: instructions
	_     uint32  // padding before the pointer
	insns uintptr // bf_insns: struct bpf_insn *, libpcap's memory
}

type lib struct {
	openDead, compile, geterr, freecode, close uintptr
}

var (
	loadOnce sync.Once
	loaded   *lib
	loadErr  error
	// libpcap's compiler was not reentrant before 1.8; one at a time.
	compileMu sync.Mutex
)

func load(paths []string) (*lib, error) {
	var reasons []string
	for _, path := range paths {
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		l := &lib{}
		missing := ""
		for _, s := range []struct {
			name string
			addr *uintptr
		}{
			{"pcap_open_dead", &l.openDead}, // pcap_t *pcap_open_dead(int linktype, int snaplen)
			{"pcap_compile", &l.compile},    // int pcap_compile(pcap_t *, struct bpf_program *, const char *, int optimize, bpf_u_int32 netmask)
			{"pcap_geterr", &l.geterr},      // char *pcap_geterr(pcap_t *)
			{"pcap_freecode", &l.freecode},  // void pcap_freecode(struct bpf_program *)
			{"pcap_close", &l.close},        // void pcap_close(pcap_t *)
		} {
			p, err := purego.Dlsym(h, s.name)
			if err != nil || p == 0 {
				missing = s.name
				break
			}
			*s.addr = p
		}
		if missing != "" {
			purego.Dlclose(h)
			reasons = append(reasons, fmt.Sprintf("%s lacks %s", path, missing))
			continue
		}
		return l, nil
	}
	return nil, loadError(reasons)
}

// Available returns nil when libpcap loads from one of paths (nil means
// DefaultPaths), or an error wrapping ErrUnavailable that says what to
// install.
func Available(paths []string) error {
	_, err := get(paths)
	return err
}

func get(paths []string) (*lib, error) {
	if paths != nil {
		return load(paths)
	}
	loadOnce.Do(func() { loaded, loadErr = load(DefaultPaths) })
	return loaded, loadErr
}

// Compile compiles expr for frames of the pcap link type linkType cut to
// snapLenBytes, with libpcap's optimizer, as tcpdump does. paths are the
// libraries to try (nil: DefaultPaths). A kept frame's program returns
// snapLenBytes.
func Compile(paths []string, expr string, linkType, snapLenBytes int) ([]Instruction, error) {
	l, err := get(paths)
	if err != nil {
		return nil, err
	}
	if snapLenBytes <= 0 || snapLenBytes > 1<<30 {
		return nil, fmt.Errorf("filter %q: snap length %d bytes out of range", expr, snapLenBytes)
	}
	cexpr := append([]byte(expr), 0)
	if strings.IndexByte(expr, 0) >= 0 {
		return nil, &SyntaxError{Expr: expr, Msg: "contains a NUL byte"}
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	p, _, _ := purego.SyscallN(l.openDead, uintptr(linkType), uintptr(snapLenBytes))
	if p == 0 {
		return nil, fmt.Errorf("filter %q: pcap_open_dead(link type %d) failed", expr, linkType)
	}
	defer purego.SyscallN(l.close, p)
	var prog program
	// SyscallN's uintptrescapes keeps prog and cexpr alive and in place
	// for the call; libpcap keeps neither.
	rc, _, _ := purego.SyscallN(l.compile, p, uintptr(unsafe.Pointer(&prog)), uintptr(unsafe.Pointer(&cexpr[0])), 1, netmaskUnknown)
	if int32(rc) != 0 {
		msg, _, _ := purego.SyscallN(l.geterr, p)
		return nil, &SyntaxError{Expr: expr, Msg: cmem.String(msg, errbufBytes)}
	}
	defer purego.SyscallN(l.freecode, uintptr(unsafe.Pointer(&prog)))
	if prog.len == 0 || prog.len > MaxInstructions || prog.insns == 0 {
		return nil, fmt.Errorf("filter %q: libpcap compiled %d instructions; the kernel takes 1 to %d", expr, prog.len, MaxInstructions)
	}
	src := unsafe.Slice((*Instruction)(cmem.Pointer(prog.insns)), prog.len)
	return append([]Instruction(nil), src...), nil
}

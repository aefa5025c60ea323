package libpcap

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultPaths are the names dlopen tries, in order: Debian's libpcap0.8
// ships libpcap.so.0.8, other distributions libpcap.so.1.
var DefaultPaths = []string{"libpcap.so.0.8", "libpcap.so.1"}

// InstallAdvice says what to install when libpcap is missing.
const InstallAdvice = "install libpcap (apt-get install libpcap0.8; dnf install libpcap)"

// ErrUnavailable is in Compile's error when libpcap cannot be loaded or
// lacks a function.
var ErrUnavailable = errors.New("a filter expression needs libpcap")

// MaxInstructions is the longest program the Linux kernel accepts
// (BPF_MAXINSNS); Compile refuses longer ones.
const MaxInstructions = 4096

// Instruction is one classic BPF instruction as struct bpf_insn holds it.
type Instruction struct {
	Op     uint16
	JT, JF uint8
	K      uint32
}

// SyntaxError is an expression libpcap refused, with its message.
type SyntaxError struct {
	Expr, Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter %q: %s", e.Expr, strings.TrimSpace(e.Msg))
}

// loadError says why no libpcap could be used: every path tried, each
// with its reason.
func loadError(reasons []string) error {
	return fmt.Errorf("%w (%s); %s", ErrUnavailable, strings.Join(reasons, "; "), InstallAdvice)
}

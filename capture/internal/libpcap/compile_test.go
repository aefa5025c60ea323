package libpcap

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// requireLibpcap skips without libpcap, except under CI, which installs it.
func requireLibpcap(t *testing.T) {
	t.Helper()
	if err := Available(nil); err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
}

// The program is tcpdump's: the same instructions tcpdump -ddd prints for
// the same expression on Ethernet.
func TestCompileMatchesTcpdump(t *testing.T) {
	requireLibpcap(t)
	testenv.MustHaveTool(t, "tcpdump")
	for _, expr := range []string{"udp port 4791", "host 10.199.0.1 and not icmp", "vlan and udp dst port 4791", "ether proto 0x8915", "greater 100"} {
		got, err := Compile(nil, expr, 1, 262144)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		out, err := exec.Command("tcpdump", "-y", "EN10MB", "-s", "262144", "-ddd", expr).Output()
		if err != nil {
			t.Fatalf("tcpdump -ddd %s: %v", expr, err)
		}
		lines := strings.Fields(string(out))
		if n, _ := strconv.Atoi(lines[0]); n != len(got) || len(lines) != 1+4*n {
			t.Fatalf("%s: %d instructions, tcpdump has %s", expr, len(got), lines[0])
		}
		for i, ins := range got {
			want := strings.Join(lines[1+4*i:5+4*i], " ")
			if g := strconv.Itoa(int(ins.Op)) + " " + strconv.Itoa(int(ins.JT)) + " " + strconv.Itoa(int(ins.JF)) + " " + strconv.FormatUint(uint64(ins.K), 10); g != want {
				t.Errorf("%s: instruction %d is %s, tcpdump's %s", expr, i, g, want)
			}
		}
	}
}

func TestCompileSyntaxError(t *testing.T) {
	requireLibpcap(t)
	_, err := Compile(nil, "udp prot 4791", 1, 65535)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `filter "udp prot 4791": `) || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("got %v", err)
	}
	if _, err := Compile(nil, "udp\x00", 1, 65535); !errors.As(err, &se) {
		t.Errorf("NUL: got %v", err)
	}
}

// Without libpcap the error says what to install.
func TestCompileWithoutLibpcap(t *testing.T) {
	_, err := Compile([]string{"/nonexistent/libpcap.so"}, "udp", 1, 65535)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "libpcap0.8") {
		t.Errorf("got %v", err)
	}
	if _, err := Compile([]string{"libc.so.6"}, "udp", 1, 65535); err == nil || !strings.Contains(err.Error(), "lacks pcap_open_dead") {
		t.Errorf("a library without libpcap's functions: got %v", err)
	}
}

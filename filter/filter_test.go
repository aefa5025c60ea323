package filter

import (
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testenv"
)

const rocev2Pcap = "../testdata/pcaps/rocev2_ipv4.pcap"

// frames reads every frame of a capture, decoded.
func frames(t testing.TB, path string) []decode.Frame {
	r, err := capfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []decode.Frame
	for {
		var f decode.Frame
		err := r.Next(&f)
		if err == io.EOF {
			return out
		}
		var de *capfile.DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatal(err)
		}
		f.Payload = nil
		out = append(out, f)
	}
}

func count(t *testing.T, expr string, fs []decode.Frame) int {
	t.Helper()
	x, err := Compile(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	n := 0
	for i := range fs {
		if x.Match(&fs[i]) {
			n++
		}
	}
	return n
}

// TestBesideTshark: each expression selects the frames its tshark display
// filter does, on the bundled RoCEv2 captures (IPv4, and IPv6 for its
// flow label and hop limit).
func TestBesideTshark(t *testing.T) {
	tshark := testenv.MustHaveTool(t, "tshark")
	besideTshark(t, tshark, rocev2Pcap, []beside{
		{`qp == 0x100`, `infiniband.bth.destqp == 0x100`},
		{`qp == 0x100 && opcode == "RC_SEND_FIRST"`, `infiniband.bth.destqp == 0x100 && infiniband.bth.opcode == 0`},
		{`src == 192.168.7.1`, `ip.src == 192.168.7.1 && udp.dstport == 4791`}, // a field of RoCE frames only
		{`src == 192.168.7.0/24 and not dst == 192.168.7.1`, `ip.src == 192.168.7.0/24 && !(ip.dst == 192.168.7.1) && udp.dstport == 4791`},
		{`pcp == 3`, `vlan.priority == 3`},
		{`dscp == 26 || ecn == 3`, `ip.dsfield.dscp == 26 || ip.dsfield.ecn == 3`},
		{`psn > 16777205`, `infiniband.bth.psn > 16777205`},
		{`psn <= 100 && transport == rocev2`, `infiniband.bth.psn <= 100 && udp.dstport == 4791`},
		{`udp_src_port in {49152, 49226, 49300}`, `udp.srcport in {49152, 49226, 49300}`},
		{`opcode_name in {RC_SEND_FIRST, RC_SEND_LAST}`, `infiniband.bth.opcode in {0, 2}`},
		{`bth && solicited && !(ttl != 64)`, `infiniband.bth.se == 1 && ip.ttl == 64`}, // RoCE from UDP port 69 told to tshark as such
		{`fecn || becn`, `infiniband.bth[4] & 0xc0`},
		{`eth_src == 02:00:00:00:00:02`, `eth.src == 02:00:00:00:00:02`},
		{`len >= 100`, `frame.len >= 100`},
		{`vlan == 101 && vlan_pcp == 3 && !vlan_dei`, `vlan.id == 101 && vlan.priority == 3 && vlan.dei == 0`},
		{`vlan_id in {101, 102} and opcode != 0`, `vlan.id in {101, 102} && infiniband.bth.opcode != 0`},
		{`eth_dst == 02:00:00:00:00:03 and ttl == 64`, `eth.dst == 02:00:00:00:00:03 && ip.ttl == 64 && udp.dstport == 4791`},
	})
	besideTshark(t, tshark, "../testdata/pcaps/rocev2_ipv6.pcap", []beside{
		{`flow_label == 0x0c925b`, `ipv6.flow == 0x0c925b`},
		{`flow_label > 0x0d0000 && dscp == 26`, `ipv6.flow > 0x0d0000 && ipv6.tclass.dscp == 26`},
		{`ttl == 64 && src == fd00::/16`, `ipv6.hlim == 64 && ipv6.src == fd00::/16 && udp.dstport == 4791`},
		{`vlan == 102`, `vlan.id == 102`},
	})
}

// beside is one of our expressions and the tshark display filter that
// selects the same frames.
type beside struct{ ours, tshark string }

// besideTshark checks each pair on the capture at path: ours selects as
// many frames as tshark's filter does, at least one.
func besideTshark(t *testing.T, tshark, path string, cases []beside) {
	t.Helper()
	fs := frames(t, path)
	for _, c := range cases {
		ours := count(t, c.ours, fs)
		out, err := exec.Command(tshark, "-r", path, "-n", "-d", "udp.port==69,infiniband", "-Y", c.tshark, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v", c.tshark, err)
		}
		theirs := len(strings.Fields(string(out)))
		if ours != theirs || ours == 0 {
			t.Errorf("%s: %d frames; tshark -Y '%s': %d", c.ours, ours, c.tshark, theirs)
		} else {
			t.Logf("%-50s %3d frames, as tshark -Y '%s'", c.ours, ours, c.tshark)
		}
	}
}

// TestCompileErrors: an expression that does not compile names the column
// of the token at fault.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		expr string
		col  int
		msg  string
	}{
		{`qpn == 1`, 1, `unknown field "qpn"`},
		{`qp == 0x11 && opcode == "RC_SEND_ONYL"`, 25, `not an opcode name`},
		{`qp = 1`, 4, `compare with ==`},
		{`(qp == 1`, 9, `')' is missing`},
		{`qp == 1 qp == 2`, 9, `want && or ||`},
		{`src == 10.0.0.300`, 8, `not an IP address`},
		{`src < 10.0.0.1`, 7, `== and != only`},
		{`psn > -1`, 7, `not an unsigned number`},
		{`qp in {1, 2`, 12, `want ',' or '}'`},
		{`"x`, 1, `not closed`},
		{``, 1, `empty expression`},
		{`qp ==`, 6, `a value should follow`},
		{`&& qp`, 1, `where a field name should be`},
	} {
		_, err := Compile(c.expr)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: %v; want column %d, %q", c.expr, err, c.col, c.msg)
		} else if !strings.HasSuffix(se.Caret(), "\n"+strings.Repeat(" ", c.col-1)+"^") {
			t.Errorf("%q: caret %q", c.expr, se.Caret())
		}
	}
	deep := strings.Repeat("(", 1000) + "qp == 1" + strings.Repeat(")", 1000)
	if _, err := Compile(deep); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("1000 parentheses: %v", err)
	}
}

// TestSelection: --from/--to, absolute or relative to the first packet,
// and -c.
func TestSelection(t *testing.T) {
	fs := frames(t, rocev2Pcap)
	t0 := fs[0].TsNs
	keep := func(s *Selection) (n int) {
		for i := range fs {
			k, done := s.Keep(&fs[i])
			if done {
				break
			}
			if k {
				n++
			}
		}
		return n
	}
	from, err := ParseTime("+10us")
	if err != nil {
		t.Fatal(err)
	}
	to, _ := ParseTime("50us")
	want := 0
	for _, f := range fs {
		if f.TsNs >= t0+10_000 && f.TsNs < t0+50_000 {
			want++
		}
	}
	if n := keep(&Selection{From: from, To: to}); n != want || n == 0 {
		t.Errorf("+10us to +50us: %d frames, want %d", n, want)
	}
	abs, _ := ParseTime(strconv.FormatFloat(float64(t0+10_000)/1e9, 'f', 9, 64))
	if n := keep(&Selection{From: abs}); n != len(fs)-countBefore(fs, t0+10_000) {
		t.Errorf("from an absolute time: %d frames", n)
	}
	x, _ := Compile("qp == 0x100")
	if n := keep(&Selection{Filter: x, Count: 1}); n != 1 {
		t.Errorf("-c 1: %d frames", n)
	}
	for _, bad := range []string{"yesterday", "+-1s", "-5s", "2026-13-01T00:00:00Z"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("%q taken as a time", bad)
		}
	}
	if tm, err := ParseTime("2026-11-26 09:10:11.5"); err != nil || tm.Ns != 1795684211_500_000_000 || tm.Relative {
		t.Errorf("RFC 3339 with a space: %+v %v", tm, err)
	}
}

// TestSelectionFarBounds: a bound past what int64 nanoseconds hold is
// refused (3000-01-01 read as a time before 1970, so --to kept nothing and
// --from everything), and a far relative bound is past every frame, not
// wrapped round before them all.
func TestSelectionFarBounds(t *testing.T) {
	for _, far := range []string{"3000-01-01T00:00:00Z", "1600-01-01 00:00:00", "2262-04-12T00:00:00Z"} {
		if tm, err := ParseTime(far); err == nil || !strings.Contains(err.Error(), "from 1678 to 2261") {
			t.Errorf("%q: %+v %v", far, tm, err)
		}
	}
	if tm, err := ParseTime("2262-04-11T00:00:00Z"); err != nil || tm.Ns <= 0 {
		t.Errorf("2262-04-11: %+v %v", tm, err)
	}
	fs := frames(t, rocev2Pcap)
	to, err := ParseTime("+2540400h")
	if err != nil {
		t.Fatal(err)
	}
	s := Selection{To: to}
	n := 0
	for i := range fs {
		if k, _ := s.Keep(&fs[i]); k {
			n++
		}
	}
	if n != len(fs) {
		t.Errorf("--to +2540400h: %d of %d frames", n, len(fs))
	}
}

func countBefore(fs []decode.Frame, ns int64) (n int) {
	for _, f := range fs {
		if f.TsNs < ns {
			n++
		}
	}
	return n
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{`qp == 0x11 && opcode == "RC_SEND_ONLY"`, `src == 10.0.0.1`, `pcp == 3`, `psn > 100`,
		`!(a || b) && c in {1,2}`, `src in {10.0.0.0/8, fe80::1}`, `((((`, `"\"`, `eth_src == 02:00:00:00:00:01 or not reth`} {
		f.Add(s)
	}
	fs := frames(f, rocev2Pcap)
	f.Fuzz(func(t *testing.T, expr string) {
		x, err := Compile(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Col < 1 || se.Col > len(expr)+1 {
				t.Fatalf("%q: %v (column out of the expression)", expr, err)
			}
			return
		}
		for i := range fs {
			x.Match(&fs[i])
		}
	})
}

// TestHeadOnly: a filter that tests only what a frame's head holds (the
// record, the transport, which headers it has) says so, and decode
// --summary then decodes heads only; any other field needs the frame.
func TestHeadOnly(t *testing.T) {
	for expr, want := range map[string]bool{
		`transport == rocev2`:            true,
		`bth && !reth || len > 100`:      true,
		`frame < 10 and ts_ns > 0`:       true,
		`cap_len != 60`:                  true,
		`psn >= 0`:                       false,
		`bth && qp == 0x11`:              false,
		`transport == rocev2 && icrc_ok`: true,
		`not (eth && vlan_id in {1, 2})`: false,
		`reth_va > 0`:                    false,
	} {
		x, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if x.HeadOnly() != want {
			t.Errorf("%s: HeadOnly %v, want %v", expr, x.HeadOnly(), want)
		}
	}
	// The header fields a head must hold for the filter, or none will do.
	for expr, want := range map[string]struct {
		fields decode.HeadFields
		ok     bool
	}{
		`len > 0`:                        {0, true},
		`psn >= 0`:                       {decode.HeadPSN, true},
		`qp == 0x11 || opcode_name == 4`: {decode.HeadQP | decode.HeadOpcode, true},
		`fecn || psn > 3`:                {decode.HeadBTH | decode.HeadPSN, true},
		`src == 10.0.0.1 || udp`:         {decode.HeadSrc, true},
		`pcp == 3 && dscp == 26`:         {decode.HeadEthernet | decode.HeadIP, true},
		`eth_src == 02:00:00:00:00:01`:   {decode.HeadEthernet, true},
		`psn > 0 && reth_va > 0`:         {decode.HeadBTH, false},
		`flow_label == 1`:                {0, false},
	} {
		x, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if fields, ok := x.Head(); ok != want.ok || ok && fields != want.fields {
			t.Errorf("%s: Head %v %v, want %v %v", expr, fields, ok, want.fields, want.ok)
		}
	}
}

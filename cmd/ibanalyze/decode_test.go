package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

func TestDecodeJSONRealCaptures(t *testing.T) {
	cases := []struct {
		file           string
		frames, icrcOK int
		vcrcOK         int
		transport      string
	}{
		{"softroce-demo_infiniband.pcap", 43, 43, 43, "ib"},
		{"oferby-proxy_roce.pcap", 105, 105, 0, "rocev2"},
		{"cx4lx_cnp.pcap", 1, 1, 0, "rocev2"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			out, stderr, code := run(t, "decode", "--json", sharedPcap(t, c.file))
			if code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != c.frames {
				t.Fatalf("%d JSON lines, want %d", len(lines), c.frames)
			}
			icrc, vcrc := 0, 0
			for i, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("line %d: %v: %s", i+1, err, l)
				}
				if m["transport"] != c.transport {
					t.Errorf("line %d: transport %v, want %s", i+1, m["transport"], c.transport)
				}
				for _, k := range []string{"frame", "ts_ns", "len", "opcode", "opcode_name", "dest_qp", "psn", "pkey"} {
					if _, ok := m[k]; !ok {
						t.Errorf("line %d: no %q key", i+1, k)
					}
				}
				if m["icrc_ok"] == true {
					icrc++
				}
				if m["vcrc_ok"] == true {
					vcrc++
				}
			}
			if icrc != c.icrcOK || vcrc != c.vcrcOK {
				t.Errorf("icrc_ok %d vcrc_ok %d, want %d and %d", icrc, vcrc, c.icrcOK, c.vcrcOK)
			}
		})
	}
}

func TestDecodeCNP(t *testing.T) {
	out, _, code := run(t, "decode", "--json", sharedPcap(t, "cx4lx_cnp.pcap"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m struct {
		OpcodeName string `json:"opcode_name"`
		DestQP     int    `json:"dest_qp"`
		BECN       bool   `json:"becn"`
		ECN        int    `json:"ecn"`
		Src, Dst   string
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.OpcodeName != "CNP" || m.DestQP != 280 || !m.BECN || m.Src != "10.0.17.1" || m.Dst != "10.0.18.1" {
		t.Errorf("CNP decoded as %+v", m)
	}
}

func TestDecodeSummaryLines(t *testing.T) {
	out, _, code := run(t, "decode", "-c", "20", sharedPcap(t, "oferby-proxy_roce.pcap"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out, "RC_SEND_LAST_WITH_IMMEDIATE qp 0x000045 psn 1") || !strings.Contains(out, "icrc ok") {
		t.Errorf("summary lines lack the expected frame:\n%s", out)
	}
}

// An RDMA READ response carries an AETH, yet its line must not read as an
// ACK: it shows the MSN, and the syndrome only on ACK opcodes (or when it is
// not the ACK a READ response's must be).
func TestDecodeReadResponseNotAck(t *testing.T) {
	out := runOK(t, "decode", "../../testdata/pcaps/rocev2_rping.pcap")
	var reads, acks int
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "RC_RDMA_READ_RESPONSE_FIRST"), strings.Contains(l, "RC_RDMA_READ_RESPONSE_LAST"):
			reads++
			if strings.Contains(l, " ACK") || !strings.Contains(l, " msn ") {
				t.Errorf("READ response line: %s", l)
			}
		case strings.Contains(l, "RC_ACKNOWLEDGE"):
			if strings.Contains(l, " ACK msn ") {
				acks++
			} else if !strings.Contains(l, " NAK PSN_SEQUENCE_ERROR msn ") {
				t.Errorf("ACK line: %s", l)
			}
		}
	}
	if reads != 22 || acks != 12 {
		t.Errorf("%d READ response FIRST/LAST lines, %d ACK lines; the capture holds 22 and 12", reads, acks)
	}
}

func TestDecodeBadInput(t *testing.T) {
	dir := t.TempDir()
	notPcap := filepath.Join(dir, "notes.txt")
	os.WriteFile(notPcap, []byte("this is not a capture file\n"), 0o644)
	real, err := os.ReadFile(sharedPcap(t, "oferby-proxy_roce.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, real[:len(real)-30], 0o644)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)

	_, stderr, code := run(t, "decode", notPcap)
	if code == 0 || !strings.Contains(stderr, notPcap) || !strings.Contains(stderr, "not a pcap or pcapng file") {
		t.Errorf("not a capture: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "decode", empty)
	if code == 0 || !strings.Contains(stderr, empty) {
		t.Errorf("empty file: exit %d, stderr %q", code, stderr)
	}
	out, stderr, code := run(t, "decode", "--json", cut, sharedPcap(t, "cx4lx_cnp.pcap"))
	if code == 0 || !strings.Contains(stderr, "frame 123") || !strings.Contains(stderr, "byte offset") {
		t.Errorf("cut file: exit %d, stderr %q", code, stderr)
	}
	// Everything before the cut record, and the next file, were still decoded.
	if n := strings.Count(out, "\n"); n != 104+1 {
		t.Errorf("%d frames printed around a damaged file, want 105", n)
	}
}

// contractKeys is the decode --json contract of design.md, key for key, with
// the JSON kind of each value; nested headers list their keys. rdeth, xrceth
// and atomic_ack_eth are the extended headers the contract does not name.
var contractKeys = map[string]string{
	"frame": "number", "ts_ns": "number", "len": "number", "transport": "string",
	"slid": "number", "dlid": "number", "sl": "number", "vl": "number",
	"src": "string", "dst": "string", "ecn": "number", "sgid": "string", "dgid": "string",
	"opcode": "number", "opcode_name": "string", "dest_qp": "number", "psn": "number",
	"ack_req": "bool", "fecn": "bool", "becn": "bool", "solicited": "bool", "pkey": "number", "pad": "number",
	"reth": "va rkey dma_len", "aeth": "syndrome msn", "deth": "qkey src_qp",
	"atomic_eth": "va rkey swap_add compare", "imm": "number", "ieth": "number", "feth": "placement selectivity",
	"icrc_ok": "bool", "vcrc_ok": "bool", "link": "op fctbs vl fccl lpcrc_ok", "error": "string",
	"rdeth": "ee_cnxt", "xrceth": "xrc_srq", "atomic_ack_eth": "orig_rem_data",
	"dc": "header connect", "mad": madCommonKeys,
	"eth_src": "string", "eth_dst": "string", "vlans": "[]dei id pcp tpid",
	"dscp": "number", "ttl": "number", "flow_label": "number", "udp_src_port": "number",
}

// madCommonKeys are the keys of every "mad" object; the class's headers
// and the attribute's layout add their own objects (decode/mad.go).
const madCommonKeys = "base_version mgmt_class class_name class_version method status class_specific transaction_id attribute_id attribute_modifier"

// madCommon returns the common-header keys a "mad" object has, sorted.
func madCommon(v any) string {
	m, _ := v.(map[string]any)
	var keys []string
	for _, k := range strings.Fields(madCommonKeys) {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any: // an array of objects of one shape (vlans)
		if len(v) == 0 {
			return "[]"
		}
		return "[]" + jsonKind(v[0])
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return strings.Join(keys, " ")
	}
	return fmt.Sprintf("%T", v)
}

func sortedWords(s string) string {
	w := strings.Fields(s)
	sort.Strings(w)
	return strings.Join(w, " ")
}

// TestDecodeJSONContract decodes every bundled capture, plus one with a frame
// that cannot be decoded and one with IBA 1.5's FLUSH and ATOMIC WRITE
// (which the bundled captures, held to tshark 4.0, lack), and checks each
// key and its kind against the contract, and that every key of the
// contract turns up.
func TestDecodeJSONContract(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", "*.pcap*"))
	if len(files) == 0 {
		t.Fatal("no captures in testdata/pcaps")
	}
	files = append(files, badOpcodeCapture(t), testcap.Write(t, "iba15.pcap", false, []testcap.Packet{
		{TsNs: testcap.BaseNs, Src: 1, Dst: 2, QP: 0x11, PSN: 5, Op: 0x1C, DMALen: 4096},
		{TsNs: testcap.BaseNs + 1000, Src: 1, Dst: 2, QP: 0x11, PSN: 6, Op: 0x1D, DMALen: 8, Payload: 8},
	}))
	seen := map[string]bool{}
	for _, path := range files {
		out, _, _ := run(t, "decode", "--json", path)
		for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s: line %d: %v: %s", path, i+1, err, l)
			}
			for k, v := range m {
				want, ok := contractKeys[k]
				want, got := sortedWords(want), jsonKind(v)
				if k == "mad" {
					got = madCommon(v)
				}
				switch {
				case !ok:
					t.Errorf("%s: line %d: key %q is not in the contract: %s", path, i+1, k, l)
				case got != want:
					t.Errorf("%s: line %d: %q is %s, want %s", path, i+1, k, got, want)
				}
				seen[k] = true
			}
		}
	}
	for k := range contractKeys {
		if !seen[k] {
			t.Errorf("no frame of the bundled captures has the key %q", k)
		}
	}
}

// badOpcodeCapture copies testdata/pcaps/rocev2_ipv4.pcap with a reserved
// opcode in the BTH of its first RoCEv2 IPv4 frame.
func badOpcodeCapture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capfile.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f decode.Frame
	for {
		if err := r.Next(&f); err == io.EOF {
			t.Fatalf("%s holds no RoCEv2 IPv4 frame", src)
		}
		if f.Transport == decode.TransportRoCEv2 && f.Has&decode.HasIPv4 != 0 {
			break
		}
	}
	bth := f.Offset + 16 + 14 + 4*int64(b[f.Offset+16+14]&0xF) + 8 // record header, Ethernet, IPv4, UDP
	if binary.BigEndian.Uint16(b[bth-6:]) != decode.UDPPortRoCEv2 {
		t.Fatalf("frame %d: no RoCEv2 UDP header before byte %d", f.Number, bth)
	}
	b[bth] = 0x1f // reserved in the RC range
	path := filepath.Join(t.TempDir(), "bad-opcode.pcap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDecodeBadFrame: a frame that cannot be decoded is named on stderr with
// its file, frame number and byte offset, carries an "error" key, the frames
// after it are decoded, and the exit code is 1.
func TestDecodeBadFrame(t *testing.T) {
	path := badOpcodeCapture(t)
	good, _, _ := run(t, "decode", "--json", filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap"))
	out, stderr, code := run(t, "decode", "--json", path)
	if code != 1 || !strings.Contains(stderr, path+": frame ") || !strings.Contains(stderr, "byte offset") ||
		!strings.Contains(stderr, "unknown opcode 0x1f") || !strings.Contains(stderr, "1 could not be decoded") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if strings.Count(out, "\n") != strings.Count(good, "\n") || strings.Count(out, `"error":`) != 1 {
		t.Errorf("%d lines (%d with an error), want %d and 1", strings.Count(out, "\n"), strings.Count(out, `"error":`), strings.Count(good, "\n"))
	}
}

// TestDecodeSnapLen: frames cut by the snap length are printed and marked,
// stderr counts them and names the first with file, frame and byte offset, and
// the exit code stays 0: their headers were decoded, and a snap length is a
// deliberate choice (ibcap -s 128).
func TestDecodeSnapLen(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_snaplen.pcap")
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]struct {
		Frames int   `json:"frames"`
		Cut    []int `json:"cut"`
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	e := expect["rocev2_snaplen.pcap"]
	if len(e.Cut) == 0 {
		t.Fatal("expect.json lists no cut frames in rocev2_snaplen.pcap")
	}
	out, stderr, code := run(t, "decode", path)
	want := fmt.Sprintf("%s: %d frames cut by the snap length, CRCs not checked; the first is frame %d (record at byte offset ", path, len(e.Cut), e.Cut[0])
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 0 and %q", code, stderr, want)
	}
	if lines := strings.Count(out, "\n"); lines != e.Frames || strings.Count(out, "CRCs not checked") != len(e.Cut) {
		t.Errorf("%d lines, %d marked cut; want %d and %d:\n%s", lines, strings.Count(out, "CRCs not checked"), e.Frames, len(e.Cut), out)
	}
}

// TestDecodeSnapLenInsideHeaders: a snap length too short for the BTH leaves
// frames whose headers could not be decoded, and that is a failure (exit 1).
func TestDecodeSnapLenInsideHeaders(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite each record of the little-endian microsecond pcap to keep its
	// first 48 bytes: Ethernet, IPv4 and UDP whole, the BTH cut.
	const keep = 48
	cut := append([]byte(nil), src[:24]...)
	for off := 24; off+16 <= len(src); {
		incl := int(binary.LittleEndian.Uint32(src[off+8:]))
		n := min(incl, keep)
		rec := append([]byte(nil), src[off:off+16]...)
		binary.LittleEndian.PutUint32(rec[8:], uint32(n))
		cut = append(append(cut, rec...), src[off+16:off+16+n]...)
		off += 16 + incl
	}
	path := filepath.Join(t.TempDir(), "cut48.pcap")
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "decode", path)
	if code != 1 || !strings.Contains(stderr, "cut inside the IB headers (no whole BTH)") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the frames cut inside their headers named", code, stderr)
	}
}

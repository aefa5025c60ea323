package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelect: one selection language in the commands that read packets:
// decode, an analysis (flows, ipd with -c), export; a bad expression is
// refused naming the column, with a caret under it (issue 24 item 1).
func TestSelect(t *testing.T) {
	const p = "../../testdata/pcaps/rocev2_ipv4.pcap"
	out := runOK(t, "decode", "-Y", "qp == 0x100 || pcp == 3", p)
	if n := strings.Count(out, "\n"); n != 9 {
		t.Errorf("decode -Y: %d frames, want 9 (1 of QP 0x100, 8 of PCP 3)\n%s", n, out)
	}
	out = runOK(t, "decode", "--select", "src == 192.168.7.1 and psn > 16777205", "-c", "2", p)
	if n := strings.Count(out, "\n"); n != 2 || strings.Contains(out, "192.168.7.2 ->") {
		t.Errorf("decode --select -c 2:\n%s", out)
	}
	var fl struct {
		Flows []struct {
			Packets int `json:"packets"`
		} `json:"flows"`
		Input struct {
			Packets     int `json:"packets"`
			NotSelected int `json:"not_selected"`
		} `json:"input"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "flows", "--json", "-Y", "dscp == 27", p)), &fl); err != nil {
		t.Fatal(err)
	}
	all := strings.Count(runOK(t, "decode", "-Y", "dscp == 27", p), "\n")
	if fl.Input.Packets != all || fl.Input.NotSelected == 0 || fl.Input.Packets+fl.Input.NotSelected != 76 {
		t.Errorf("flows -Y 'dscp == 27': %d packets, %d not selected; decode selects %d of 76", fl.Input.Packets, fl.Input.NotSelected, all)
	}
	if err := json.Unmarshal([]byte(runOK(t, "ipd", "--json", "-c", "10", "--by", "link", "--opcodes", "all", p)), &fl); err != nil || fl.Input.Packets != 10 {
		t.Errorf("ipd -c 10: %d packets (%v)", fl.Input.Packets, err)
	}
	dir := t.TempDir()
	runOK(t, "export", p, "-Y", "pcp == 3", "-o", filepath.Join(dir, "p.jsonl"))
	runOK(t, "export", p, "--from", "+10us", "--to", "+20us", "-o", filepath.Join(dir, "t.csv"))
	_, stderr, code := run(t, "flows", "-Y", `qp == 0x11 && opcode == "RC_SEND_ONYL"`, p)
	if code == 0 || !strings.Contains(stderr, "--select: column 25:") || !strings.Contains(stderr, "\n"+strings.Repeat(" ", 24)+"^") {
		t.Errorf("a misspelt opcode: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{{"pfc", "-Y", "pcp == 9x"}, {"hops", "--from", "yesterday"}, {"cm", "-Y", "nope"}, {"credits", "-c", "-1"}} {
		if _, stderr, code := run(t, append(args, p)...); code == 0 || !strings.Contains(stderr, "ibanalyze: -") {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

// TestSummaryHeadFilter: decode --summary applies a filter on what a
// frame's head holds, with the header fields it tests (Filter.Head), to
// the heads it decodes, with the counts the whole frames give: the same
// filter with a test that reads the RETH (true of every frame) takes the
// whole-frame path. The captures hold native IB, IPv6, VLAN tags, CM
// MADs and cut frames; headMix interleaves VLAN-tagged, IPv6, cut,
// undecodable and bad-ICRC frames with the common ones, so that a field a
// head left from the frame before would be counted.
func TestSummaryHeadFilter(t *testing.T) {
	exprs := []string{"bth", "transport == rocev2 || len > 100", "!reth && frame > 3", "ts_ns > 0 && cap_len < 100",
		"icrc_ok", "!icrc_ok", "psn >= 0", "psn > 100 && psn < 200", "qp == 0x11 || qp != 0x11", "qp in {0x100, 0x12}",
		`opcode == "RC_SEND_ONLY" || psn >= 0`, `opcode_name == "RC_ACKNOWLEDGE"`, "opcode < 6 && ack_req",
		"fecn || becn || solicited", "pkey == 0xffff && pad > 0", "src == 192.168.7.1 || udp",
		"src == 192.168.7.0/24 && dst != 192.168.7.1", "dscp == 26 || ecn == 3", "ttl < 64 || udp_src_port >= 49152",
		"pcp == 3", "vlan == 0 || !(vlan_dei)", "vlan_id != 7", "eth_src == 02:00:00:00:00:01 || eth_dst != 02:00:00:00:00:02",
		"vlan2_id > 0", "ipv6 && psn > 0", "src == fe80::1 || dst == fe80::2", "lrh && qp > 0"}
	mix := headMix(t)
	for _, p := range []string{mix, "../../testdata/pcaps/rocev2_ipv4.pcap", "../../testdata/pcaps/rocev2_ipv6.pcap",
		"../../testdata/pcaps/rocev2_snaplen.pcap", "../../testdata/pcaps/ib_native_erf.pcap",
		"../../testdata/pcaps/mixed.pcapng", "../../testdata/pcaps/rocev2_cm.pcap"} {
		for _, expr := range exprs {
			jobs := []string{"1"}
			if p == mix {
				jobs = append(jobs, "2")
			}
			for _, j := range jobs {
				head, _, _ := run(t, "decode", "--summary", "-j", j, "-Y", expr, p)
				whole, _, _ := run(t, "decode", "--summary", "-j", j, "-Y", "("+expr+") && !(reth_va == 1 && reth_va == 2)", p)
				if head != whole || head == "" {
					t.Errorf("%s -j %s -Y '%s': heads\n%s\nwhole frames\n%s", filepath.Base(p), j, expr, head, whole)
				}
			}
		}
	}
}

// headMix writes a capture of rocev2_ipv4.pcap's and rocev2_ipv6.pcap's
// frames in turn, some VLAN-tagged, some cut, undecodable or with a bad
// ICRC, and returns its path.
func headMix(t *testing.T) string {
	t.Helper()
	var recs [][]byte
	for _, name := range []string{"rocev2_ipv4.pcap", "rocev2_ipv6.pcap"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		offs, _ := pcapRecords(t, src)
		for _, off := range offs {
			recs = append(recs, src[off+16:off+16+int(binary.LittleEndian.Uint32(src[off+8:]))])
		}
	}
	file := nsPcapHeader()
	for i := range 3000 {
		data := append([]byte(nil), recs[(i*7)%len(recs)]...)
		if i%5 == 1 && len(data) > 14 && binary.BigEndian.Uint16(data[12:]) != 0x8100 { // a VLAN tag: PCP 5, VLAN 7
			data = append(append(append([]byte(nil), data[:12]...), 0x81, 0x00, 0xA0, 0x07), data[12:]...)
		}
		capLen, wireLen, spoilt := spoilRecord(i, data)
		if !spoilt && i%43 == 2 && len(data) > 42 { // the BTH's opcode made one no header follows
			data[42] = 0xFF
		}
		file = appendNsRecord(file, i, data, capLen, wireLen)
	}
	p := filepath.Join(t.TempDir(), "headmix.pcap")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

package main

import (
	"encoding/json"
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
// frame's head holds to the heads it decodes (Filter.HeadOnly), with the
// counts the whole frames give: the same filter with a test that reads
// the BTH (true of every frame) takes the whole-frame path.
func TestSummaryHeadFilter(t *testing.T) {
	for _, name := range []string{"rocev2_ipv4.pcap", "rocev2_snaplen.pcap", "ib_native_erf.pcap", "mixed.pcapng", "rocev2_cm.pcap"} {
		p := "../../testdata/pcaps/" + name
		for _, expr := range []string{"bth", "transport == rocev2 || len > 100", "!reth && frame > 3", "ts_ns > 0 && cap_len < 100"} {
			for _, j := range []string{"1", "2"} {
				head, _, _ := run(t, "decode", "--summary", "-j", j, "-Y", expr, p)
				whole, _, _ := run(t, "decode", "--summary", "-j", j, "-Y", "("+expr+") && !(qp > 0xffffff)", p)
				if head != whole || head == "" {
					t.Errorf("%s -j %s -Y '%s': heads\n%s\nwhole frames\n%s", name, j, expr, head, whole)
				}
			}
		}
	}
}

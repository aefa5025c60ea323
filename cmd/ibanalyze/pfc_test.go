package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// pfcCapture: host 9 pauses priority 3 for 1000 quanta, refreshes it and
// ends it with an XON 6 us in; host 1 sends to host 9 on priority 3 (DSCP
// 26) once while paused and once after; host 10 sends an 802.3x PAUSE.
func pfcCapture(t *testing.T) string {
	t0 := testcap.BaseNs
	write := testcap.Packet{Src: 1, Dst: 9, QP: 0x11, Op: 0x0A, Payload: 64, DMALen: 64}
	return testcap.WriteFrames(t, "pfc.pcap", []testcap.Frame{
		{TsNs: t0, B: testcap.PFCFrame(t, 9, map[int]uint16{3: 1000})},
		{TsNs: t0 + 1000, B: testcap.RoCEAt(t, write, 26, -1)},
		{TsNs: t0 + 3000, B: testcap.PFCFrame(t, 9, map[int]uint16{3: 1000})},
		{TsNs: t0 + 6000, B: testcap.PFCFrame(t, 9, map[int]uint16{3: 0})},
		{TsNs: t0 + 7000, B: testcap.RoCEAt(t, write, 26, -1)},
		{TsNs: t0 + 8000, B: testcap.MACControlFrame(t, 10, &decode.Pause{Opcode: decode.MACControlOpPause, Quanta: 100})},
		{TsNs: t0 + 20_000, B: testcap.RoCEAt(t, write, 26, -1)},
	})
}

func TestPFCCommand(t *testing.T) {
	path := pfcCapture(t)
	out, stderr, code := run(t, "pfc", "--rate", "100G", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r analyze.PFCReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != 2 || r.Links[0].Link != "02:00:00:00:00:09" || r.Links[0].Priorities[0].PausedNs != 6000 || r.Links[1].Priorities[7].PausedNs != 512 {
		t.Errorf("links %+v", r.Links)
	}
	if len(r.Priorities) != 1 || r.Priorities[0].Priority != 3 || r.Priorities[0].Flows[0].PausedPackets != 1 || r.Priorities[0].Flows[0].Packets != 3 {
		t.Errorf("flows %+v", r.Priorities)
	}
	for _, key := range []string{`"paused_ns": 6000`, `"storm_paused_ns"`, `"rate_gbps": 100`, `"unpaused_bytes"`, `"intervals": [`, `"input": {`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if strings.Contains(out, `"rate_assumed"`) {
		t.Error("rate given but reported assumed")
	}

	// Text: a row per link direction and priority; without --rate a warning.
	out, stderr, code = run(t, "pfc", path)
	if code != 0 || !strings.Contains(stderr, "no --rate, and the capture records no link speed: pause quanta counted at 100 Gb/s") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"1 PAUSE", "assumed", "02:00:00:00:00:09     3       3       1    1     6us  30.00%", "rocev2 192.168.7.1>192.168.7.9 qp 0x000011  02:00:00:00:00:09"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// No pause frames: said; the --rate warning came before the reading,
	// which cannot know there will be none (issue 24: before the table).
	write := testcap.Packet{Src: 1, Dst: 9, QP: 0x11, Op: 0x0A, Payload: 64, DMALen: 64}
	noPause := testcap.WriteFrames(t, "nopause.pcap", []testcap.Frame{{TsNs: testcap.BaseNs, B: testcap.RoCEAt(t, write, 26, -1)}})
	_, stderr, code = run(t, "pfc", noPause)
	if code != 0 || !strings.Contains(stderr, "no PFC or PAUSE frames") || !strings.HasPrefix(stderr, "ibanalyze: no --rate") {
		t.Errorf("no pause frames: exit %d, %q", code, stderr)
	}
	// Standard input, and the DSCP map moving the flow to priority 5.
	out, stderr, code = runStdin(t, path, "pfc", "--rate", "HDR", "--dscp-map", "26=5", "--json", "-")
	if code != 0 || !strings.Contains(out, `"rate_gbps": 200`) || !strings.Contains(out, `"priority": 5`) {
		t.Errorf("stdin, HDR 4x, DSCP 26 -> 5: exit %d %s\n%s", code, stderr, out)
	}
}

func TestPFCCommandRefuses(t *testing.T) {
	path := pfcCapture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "fast"}, `unknown link rate "fast"`},
		{[]string{"--rate", "0"}, `--rate: link rate "0": want a data rate`},
		{[]string{"--storm", "0"}, "--storm 0ns: want a positive duration"},
		{[]string{"--dscp-map", "64=1"}, `--dscp-map entry 1 "64=1"`},
		{[]string{"--dscp-map", "26=3,26=4"}, `--dscp-map entry 2 "26=4": DSCP 26 is mapped already by entry 1; give each DSCP once`},
		{[]string{"--max-pauses", "0"}, "--max-pauses 0"},
		{[]string{"--max-flows", "0"}, "--max-flows 0: want 1 to"},
	} {
		_, stderr, code := run(t, append(append([]string{"pfc"}, c.args...), path)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, stderr, c.want)
		}
	}
	_, stderr, code := run(t, "pfc", path, "/nonexistent/x.pcap")
	if code == 0 || !strings.Contains(stderr, "/nonexistent/x.pcap") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// writeStream is an RDMA WRITE message of n 1024-byte packets on one QP from
// 192.168.7.1 to 192.168.7.2, PSNs from 0, packet i gap(i) ns after i-1.
func writeStream(n int, qp uint32, t0 int64, gap func(i int) int64) []testcap.Packet {
	return testcap.Stream(n, 1, 2, qp, 0, 1024, t0, gap)
}

// studyPackets: 2 us spacing, a few 4 us, one 320 us outlier.
func studyPackets() []testcap.Packet {
	return writeStream(500, 0x12, testcap.BaseNs, func(i int) int64 {
		switch {
		case i == 250:
			return 320_000
		case i%50 == 0:
			return 4000
		}
		return 2000
	})
}

func TestIPDText(t *testing.T) {
	path := testcap.Write(t, "study.pcap", false, studyPackets())
	out := runOK(t, "ipd", "--bin", "1us", "--bins", "10", "--rate", "8", path)
	wantInOutput(t, out,
		"timestamp resolution 1us",
		"flow rocev2 192.168.7.1>192.168.7.2 qp 0x000012: 500 packets",
		"  interval     occurrence  percent\n",
		"  [2us, 3us)          490   98.20%  ##################################################\n",
		"  [4us, 5us)            8    1.60%  #\n",
		"  >= 10us               1    0.20%  #\n",
		"  [5us, 10us)           0    0.00%\n",
		"p50 2us",
		"expected 1.106us for 1106-byte packets back to back; observed median / expected = 1.81",
	)
}

func TestIPDJSONAndPlot(t *testing.T) {
	path := testcap.Write(t, "study.pcap", false, studyPackets())
	png := filepath.Join(t.TempDir(), "ipd.png")
	out := runOK(t, "ipd", "--json", "--edges", "0,1us,2us,4us,8us", "--phases", "--rate", "sdr", "--plot", png, "--log", path)
	var r struct {
		Flows []struct {
			Key     map[string]any `json:"key"`
			Packets int            `json:"packets"`
			IPD     struct {
				Count, Min, P50, P90, P99, P999, Max int64
			} `json:"ipd_ns"`
			Histogram struct {
				Mode string `json:"mode"`
				Bins []struct {
					LoNs  int64 `json:"lo_ns"`
					HiNs  int64 `json:"hi_ns"`
					Count int   `json:"count"`
				} `json:"bins"`
				Above int `json:"above"`
			} `json:"histogram"`
			ExpectedIPDNs int64 `json:"expected_ipd_ns"`
			Phases        []struct {
				Packets int `json:"packets"`
			} `json:"phases"`
		} `json:"flows"`
		ResolutionNs int64 `json:"resolution_ns"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f := r.Flows[0]
	if r.ResolutionNs != 1000 || f.Packets != 500 || f.IPD.Count != 499 || f.IPD.P50 != 2000 || f.IPD.Max != 320_000 || f.IPD.P99 != 4000 {
		t.Errorf("figures: res %d, %+v", r.ResolutionNs, f)
	}
	if f.Key["dest_qp"] != float64(0x12) || f.Key["src"] != "192.168.7.1" || f.Key["transport"] != "rocev2" {
		t.Errorf("key %v", f.Key)
	}
	h := f.Histogram
	if h.Mode != "edges" || len(h.Bins) != 4 || h.Bins[2].Count != 490 || h.Bins[3].Count != 8 || h.Above != 1 || h.Bins[3].HiNs != 8000 {
		t.Errorf("histogram %+v", h)
	}
	// 1082-byte frames + FCS, preamble and gap: 1106 bytes at SDR 4x (8 Gb/s of data).
	if f.ExpectedIPDNs != 1106 || len(f.Phases) != 1 {
		t.Errorf("expected %d, phases %+v", f.ExpectedIPDNs, f.Phases)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("plot: %v, %d bytes", err, len(b))
	}
}

func TestIPDResolutionRule(t *testing.T) {
	pkts := writeStream(100, 5, testcap.BaseNs, func(int) int64 { return 2074 })
	path := testcap.WriteMicro(t, "micro.pcap", pkts)
	_, errOut, code := run(t, "ipd", "--bin", "250ns", path)
	if code == 0 || !strings.Contains(errOut, "bin width 250ns is finer than the capture's timestamp resolution 1us: a bin must be at least one tick of the capture's clock wide: use --bin 1us or more") {
		t.Errorf("250 ns bins on a microsecond capture: exit %d, %s", code, errOut)
	}
	_, errOut, code = run(t, "ipd", "--edges", "0,500ns,2us", path)
	if code == 0 || !strings.Contains(errOut, "bin [0ns, 500ns) is 500ns wide, finer than the capture's timestamp resolution 1us: a bin must be at least one tick of the capture's clock wide: give --edges at least 1us apart") {
		t.Errorf("500 ns edges on a microsecond capture: exit %d, %s", code, errOut)
	}
	out, _, code := run(t, "ipd", path)
	if code != 0 || !strings.Contains(out, "timestamp resolution 1us") || !strings.Contains(out, "[2us, 3us)") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestIPDPhases(t *testing.T) {
	pkts := writeStream(1000, 5, testcap.BaseNs, func(i int) int64 {
		if i >= 600 {
			return 4000
		}
		return 2000
	})
	out := runOK(t, "ipd", "--phases", testcap.Write(t, "phases.pcap", false, pkts))
	wantInOutput(t, out, "1: +0ns .. +1.198ms  600 packets  median IPD 2us", "2: +1.202ms .. +2.798ms  400 packets  median IPD 4us")
}

func TestIPDCompare(t *testing.T) {
	sent := writeStream(400, 9, testcap.BaseNs+3, func(int) int64 { return 10_000 })
	var recv []testcap.Packet
	for i, p := range sent {
		if i == 100 || i == 200 {
			continue
		}
		p.TsNs += 2500
		recv = append(recv, p)
	}
	a, b := testcap.Write(t, "a.pcap", false, sent), testcap.Write(t, "b.pcap", false, recv)
	out := runOK(t, "ipd", "--compare", "--json", a, b)
	var r struct {
		Matched uint64              `json:"matched"`
		OnlyA   uint64              `json:"only_a"`
		OnlyB   uint64              `json:"only_b"`
		OneWay  struct{ P50 int64 } `json:"one_way_delay_ns"`
		Flows   []struct {
			KS float64 `json:"ks_distance"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Matched != 398 || r.OnlyA != 2 || r.OnlyB != 0 || r.OneWay.P50 != 2500 || len(r.Flows) != 1 || r.Flows[0].KS <= 0 {
		t.Errorf("compare: %+v", r)
	}
	out, _, code := run(t, "ipd", "--compare", a, b)
	if code != 0 || !strings.Contains(out, "398 matched, 2 only in A, 0 only in B") || !strings.Contains(out, "one-way delay B-A: min 2.5us") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// The side-by-side table: counts end under their header, A's and B's
	// bars are apart by a | in one column.
	lines := tableLines(t, out, "  interval")
	endA, endB, bar := strings.Index(lines[0], " A ")+2, strings.LastIndex(lines[0], " B")+2, strings.Index(lines[0], "|")
	for _, l := range lines[1:] {
		if strings.Index(l, "|") != bar || bar < 0 || l[endA-1] == ' ' || l[endA] != ' ' || l[endB-1] == ' ' || l[endB] != ' ' {
			t.Errorf("| not at %d:\n%s", bar, strings.Join(lines, "\n"))
			break
		}
	}
	if _, errOut, code := run(t, "ipd", "--compare", a); code == 0 || !strings.Contains(errOut, "two captures") {
		t.Errorf("one file: exit %d %s", code, errOut)
	}
}

func TestIPDBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)
	one := testcap.Write(t, "one.pcap", false, writeStream(1, 5, testcap.BaseNs, nil))
	good := testcap.Write(t, "good.pcap", false, writeStream(50, 5, testcap.BaseNs, func(int) int64 { return 1000 }))
	none := testcap.Write(t, "none.pcap", false, nil) // a valid capture of no frames
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ipd", empty}, "empty"},
		{[]string{"ipd", one}, "no inter-packet delay"},
		{[]string{"ipd", "--edges", "0,2us,1us", good}, "bin edges must increase"},
		{[]string{"ipd", "--edges", "5us", good}, "at least two edges"},
		{[]string{"ipd", "--bin", "fast", good}, "--bin"},
		{[]string{"ipd", "--by", "host", good}, "--by"},
		{[]string{"ipd", "--rate", "GDR", good}, "unknown link rate"},
		{[]string{"ipd", "--rate", "EDR", "--width", "3x", good}, "unknown link width"},
		{[]string{"ipd", "--opcodes", "RC_WRITE_SOMETHING", good}, "opcode"},
		{[]string{"ipd", "--plot", "x.gif", good}, ".png, .svg or .pdf"},
		{[]string{"ipd", "--compare", good, none}, "no IB or RoCE transport packets in " + none},
	} {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestIPDNoRoCE(t *testing.T) {
	// A capture with Ethernet frames that are neither IB nor RoCE.
	path := filepath.Join(t.TempDir(), "udp.pcap")
	pkts := writeStream(3, 5, testcap.BaseNs, func(int) int64 { return 1000 })
	src := testcap.Write(t, "tmp.pcap", false, pkts)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite each frame's UDP destination port away from 4791 (the
	// record layout is fixed: 24-byte file header, 16-byte record headers).
	for off := 24; off+16 <= len(b); {
		n := int(b[off+8]) | int(b[off+9])<<8
		b[off+16+14+20+2], b[off+16+14+20+3] = 0x30, 0x39
		off += 16 + n
	}
	os.WriteFile(path, b, 0o644)
	_, errOut, code := run(t, "ipd", path)
	if code == 0 || !strings.Contains(errOut, "no IB or RoCE transport packets") || !strings.Contains(errOut, "3 neither IB nor RoCE") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestIPDRealCaptures(t *testing.T) {
	for _, name := range []string{"oferby-proxy_roce.pcap", "softroce-demo_infiniband.pcap"} {
		out, errOut, code := run(t, "ipd", "--json", sharedPcap(t, name))
		if code != 0 || !json.Valid([]byte(out)) {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
		}
	}
	// One CNP: no two packets, so no IPD; said plainly.
	_, errOut, code := run(t, "ipd", "--opcodes", "all", sharedPcap(t, "cx4lx_cnp.pcap"))
	if code == 0 || !strings.Contains(errOut, "1 IB/RoCE packet (") {
		t.Errorf("cnp: exit %d: %s", code, errOut)
	}
}

// Out-of-order stamps are reported with where the first one is; a file
// cut short still gives its results, a warning naming the byte offset, and
// a non-zero exit.
func TestIPDDisorderAndDamage(t *testing.T) {
	pkts := writeStream(40, 5, testcap.BaseNs, func(int) int64 { return 1000 })
	pkts[20].TsNs, pkts[21].TsNs = pkts[21].TsNs, pkts[20].TsNs
	path := testcap.Write(t, "ooo.pcap", false, pkts)
	out, errOut, code := run(t, "ipd", path)
	if code != 0 || !strings.Contains(errOut, "1 frame is stamped earlier than the frame before it (first: "+path+": frame 22 (byte offset") ||
		!strings.Contains(out, "min 1us") {
		t.Errorf("exit %d\n%s\n%s", code, errOut, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	os.WriteFile(cut, b[:len(b)-100], 0o644)
	out, errOut, code = run(t, "ipd", cut)
	if code == 0 || !strings.Contains(errOut, "frame 40 (byte offset") || !strings.Contains(out, "39 packets") {
		t.Errorf("cut short: exit %d\n%s\n%s", code, errOut, out)
	}
}

// A capture of atomics alone has no data packet to count: ipd says what it
// found and which flag counts it, and that flag does.
func TestIPDAtomicsOnly(t *testing.T) {
	var pkts []testcap.Packet
	for i := range 6 {
		ts := testcap.BaseNs + int64(i)*10_000
		op := decode.Opcode(0x14) // RC_FETCH_ADD
		if i%2 == 1 {
			op = 0x13 // RC_COMPARE_SWAP
		}
		pkts = append(pkts,
			testcap.Packet{TsNs: ts, Src: 1, Dst: 2, QP: 0x11, PSN: uint32(i), Op: op},
			testcap.Packet{TsNs: ts + 3000, Src: 2, Dst: 1, QP: 0x22, PSN: uint32(i), Op: 0x12})
	}
	path := testcap.Write(t, "atomics.pcap", false, pkts)
	_, errOut, code := run(t, "ipd", path)
	want := path + ": 12 IB/RoCE packets, all atomics and their ACKs: 6 atomics (RC_COMPARE_SWAP, RC_FETCH_ADD) and 6 ACKs (RC_ATOMIC_ACKNOWLEDGE); " +
		"ipd counts data packets (SEND, RDMA WRITE, RDMA READ response) off the management QPs 0 and 1 by default: use --opcodes all to count them"
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
	out := runOK(t, "ipd", "--opcodes", "all", path)
	wantInOutput(t, out, "12 counted (all)", "flow rocev2 192.168.7.1>192.168.7.2 qp 0x000011: 6 packets", "p50 10us")

	// Data packets, but never two in one flow.
	one := testcap.Write(t, "single.pcap", false, []testcap.Packet{
		{TsNs: testcap.BaseNs, Src: 1, Dst: 2, QP: 2, Op: 0x0a, Payload: 64},
		{TsNs: testcap.BaseNs + 1000, Src: 1, Dst: 2, QP: 3, Op: 0x0a, Payload: 64}})
	_, errOut, _ = run(t, "ipd", one)
	wantInOutput(t, errOut, "2 IB/RoCE packets (2 data packets (RC_RDMA_WRITE_ONLY)), 2 counted, but no flow has two of them: no inter-packet delay. --opcodes all counts every opcode; --by link groups every packet to one destination")
}

// Past --max-flows, later flows' packets are counted together as "other",
// with a warning, in the text and the JSON.
func TestIPDMaxFlows(t *testing.T) {
	var pkts []testcap.Packet
	for qp := range uint32(3) {
		pkts = append(pkts, writeStream(20, 0x10+qp, testcap.BaseNs+int64(qp)*100, func(int) int64 { return 1000 })...)
	}
	slices.SortStableFunc(pkts, func(x, y testcap.Packet) int { return cmp.Compare(x.TsNs, y.TsNs) })
	path := testcap.Write(t, "three.pcap", false, pkts)
	out, errOut, code := run(t, "ipd", "--max-flows", "2", "--top", "0", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantInOutput(t, errOut, `more than 2 flows: the packets of those after the first 2 (20 packets) are counted together as "other", without IPDs; --max-flows raises the bound`)
	wantInOutput(t, out, "3 flows", "flow rocev2 192.168.7.1>192.168.7.2 qp 0x000011: 20 packets", "other: 20 packets of the flows after the first 2 (--max-flows): no IPD")
	var doc maxFlowsJSON
	if err := json.Unmarshal([]byte(runOK(t, "ipd", "--json", "--max-flows", "2", path)), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Flows) != 3 || doc.Flows[2].Key["transport"] != "other" || doc.Flows[2].Packets != 20 || doc.MaxFlows != 2 || doc.OtherPackets != 20 {
		t.Errorf("JSON: %+v", doc)
	}
	// Two sides: the other flow counts packets and matches.
	out, errOut, code = run(t, "ipd", "--compare", "--max-flows", "2", path, path)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	wantInOutput(t, errOut, `more than 2 flows on a side: the packets of those after the first 2 are counted together as "other"`)
	wantInOutput(t, out, "other (flows after the first 2, --max-flows): A 20 packets, B 20 packets, 20 matched, 0 only in A, 0 only in B; no IPD")
	_, errOut, code = run(t, "ipd", "--max-flows", "0", path)
	if code == 0 || !strings.Contains(errOut, "--max-flows 0: want 1 to 10000000") {
		t.Errorf("--max-flows 0: exit %d, %s", code, errOut)
	}
}

// --plot draws at most 50 flows, whatever --top says: ipd's histograms
// and flows' throughput alike.
func TestIPDPlotBounded(t *testing.T) {
	var pkts []testcap.Packet
	for qp := range uint32(60) {
		pkts = append(pkts, writeStream(3, 0x100+qp, testcap.BaseNs+int64(qp)*10, func(int) int64 { return 1000 })...)
	}
	slices.SortStableFunc(pkts, func(x, y testcap.Packet) int { return cmp.Compare(x.TsNs, y.TsNs) })
	path := testcap.Write(t, "sixty.pcap", false, pkts)
	svg := filepath.Join(t.TempDir(), "ipd.svg")
	_, errOut, code := run(t, "ipd", "--top", "0", "--plot", svg, path)
	if code != 0 || !strings.Contains(errOut, "--plot draws the 50 busiest of 60 flows (--top): more would be unreadable") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(svg); err != nil || strings.Contains(string(b), "qp 0x000132") || !strings.Contains(string(b), "qp 0x000131") {
		t.Errorf("plot: %v; the 51st flow drawn, or the 50th not", err)
	}
	_, errOut, code = run(t, "flows", "--top", "0", "--plot", svg, path)
	if code != 0 || !strings.Contains(errOut, "--plot draws the 50 busiest of 60 flows (--top): more would be unreadable") {
		t.Errorf("flows: exit %d, stderr %q", code, errOut)
	}
}

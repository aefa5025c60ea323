package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// healthPackets: an RDMA WRITE flow (QP 0x11) of 60 PSNs, PSN 7 lost, PSN
// 20 sent twice, 40 after 41, AckReq every 10th packet answered 3 us later
// on QP 0x22, one PSN sequence NAK, one RNR NAK (timer 1: 10 us), one
// remote operational error, 2 CNPs and 4 ECN-CE marks.
func healthPackets() []testcap.Packet {
	var pkts []testcap.Packet
	ts := testcap.BaseNs
	emit := func(p testcap.Packet, gap int64) {
		ts += gap
		p.TsNs = ts
		pkts = append(pkts, p)
	}
	req := func(psn uint32) testcap.Packet {
		p := testcap.Packet{Src: 1, Dst: 2, QP: 0x11, PSN: psn, Op: 0x0A, Payload: 512, DMALen: 512, AckReq: psn%10 == 9}
		if psn >= 30 && psn < 34 {
			p.ECN = 3
		}
		return p
	}
	for psn := uint32(0); psn < 60; psn++ {
		switch psn {
		case 7:
			continue
		case 40:
			emit(req(41), 1000)
			emit(req(40), 1000)
			continue
		case 41:
			continue
		case 21:
			emit(req(20), 1000)
		}
		emit(req(psn), 1000)
		if psn%10 == 9 {
			emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, PSN: psn, Op: 0x11}, 3000)
		}
	}
	emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, PSN: 60, Op: 0x11, Syndrome: 0x60}, 1000)
	emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, PSN: 60, Op: 0x11, Syndrome: 0x21}, 1000)
	emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, PSN: 60, Op: 0x11, Syndrome: 0x63}, 1000)
	emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, Op: decode.OpcodeCNP}, 1000)
	emit(testcap.Packet{Src: 2, Dst: 1, QP: 0x22, Op: decode.OpcodeCNP}, 1000)
	return pkts
}

func TestFlowsJSON(t *testing.T) {
	path := testcap.Write(t, "health.pcap", false, healthPackets())
	svg := filepath.Join(t.TempDir(), "thr.svg")
	out := runOK(t, "flows", "--json", "--plot", svg, path)
	var r struct {
		Flows []struct {
			Key      map[string]any              `json:"key"`
			Packets  int                         `json:"packets"`
			Messages struct{ Total, Resent int } `json:"messages"`
			PSN      struct {
				Gaps       int `json:"gaps"`
				Missing    int `json:"missing"`
				OutOfOrder int `json:"out_of_order"`
				Duplicates int `json:"duplicates"`
				Lost       int `json:"lost"`
			} `json:"psn"`
			Acks int `json:"acks"`
			NAKs []struct {
				Name  string `json:"name"`
				Count int    `json:"count"`
			} `json:"naks"`
			RNR []struct {
				DelayNs int64 `json:"delay_ns"`
				Count   int   `json:"count"`
			} `json:"rnr_naks"`
			CNPs       int `json:"cnps"`
			ECNCE      int `json:"ecn_ce"`
			ICRCBad    int `json:"icrc_bad"`
			AckLatency *struct {
				Count int   `json:"count"`
				P50   int64 `json:"p50"`
				Max   int64 `json:"max"`
			} `json:"ack_latency_ns"`
			Throughput []float64 `json:"throughput_gbps"`
		} `json:"flows"`
		ThroughputBinNs int64 `json:"throughput_bin_ns"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(r.Flows) != 2 {
		t.Fatalf("%d flows", len(r.Flows))
	}
	w, a := r.Flows[0], r.Flows[1]
	// 59 distinct PSNs (7 lost), 20 sent twice: 59 messages, one resent.
	if w.Packets != 60 || w.Messages.Total != 59 || w.Messages.Resent != 1 || w.ECNCE != 4 || w.ICRCBad != 0 {
		t.Errorf("write flow: %+v", w)
	}
	if p := w.PSN; p.Gaps != 2 || p.Missing != 2 || p.OutOfOrder != 1 || p.Duplicates != 1 || p.Lost != 1 {
		t.Errorf("PSN %+v", p)
	}
	if w.AckLatency == nil || w.AckLatency.Count != 6 || w.AckLatency.P50 != 3000 || w.AckLatency.Max != 3000 {
		t.Errorf("ACK latency %+v", w.AckLatency)
	}
	if a.Acks != 6 || a.CNPs != 2 || len(a.NAKs) != 2 || a.NAKs[0].Name != "PSN_SEQUENCE_ERROR" || a.NAKs[1].Name != "REMOTE_OPERATIONAL_ERROR" ||
		len(a.RNR) != 1 || a.RNR[0].DelayNs != 10_000 {
		t.Errorf("ack flow: %+v", a)
	}
	if r.ThroughputBinNs != 1000 || len(w.Throughput) == 0 {
		t.Errorf("throughput: %d ns bins, %d of them", r.ThroughputBinNs, len(w.Throughput))
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot: %v", err)
	}
}

func TestFlowsText(t *testing.T) {
	out := runOK(t, "flows", testcap.Write(t, "health.pcap", false, healthPackets()))
	wantInOutput(t, out,
		"2 flows",
		"request PSNs: 2 gaps skipping 2 PSNs, 1 later filled out of order, 1 lost; 1 duplicates (retransmissions)",
		"NAK PSN_SEQUENCE_ERROR: 1",
		"NAK REMOTE_OPERATIONAL_ERROR: 1",
		"RNR NAK timer 1 (10us): 1",
		"throughput per 2us from the capture's start (peak over 100 packets 3.89 Gb/s): ████▄ █████",
		"ACK latency (6 answered, ACKs on rocev2 192.168.7.2>192.168.7.1 qp 0x000022): min 3us p50 3us",
	)
}

// TestFlowsTextConnection: the text names a flow's CM connection, as the
// JSON's connection object does, in decode's words (the REQ's comm and
// sid), and the flow the other way; a flow without one has no such line.
func TestFlowsTextConnection(t *testing.T) {
	out := runOK(t, "flows", filepath.Join("..", "..", "testdata", "pcaps", "rocev2_cm.pcap"))
	wantInOutput(t, out,
		"\nrocev2 192.168.7.1>192.168.7.2 qp 0x000022\n  connection: REQ comm 0x1001 sid 0x1061c06 (ports 50000 -> 7174); sent by the active end, to the QP the REP named; the other way: rocev2 192.168.7.2>192.168.7.1 qp 0x000011\n",
		"\nrocev2 192.168.7.2>192.168.7.1 qp 0x000011\n  connection: REQ comm 0x1001 sid 0x1061c06 (ports 50000 -> 7174); sent by the passive end, to the QP the REQ named; the other way: rocev2 192.168.7.1>192.168.7.2 qp 0x000022\n",
	)
	if n := strings.Count(out, "  connection: "); n != 2 {
		t.Errorf("%d connection lines, want 2 (the UD and DC flows have none):\n%s", n, out)
	}
}

func TestFlowsRealCaptures(t *testing.T) {
	for _, name := range []string{"oferby-proxy_roce.pcap", "softroce-demo_infiniband.pcap", "cx4lx_cnp.pcap"} {
		out, errOut, code := run(t, "flows", "--json", sharedPcap(t, name))
		if code != 0 || !json.Valid([]byte(out)) {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
		}
	}
	// Real traffic that lost nothing: SEND/ACK over RoCEv2, CM and IPoIB
	// over native IB. No sequence may show a gap, a late or a duplicate PSN.
	for _, name := range []string{"oferby-proxy_roce.pcap", "softroce-demo_infiniband.pcap"} {
		var r struct {
			Flows []struct {
				Key         analyzeKey     `json:"key"`
				PSN         map[string]int `json:"psn"`
				ResponsePSN map[string]int `json:"response_psn"`
			} `json:"flows"`
		}
		if err := json.Unmarshal([]byte(runOK(t, "flows", "--json", sharedPcap(t, name))), &r); err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Flows {
			for _, st := range []map[string]int{f.PSN, f.ResponsePSN} {
				for k, v := range st {
					if v != 0 {
						t.Errorf("%s: flow to qp 0x%06x: %s %d", name, *f.Key.DestQP, k, v)
					}
				}
			}
		}
	}
	out, _, _ := run(t, "flows", "--json", sharedPcap(t, "cx4lx_cnp.pcap"))
	if !strings.Contains(out, `"cnps": 1`) {
		t.Errorf("the CNP is not counted:\n%s", out)
	}
	out, _, _ = run(t, "flows", "--json", sharedPcap(t, "softroce-demo_infiniband.pcap"))
	if !strings.Contains(out, `"icrc_bad": 0`) || strings.Contains(out, `"icrc_bad": 1`) {
		t.Errorf("softroce ICRCs should all be good")
	}
}

func TestFlowsBadInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.pcap")
	os.WriteFile(empty, nil, 0o644)
	if _, errOut, code := run(t, "flows", empty); code == 0 || !strings.Contains(errOut, "empty") {
		t.Errorf("empty: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "flows", "/nonexistent.pcap"); code == 0 || !strings.Contains(errOut, "/nonexistent.pcap") {
		t.Errorf("missing file: exit %d %s", code, errOut)
	}
	// Every size flag is range-checked before anything is allocated.
	for _, tc := range [][2]string{
		{"--window=1000000000", "--window 1000000000: want 1 to 1000000 packets"},
		{"--window=0", "--window 0: want 1 to"},
		{"--max-flows=0", "--max-flows 0: want 1 to"},
		{"--max-flows=100000000", "--max-flows 100000000: want 1 to"},
		{"--top=-1", "--top -1: want 0 (all) or more"},
	} {
		if _, errOut, code := run(t, "flows", tc[0], rpingPcap); code == 0 || !strings.Contains(errOut, tc[1]) {
			t.Errorf("%s: exit %d, stderr %q; want %q", tc[0], code, errOut, tc[1])
		}
	}
}

// maxFlowsJSON is what the --max-flows tests read of flows' and ipd's JSON.
type maxFlowsJSON struct {
	Flows []struct {
		Key     map[string]any `json:"key"`
		Packets int            `json:"packets"`
	} `json:"flows"`
	MaxFlows     int `json:"max_flows"`
	OtherPackets int `json:"other_packets"`
}

// Past --max-flows, later flows are counted together as "other", with a
// warning, in the table and in the JSON.
func TestFlowsMaxFlows(t *testing.T) {
	out, errOut, code := run(t, "flows", "--json", "--max-flows", "1", rpingPcap)
	if code != 0 || !strings.Contains(errOut, `more than 1 flow: the packets of those after the first 1 (31 packets) are counted together as "other"`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r maxFlowsJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Flows) != 2 || r.Flows[1].Key["transport"] != "other" || r.Flows[1].Packets != 31 || r.OtherPackets != 31 || r.MaxFlows != 1 {
		t.Errorf("flows %+v, other_packets %d", r.Flows, r.OtherPackets)
	}
	out, _, _ = run(t, "flows", "--max-flows", "1", rpingPcap)
	wantInOutput(t, out, "2 flows", "\nother ")
}

// rpingPcap is written by testdata/gen with known truth (expect.json): both
// sides send and read, READ responses interleaved with requests, losses and
// retransmissions in both PSN sequences of both QP directions.
const rpingPcap = "../../testdata/pcaps/rocev2_rping.pcap"

// flowPSNs is the part of a flow of `flows --json` that the truth names.
type flowPSNs struct {
	Packets     int            `json:"packets"`
	Acks        int            `json:"acks"`
	PSN         map[string]int `json:"psn"`
	ResponsePSN map[string]int `json:"response_psn"`
}

func TestFlowsJSONKnownTruth(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]struct {
		Flows []struct {
			Flow string `json:"flow"`
			flowPSNs
		} `json:"flows"`
	}
	if err := json.Unmarshal(b, &expect); err != nil {
		t.Fatal(err)
	}
	truth := expect[filepath.Base(rpingPcap)].Flows
	if len(truth) != 2 {
		t.Fatalf("expect.json: %d flows for %s", len(truth), rpingPcap)
	}
	var r struct {
		Flows []struct {
			Key analyzeKey `json:"key"`
			flowPSNs
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "flows", "--json", rpingPcap)), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]flowPSNs{}
	for _, f := range r.Flows {
		got[f.Key.String()] = f.flowPSNs
	}
	for _, w := range truth {
		g, ok := got[w.Flow]
		if !ok || !reflect.DeepEqual(g, w.flowPSNs) {
			t.Errorf("%s:\n got %+v\nwant %+v", w.Flow, g, w.flowPSNs)
		}
	}
	out := runOK(t, "flows", rpingPcap)
	wantInOutput(t, out,
		"request PSNs: 1 gaps skipping 1 PSNs, 1 later filled out of order, 0 lost; 2 duplicates (retransmissions)",
		"response PSNs: 1 gaps skipping 1 PSNs, 1 later filled out of order, 0 lost; 1 duplicates (retransmissions)",
		"request PSNs: 1 gaps skipping 1 PSNs, 0 later filled out of order, 1 lost; 1 duplicates (retransmissions)",
		"response PSNs: 0 gaps skipping 0 PSNs, 0 later filled out of order, 0 lost; 1 duplicates (retransmissions)")
}

// analyzeKey is a flow key of the JSON, named as the table names it.
type analyzeKey struct {
	Transport string  `json:"transport"`
	Src       string  `json:"src"`
	Dst       string  `json:"dst"`
	DestQP    *uint32 `json:"dest_qp"`
}

func (k analyzeKey) String() string {
	return fmt.Sprintf("%s %s>%s qp 0x%06x", k.Transport, k.Src, k.Dst, *k.DestQP)
}

// TestRetransmissionsAgree: correlate's cap_retransmissions and the
// duplicates flows counts come from one PSN tracker, so on a capture with
// late packets (filling gaps) and retransmissions in both sequences they
// are the same number, and late packets are not retransmissions.
func TestRetransmissionsAgree(t *testing.T) {
	var r struct {
		Flows []flowPSNs `json:"flows"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "flows", "--json", rpingPcap)), &r); err != nil {
		t.Fatal(err)
	}
	dups, late := 0, 0
	for _, f := range r.Flows {
		dups += f.PSN["duplicates"] + f.ResponsePSN["duplicates"]
		late += f.PSN["out_of_order"] + f.ResponsePSN["out_of_order"]
	}
	if dups != 5 || late != 2 {
		t.Fatalf("flows: %d duplicates, %d late; the capture holds 5 and 2", dups, late)
	}
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 12) // 220 µs from 10 µs before the capture
	out := filepath.Join(dir, "j.arrow")
	runOK(t, "correlate", rpingPcap, "--telemetry", tel, "--offset", "0", "-o", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var retx, packets uint64
	for i := range rd.NumRecords() {
		rec, err := rd.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		for name, sum := range map[string]*uint64{"cap_retransmissions": &retx, "cap_packets": &packets} {
			col := rec.Column(rec.Schema().FieldIndices(name)[0]).(*array.Uint64)
			for j := range col.Len() {
				*sum += col.Value(j)
			}
		}
	}
	if packets != 73 || retx != uint64(dups) {
		t.Errorf("correlate: %d packets, %d retransmissions; flows counts %d duplicates in 73 packets", packets, retx, dups)
	}
}

// The flows table's columns fit their widest value: long IPv6 flow names
// and large counts keep every row in line.
func TestFlowsTableAligned(t *testing.T) {
	for _, path := range []string{rpingPcap, "../../testdata/pcaps/rocev2_ipv6.pcap"} {
		out := runOK(t, "flows", "--top", "0", path)
		requireAligned(t, tableLines(t, out, "flow "), "packets", "frame bytes", "wire bytes", "lost", "dup", "ooo", "ack p99")
	}
}

// TestFlowsInterval: --interval 30us on a real rping capture of about
// 105 us reports the flows so far at +30, +60 and +90 us of packet time,
// each on more packets and marked with until_ns, then the totals exactly
// as without --interval; in text and in JSON.
func TestFlowsInterval(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_rping.pcap")
	want := runOK(t, "flows", "--json", path)
	out := runOK(t, "flows", "--json", "--interval", "30us", path)
	if !strings.HasSuffix(out, want) {
		t.Errorf("the last JSON object with --interval is not the report without it:\n%s", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	type flowsDoc struct {
		Flows   []struct{ Packets int } `json:"flows"`
		FirstNs int64                   `json:"first_ns"`
		UntilNs int64                   `json:"until_ns"`
	}
	var docs []flowsDoc
	for dec.More() {
		var d flowsDoc
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	if len(docs) != 4 {
		t.Fatalf("%d JSON objects, want 3 reports so far and the totals", len(docs))
	}
	prev := 0
	for i, d := range docs {
		packets := 0
		for _, f := range d.Flows {
			packets += f.Packets
		}
		wantUntil := int64(0)
		if i < 3 {
			wantUntil = d.FirstNs + int64(i+1)*30_000
		}
		if d.UntilNs != wantUntil || packets <= prev || i == 3 && packets != 73 {
			t.Errorf("object %d: until_ns %d (want %d), %d packets after %d", i, d.UntilNs, wantUntil, packets, prev)
		}
		prev = packets
	}

	want = runOK(t, "flows", path)
	out = runOK(t, "flows", "--interval", "30us", path)
	if n := strings.Count(out, "== so far: packets before +"); n != 3 || !strings.HasSuffix(out, "== totals\n"+want) {
		t.Errorf("text with --interval: %d reports so far, want 3, then the totals as without it:\n%s", n, out)
	}
	if _, errOut, code := run(t, "flows", "--interval", "-1ms", path); code == 0 || !strings.Contains(errOut, "--interval") {
		t.Errorf("--interval -1ms: exit %d: %s", code, errOut)
	}
}

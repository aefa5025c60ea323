package vmbench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// matrix is the traffic the bench runs, rxe0 (client) to rxe1 (server).
// Sizes: rxe's path MTU on the veth pair is 1024 (-m 1024 pins it).
var matrix = []traffic{
	{name: "rc-send", tool: "ib_send_bw", args: []string{"-s", "4096"}, iters: 100},
	{name: "rc-write", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 100},
	{name: "rc-write-imm", tool: "immwrite", args: []string{"-s", "4096"}, iters: 100},
	{name: "rc-read", tool: "ib_read_bw", args: []string{"-s", "4096"}, iters: 100},
	{name: "rc-fetch-add", tool: "ib_atomic_bw", args: []string{"-A", "FETCH_AND_ADD"}, iters: 100},
	{name: "rc-cmp-swap", tool: "ib_atomic_bw", args: []string{"-A", "CMP_AND_SWAP"}, iters: 100},
	{name: "uc-send", tool: "ib_send_bw", args: []string{"-c", "UC", "-s", "4096"}, iters: 100},
	{name: "uc-write", tool: "ib_write_bw", args: []string{"-c", "UC", "-s", "4096"}, iters: 100},
	{name: "ud-send", tool: "ib_send_bw", args: []string{"-c", "UD", "-s", "1024"}, iters: 100},
	{name: "rc-send-inline-64", tool: "ib_send_bw", args: []string{"-s", "64", "-I", "64"}, iters: 100},
	{name: "rc-send-noinline-64", tool: "ib_send_bw", args: []string{"-s", "64", "-I", "0"}, iters: 100},
	{name: "rc-write-below-mtu", tool: "ib_write_bw", args: []string{"-s", "1000", "-m", "1024"}, iters: 100},
	{name: "rc-write-at-mtu", tool: "ib_write_bw", args: []string{"-s", "1024", "-m", "1024"}, iters: 100},
	{name: "rc-write-above-mtu", tool: "ib_write_bw", args: []string{"-s", "1025", "-m", "1024"}, iters: 100},
	{name: "rc-write-4qp", tool: "ib_write_bw", args: []string{"-s", "2048", "-q", "4"}, iters: 100},
	{name: "rping", tool: "rping", iters: 20},
	{name: "rc-write-ipv6", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200, ipv6: true},
	{name: "rc-write-loss-data", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200, netemA: "loss 2%"},
	{name: "rc-send-loss-ack", tool: "ib_send_bw", args: []string{"-s", "4096"}, iters: 200, netemB: "loss 5%"},
	{name: "rc-write-reorder", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 50, netemA: "delay 1ms 900us"},
	{name: "rc-write-dup-data", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200, netemA: "duplicate 3%"},
	{name: "rc-write-dup-ack", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200, netemB: "duplicate 5%"},
	{name: "rc-write-delay-ack", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200, netemB: "delay 2ms"},
}

// row is one case's result for the table.
type row struct {
	name  string
	cells map[string]string
}

var columns = []string{"packets", "counters", "decode=tshark", "messages", "naks", "dups/gaps", "cm"}

// TestMatrix runs the cases one after another in the guest; each case's
// checks on the host (tshark, ibanalyze) overlap the next case's traffic,
// as the subtests are parallel and the guest runs one script at a time.
func TestMatrix(t *testing.T) {
	b := need(t)
	var rows []*row
	t.Cleanup(func() { printTable(rows) })
	for _, c := range matrix {
		r := &row{name: c.name, cells: map[string]string{}}
		rows = append(rows, r)
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b.check(t, c, r)
		})
	}
}

func printTable(rows []*row) {
	var s strings.Builder
	fmt.Fprintf(&s, "| case | %s |\n|---|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
	for _, r := range rows {
		fmt.Fprintf(&s, "| %s |", r.name)
		for _, c := range columns {
			v := r.cells[c]
			if v == "" {
				v = "-"
			}
			fmt.Fprintf(&s, " %s |", v)
		}
		s.WriteString("\n")
	}
	fmt.Printf("vmbench: the matrix (pass: what was compared; FAIL: what differed)\n%s", s.String())
}

var qdiscSent = regexp.MustCompile(`Sent \d+ bytes (\d+) pkt \(dropped (\d+),`)

// qdiscStats reads the root qdisc's packets sent and dropped from tc -s.
func qdiscStats(t *testing.T, path string) (sent, dropped uint64) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("qdisc stats: %v", err)
	}
	m := qdiscSent.FindSubmatch(b)
	if m == nil {
		return 0, 0
	}
	sent, _ = strconv.ParseUint(string(m[1]), 10, 64)
	dropped, _ = strconv.ParseUint(string(m[2]), 10, 64)
	return sent, dropped
}

func (b *bench) check(t *testing.T, c traffic, r *row) {
	dir, d := b.runCase(t, c)
	pcap := filepath.Join(dir, "va.pcap")
	cell := func(col string, ok bool, format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if ok {
			r.cells[col] = msg
			return
		}
		r.cells[col] = "FAIL: " + msg
		t.Errorf("%s: %s", col, msg)
	}
	frames, err := tsharkRead(pcap)
	if err != nil {
		t.Fatal(err)
	}
	srcA, srcB := ip4A, ip4B
	if c.ipv6 {
		srcA, srcB = ip6A, ip6B
	}
	var out, in uint64
	for _, f := range frames {
		switch f.src() {
		case srcA:
			out++
		case srcB:
			in++
		}
	}
	// The capture against rxe's counters and netem's statistics: va's
	// netem drops rxe0's packets before the tap, and vb's drops rxe1's
	// before they reach va; duplicates are made before the tap.
	sentA, dropA := qdiscDelta(t, dir, "va")
	sentB, dropB := qdiscDelta(t, dir, "vb")
	okCount := in == d["rxe0/rcvd_pkts"] && out == expectedOut(c, d, sentA)
	detail := fmt.Sprintf("%d out, %d in", out, in)
	if c.netemA != "" {
		okCount = okCount && out == sentA
		detail += fmt.Sprintf("; va netem sent %d dropped %d", sentA, dropA)
		if !strings.Contains(c.netemA, "duplicate") {
			okCount = okCount && out+dropA == d["rxe0/sent_pkts"]
		}
	} else {
		okCount = okCount && out == d["rxe0/sent_pkts"]
	}
	if c.netemB != "" {
		okCount = okCount && in == sentB
		detail += fmt.Sprintf("; vb netem sent %d dropped %d", sentB, dropB)
		if !strings.Contains(c.netemB, "duplicate") {
			okCount = okCount && in+dropB == d["rxe1/sent_pkts"]
		}
	} else {
		okCount = okCount && in == d["rxe1/sent_pkts"]
	}
	// What ibcap says the kernel dropped (its ring full) is missing from
	// the file; the counts must still add up with it.
	drops := kernelDrops(t, filepath.Join(dir, "ibcap.err"))
	if drops > 0 {
		detail += fmt.Sprintf("; ibcap: %d dropped by the kernel", drops)
		okCount = out+in+drops == expectedOut(c, d, sentA)+d["rxe0/rcvd_pkts"] && in <= d["rxe0/rcvd_pkts"]
	}
	cell("packets", okCount, "%s", detail)
	if !okCount {
		t.Logf("rxe0 sent %d rcvd %d, rxe1 sent %d rcvd %d", d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"], d["rxe1/sent_pkts"], d["rxe1/rcvd_pkts"])
	}
	r.cells["counters"] = fmt.Sprintf("rxe0 %d/%d, rxe1 %d/%d", d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"], d["rxe1/sent_pkts"], d["rxe1/rcvd_pkts"])
	for _, k := range []string{"out_of_seq_request", "duplicate_request", "completer_retry_err", "retry_exceeded_err", "rcvd_seq_err"} {
		for _, dev := range []string{"rxe0", "rxe1"} {
			if v := d[dev+"/"+k]; v != 0 {
				r.cells["counters"] += fmt.Sprintf(", %s %s %d", dev, k, v)
			}
		}
	}

	// decode = tshark, field for field.
	js, err := exec.Command(b.hostBin+"/ibanalyze", "decode", "--json", pcap).Output()
	if err != nil {
		t.Fatalf("ibanalyze decode --json %s: %v", pcap, err)
	}
	n, diffs := compareDecode(js, frames)
	cell("decode=tshark", len(diffs) == 0, "%d frames, %d fields%s", len(frames), n, strings.Join(append([]string{""}, diffs...), "; "))

	// cm: the communication manager's MADs (rping's rdma_cm) as
	// `ibanalyze cm` counts them = as tshark names them.
	if c.tool == "rping" {
		b.checkCM(t, pcap, frames, cell)
	}

	// flows: messages, NAKs, duplicates and gaps.
	fj, err := exec.Command(b.hostBin+"/ibanalyze", "flows", "--json", pcap).Output()
	if err != nil {
		t.Fatalf("ibanalyze flows --json %s: %v", pcap, err)
	}
	flows, err := parseFlows(fj)
	if err != nil {
		t.Fatal(err)
	}
	var msgs, msgsB, naks uint64
	var fromA psnJSON
	for _, f := range flows {
		// QP1 carries rdma_cm's management datagrams (immwrite's, rping's),
		// not the tool's operations.
		onQP1 := f.Key.DestQP == 1
		if f.Key.Src == srcB && !onQP1 {
			msgsB += f.Messages.Total
		}
		if f.Key.Src == srcA && !onQP1 {
			msgs += f.Messages.Total
			fromA.Gaps += f.PSN.Gaps
			fromA.Missing += f.PSN.Missing
			fromA.Duplicates += f.PSN.Duplicates
			fromA.OutOfOrder += f.PSN.OutOfOrder
		}
		if f.Key.Src == srcB {
			for _, n := range f.NAKs {
				if n.Name == "PSN_SEQUENCE_ERROR" {
					naks += n.Count
				}
			}
		}
	}
	if c.tool != "rping" {
		qps := uint64(1)
		if i := index(c.args, "-q"); i >= 0 {
			q, _ := strconv.Atoi(c.args[i+1])
			qps = uint64(q)
		}
		want := uint64(c.iters) * qps
		// rxe0 posts every request: its flows' messages are the tool's
		// operations; immwrite's immediates are their numbers. (rxe1's flows carry READ responses, counted beside.)
		msg := fmt.Sprintf("%d from rxe0 (%d from rxe1), %d iterations x %d QPs", msgs, msgsB, c.iters, qps)
		ok := msgs == want
		if c.tool == "immwrite" {
			imms, inOrder := immediates(frames, srcA)
			ok = ok && inOrder && imms == want
			order := "not in posting order"
			if inOrder && imms > 0 {
				order = fmt.Sprintf("0..%d in order", imms-1)
			}
			msg += fmt.Sprintf("; tshark: %d immediates, %s", imms, order)
		}
		cell("messages", ok, "%s", msg)
	}
	// Sequence-error NAKs: rxe1 sends one per out_of_seq_request; all reach
	// va unless vb's netem drops some.
	if drops > 0 {
		// The capture is short of what crossed: its PSNs cannot be held
		// against the counters.
		r.cells["naks"] = fmt.Sprintf("not compared: the capture lost %d", drops)
		return
	}
	if !strings.Contains(c.netemB, "loss") && c.tool != "rping" {
		cell("naks", naks == d["rxe1/out_of_seq_request"], "%d PSN sequence NAKs, rxe1 out_of_seq_request %d", naks, d["rxe1/out_of_seq_request"])
	}
	if c.tool != "ib_read_bw" && c.tool != "ib_atomic_bw" && c.tool != "rping" && !contains(c.args, "UD") {
		_, truth := psnTruth(frames, srcA)
		ok := truth == fromA
		msg := fmt.Sprintf("flows %+v, tshark's PSNs %+v", fromA, truth)
		dupsOK, note := rxeDuplicates(c.netemA, d["rxe1/duplicate_request"], d["rxe1/out_of_seq_request"], fromA.Duplicates)
		ok = ok && dupsOK
		msg += note
		cell("dups/gaps", ok, "%s", msg)
	}
}

// rxeDuplicates holds rxe1's duplicate_request (dups) against the
// duplicates in the capture (captured), given rxe1's out_of_seq_request and
// the netem on va, and says what it compared (nothing where that netem
// loses or reorders: rxe1's count is not the capture's).
func rxeDuplicates(netemA string, dups, outOfSeq, captured uint64) (ok bool, note string) {
	switch {
	case netemA != "" && !strings.HasPrefix(netemA, "duplicate"):
		return true, ""
	case outOfSeq == 0:
		// Without loss or reordering on the way, what rxe1 received is
		// what left va, and each resent PSN reaches it behind its
		// expected one: its duplicate count is the capture's. (Under
		// reordering, go-back-N resends PSNs rxe1 has not accepted yet,
		// which it drops as out of sequence, not as duplicates.)
		return captured == dups, fmt.Sprintf(", rxe1 duplicate_request %d", dups)
	default:
		// rxe1 saw requests ahead of their turn with no netem on the
		// way: something in the guest lost or reordered some between va
		// and rxe1 (on a loaded host, once in a CI run: 2 out of
		// sequence, 174 duplicates in the capture, 65 counted by rxe1).
		// rxe1 then drops, uncounted, the resent PSNs past the one it
		// waits for; it counts as duplicates only PSNs it accepted
		// before, each of which left va before: at most the capture's.
		return dups <= captured, fmt.Sprintf(", rxe1 duplicate_request %d (at most the capture's: rxe1 out_of_seq_request %d, lost or reordered in the guest)", dups, outOfSeq)
	}
}

// TestRxeDuplicates: the CI run's figures pass, an equal count is still
// wanted where rxe1 saw nothing out of sequence, and more duplicates than
// the capture holds fail either way.
func TestRxeDuplicates(t *testing.T) {
	for _, c := range []struct {
		netemA                   string
		dups, outOfSeq, captured uint64
		want                     bool
	}{
		{"", 65, 2, 174, true},
		{"", 175, 2, 174, false},
		{"", 65, 0, 174, false},
		{"", 174, 0, 174, true},
		{"duplicate 5%", 26, 0, 26, true},
		{"duplicate 5%", 25, 0, 26, false},
		{"loss 2%", 3, 16, 165, true},
	} {
		if ok, note := rxeDuplicates(c.netemA, c.dups, c.outOfSeq, c.captured); ok != c.want {
			t.Errorf("netem %q, rxe1 %d duplicates, %d out of sequence, capture %d: ok %v, want %v (%s)", c.netemA, c.dups, c.outOfSeq, c.captured, ok, c.want, note)
		}
	}
}

// immediates counts the distinct immediate data tshark finds in src's
// requests and says whether they were first seen in the order immwrite
// posts them, 0, 1, 2, ... (a resent packet repeats one already seen).
func immediates(frames []tsharkFrame, src string) (n uint64, inOrder bool) {
	seen := map[uint64]bool{}
	inOrder = true
	for _, f := range frames {
		// FT_BYTES: hex digits in network order, as the bytes of htonl(i).
		v, err := strconv.ParseUint(strings.ReplaceAll(f["infiniband.immdt"], ":", ""), 16, 32)
		if err != nil || f.src() != src || seen[v] {
			continue
		}
		inOrder = inOrder && v == uint64(len(seen))
		seen[v] = true
	}
	return uint64(len(seen)), inOrder
}

// expectedOut is how many of rxe0's packets leave va: what va's netem sent,
// or without one what rxe0 sent (as rxe1 received them).
func expectedOut(c traffic, d map[string]uint64, netemSent uint64) uint64 {
	if c.netemA != "" {
		return netemSent
	}
	return d["rxe1/rcvd_pkts"]
}

var droppedByKernel = regexp.MustCompile(`(\d+) packets dropped by the kernel`)

// kernelDrops reads ibcap's report of packets the kernel dropped.
func kernelDrops(t *testing.T, path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ibcap's report: %v", err)
	}
	m := droppedByKernel.FindSubmatch(b)
	if m == nil {
		t.Fatalf("ibcap's report in %s says nothing of kernel drops:\n%s", path, b)
	}
	n, _ := strconv.ParseUint(string(m[1]), 10, 64)
	return n
}

func qdiscDelta(t *testing.T, dir, dev string) (sent, dropped uint64) {
	s0, d0 := qdiscStats(t, filepath.Join(dir, "before."+dev))
	s1, d1 := qdiscStats(t, filepath.Join(dir, "after."+dev))
	return s1 - s0, d1 - d0
}

func contains(args []string, s string) bool { return index(args, s) >= 0 }

func index(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -1
}

// cmNames are the CM attribute IDs (IBA table 100) by the names ibanalyze
// cm gives them.
var cmNames = map[uint64]string{0x10: "REQ", 0x11: "MRA", 0x12: "REJ", 0x13: "REP", 0x14: "RTU",
	0x15: "DREQ", 0x16: "DREP", 0x17: "SIDR_REQ", 0x18: "SIDR_REP", 0x19: "LAP", 0x1a: "APR"}

func (b *bench) checkCM(t *testing.T, pcap string, frames []tsharkFrame, cell func(string, bool, string, ...any)) {
	want := map[string]uint64{}
	for _, f := range frames {
		if id, ok := f.num("infiniband.mad.attributeid"); ok && cmNames[id] != "" {
			want[cmNames[id]]++
		}
	}
	out, err := exec.Command(b.hostBin+"/ibanalyze", "cm", "--json", pcap).Output()
	if err != nil {
		cell("cm", false, "ibanalyze cm --json: %v", err)
		return
	}
	var got struct {
		Messages    map[string]uint64 `json:"messages"`
		Connections []struct {
			State string `json:"state"`
		} `json:"connections"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		cell("cm", false, "ibanalyze cm --json: %v", err)
		return
	}
	var states []string
	disconnected := 0
	for _, c := range got.Connections {
		states = append(states, c.State)
		if c.State == "disconnected" {
			disconnected++
		}
	}
	// rping sets up one connection and tears it down (its client may
	// first be rejected while the server starts listening).
	ok := fmt.Sprint(got.Messages) == fmt.Sprint(want) && disconnected == 1
	cell("cm", ok, "messages %v, tshark %v; connections %v", got.Messages, want, states)
}

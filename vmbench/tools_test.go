package vmbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolsScript captures one ib_write_bw run three ways at once: ibcap -i
// rxe0 (SoftRoCE by its netdev) with --telemetry and --metrics, ibcap -i
// vb, the receiver's side, and tshark -i ibcap-rxe0, Wireshark through
// ibcap's extcap entry (a folder holding a link to ibcap, bind-mounted
// over Wireshark's extcap folder in a mount namespace of its own, as
// Wireshark run as root ignores WIRESHARK_EXTCAP_DIR). The metrics are
// scraped once ibcap has stopped (ibscope_capture_stopped 1, served for
// --metrics-linger).
func (b *bench) toolsScript(name string, iters int) string {
	_, dir := b.caseDir(name)
	return scriptPrelude(dir) + fmt.Sprintf(`tc qdisc del dev va root 2>/dev/null; tc qdisc del dev vb root 2>/dev/null
%[1]s/ibcap -i rxe0 -w $D/rxe0.pcap --telemetry 100ms --metrics 127.0.0.1:9464 --metrics-linger 60s 2>ibcap.err & cap=$!
%[1]s/ibcap -i vb -w $D/vb.pcap 2>ibcap-vb.err & capb=$!
waitfor "ibcap to start" grep -q 'capturing on' ibcap.err
waitfor "ibcap -i vb to start" grep -q 'capturing on' ibcap-vb.err
ext=$(tshark -G folders 2>/dev/null | sed -n 's/^Extcap path:[[:space:]]*//p')
mkdir -p extcap && ln -sf %[1]s/ibcap extcap/ibcap
withextcap='mount --bind "$1" "$2" && shift 2 && exec tshark "$@"'
unshare --mount --propagation private sh -c "$withextcap" sh $D/extcap "$ext" -D > tshark-D.txt 2>&1 || fail "tshark -D: $(cat tshark-D.txt)"
unshare --mount --propagation private sh -c "$withextcap" sh $D/extcap "$ext" -i ibcap-rxe0 -w $D/extcap.pcapng 2>tshark.err & ts=$!
waitfor "tshark's capture through ibcap to start" grep -q 'Capture started' tshark.err
counters before
ib_write_bw -d rxe1 -x %[2]d -n %[3]d -F -s 4096 > server.out 2>&1 & srv=$!
waitfor "ib_write_bw to listen" sh -c "ss -Hltn | grep -q ':18515 '"
ib_write_bw -d rxe0 -x %[4]d -n %[3]d -F -s 4096 %[5]s > client.out 2>&1 || fail "client: $(cat client.out)"
wait $srv || fail "server: $(cat server.out)"
counters after
kill -INT $capb; wait $capb; echo "ibcap exit $?" >> ibcap-vb.err
kill -TERM $ts; wait $ts; echo "tshark exit $?" >> tshark.err
kill -INT $cap
waitfor "ibcap's final metrics" sh -c "busybox wget -qO metrics.txt http://127.0.0.1:9464/metrics && grep -q '^ibscope_capture_stopped.* 1' metrics.txt"
kill -TERM $cap; wait $cap; echo "ibcap exit $?" >> ibcap.err
true
`, b.bin, b.gid["rxe1/4"], iters, b.gid["rxe0/4"], ip4B)
}

// TestCaptureTools checks, on one ib_write_bw run, what the rest of
// ibscope says against the counters: ibcap -i rxe0, its --telemetry
// deltas, correlate's rows, ipd --compare of the sender's and the
// receiver's captures, and --metrics against the file.
func TestCaptureTools(t *testing.T) {
	b := need(t)
	const name, iters = "tools", 200
	host, _ := b.caseDir(name)
	out := b.run(t, b.toolsScript(name, iters), 4*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("case files kept in %s; guest script output:\n%s", host, out)
		}
	})
	d := delta(readCounters(t, filepath.Join(host, "before")), readCounters(t, filepath.Join(host, "after")))
	pcap := filepath.Join(host, "rxe0.pcap")
	frames, err := tsharkRead(pcap)
	if err != nil {
		t.Fatal(err)
	}
	var sent, rcvd uint64
	for _, f := range frames {
		switch f.src() {
		case ip4A:
			sent++
		case ip4B:
			rcvd++
		}
	}
	if sent != d["rxe0/sent_pkts"] || rcvd != d["rxe0/rcvd_pkts"] {
		t.Errorf("ibcap -i rxe0: %d packets from rxe0, %d to it; its counters: sent_pkts %d, rcvd_pkts %d", sent, rcvd, d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"])
	}
	errText, _ := os.ReadFile(filepath.Join(host, "ibcap.err"))
	if !strings.Contains(string(errText), "ibcap exit 0") {
		t.Errorf("ibcap -i rxe0 did not exit 0:\n%s", errText)
	}

	// Wireshark through ibcap's extcap entry: tshark -D lists rxe0 with
	// its link type, and tshark's capture through it holds what the
	// counters say crossed, as ibcap's own.
	listed, _ := os.ReadFile(filepath.Join(host, "tshark-D.txt"))
	if !strings.Contains(string(listed), ". ibcap-rxe0 (ibcap: rxe0, port 1 Ethernet (software RoCE on va))\n") {
		t.Errorf("tshark -D does not list ibcap-rxe0:\n%s", listed)
	}
	tsErr, _ := os.ReadFile(filepath.Join(host, "tshark.err"))
	if !strings.Contains(string(tsErr), "tshark exit 0") {
		t.Errorf("tshark -i ibcap-rxe0 did not exit 0:\n%s", tsErr)
	}
	if ext, err := tsharkRead(filepath.Join(host, "extcap.pcapng")); err != nil {
		t.Error(err)
	} else {
		var extSent, extRcvd uint64
		for _, f := range ext {
			switch f.src() {
			case ip4A:
				extSent++
			case ip4B:
				extRcvd++
			}
		}
		if extSent != d["rxe0/sent_pkts"] || extRcvd != d["rxe0/rcvd_pkts"] {
			t.Errorf("tshark -i ibcap-rxe0: %d packets from rxe0, %d to it; its counters: sent_pkts %d, rcvd_pkts %d", extSent, extRcvd, d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"])
		}
		t.Logf("tshark -i ibcap-rxe0: %d packets from rxe0, %d to it (counters: %d, %d)", extSent, extRcvd, d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"])
	}

	// --telemetry: the sidecar's first and last samples bracket the run.
	tel := telemetryDeltas(t, pcap+".telemetry.csv")
	for _, k := range []string{"sent_pkts", "rcvd_pkts", "rdma_sends", "rdma_recvs", "duplicate_request", "out_of_seq_request"} {
		if tel[k] != d["rxe0/"+k] {
			t.Errorf("--telemetry: %s rose by %d over the capture; the counter by %d", k, tel[k], d["rxe0/"+k])
		}
	}

	// correlate: its rows' deltas add up to the counters, and its capture
	// counts to the file. The capture and the sidecar share the guest's
	// clock (offset 0); the estimate correlate makes without --offset is
	// logged, as a run this short may not give it enough intervals
	// (TestCorrelateOffsetRxe checks the estimate on a longer run).
	arrow := filepath.Join(host, "joined.arrow")
	if est, err := exec.Command(b.hostBin+"/ibanalyze", "correlate", pcap, "--telemetry", pcap+".telemetry.csv", "-o", filepath.Join(host, "auto.arrow"), "--json").CombinedOutput(); err != nil {
		t.Logf("correlate without --offset: %v: %s", err, est)
	} else {
		t.Logf("correlate without --offset: %s", est)
	}
	sum, err := exec.Command(b.hostBin+"/ibanalyze", "correlate", pcap, "--telemetry", pcap+".telemetry.csv", "--offset", "0", "-o", arrow, "--json").CombinedOutput()
	if err != nil {
		t.Errorf("ibanalyze correlate --offset 0: %v\n%s", err, sum)
	} else {
		cols := sumArrowColumns(t, arrow, "sent_pkts_delta", "rcvd_pkts_delta", "cap_packets")
		if cols["sent_pkts_delta"] != d["rxe0/sent_pkts"] || cols["rcvd_pkts_delta"] != d["rxe0/rcvd_pkts"] {
			t.Errorf("correlate rows add up to sent_pkts %d, rcvd_pkts %d; the counters rose by %d and %d\n%s", cols["sent_pkts_delta"], cols["rcvd_pkts_delta"], d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"], sum)
		}
		if cols["cap_packets"] != uint64(len(frames)) {
			t.Errorf("correlate rows add up to %d captured packets; the file holds %d", cols["cap_packets"], len(frames))
		}
	}

	// ipd --compare: every data packet rxe0 sent (ipd's packets: requests,
	// not ACKs) is matched in the receiver's capture, none is one-sided.
	// Both sides are stamped by the guest's one clock, microseconds apart,
	// but a TCG guest on a loaded host stalls for tens of ms at times: the
	// match window is 1 s instead of the default 10 ms.
	cj, err := exec.Command(b.hostBin+"/ibanalyze", "ipd", "--compare", "--match-window", "1s", pcap, filepath.Join(host, "vb.pcap"), "--json").Output()
	if err != nil {
		t.Errorf("ibanalyze ipd --compare: %v", err)
	} else {
		var c struct {
			Matched uint64 `json:"matched"`
			OnlyA   uint64 `json:"only_a"`
			OnlyB   uint64 `json:"only_b"`
		}
		if err := json.Unmarshal(firstJSON(cj), &c); err != nil {
			t.Errorf("ipd --compare --json: %v", err)
		} else {
			// What ibcap -i vb reports the kernel dropped is missing on B's
			// side: those of rxe0's packets can only be one-sided.
			dropsB := kernelDrops(t, filepath.Join(host, "ibcap-vb.err"))
			if c.Matched+c.OnlyA != sent || c.OnlyA > dropsB || c.OnlyB != 0 {
				t.Errorf("ipd --compare: %d matched, %d only in rxe0's capture, %d only in vb's; rxe0 sent %d packets, all of which crossed, and ibcap -i vb reported %d dropped by the kernel", c.Matched, c.OnlyA, c.OnlyB, sent, dropsB)
			}
			t.Logf("ipd --compare: %d matched, %d only in rxe0's capture, %d only in vb's (ibcap -i vb: %d dropped by the kernel)", c.Matched, c.OnlyA, c.OnlyB, dropsB)
		}
	}

	// --metrics: the final scrape counts what the file holds.
	m := readMetrics(t, filepath.Join(host, "metrics.txt"))
	if m["ibscope_capture_packets_written_total"] != uint64(len(frames)) {
		t.Errorf("--metrics: ibscope_capture_packets_written_total %d; the file holds %d", m["ibscope_capture_packets_written_total"], len(frames))
	}
	// rxe0's port counters, read from the kernel's own sysfs on every
	// scrape: rdma_rxe gives link_downed among its hw_counters, and no
	// counter file or address may fail to read (an agent on a SoftRoCE
	// host would be reported unhealthy: nics's "nic read errors").
	if _, ok := m["node_infiniband_link_downed_total"]; !ok || m["ibscope_metrics_nic_read_errors_total"] != 0 {
		t.Errorf("--metrics: node_infiniband_link_downed_total served %v, ibscope_metrics_nic_read_errors_total %d; want served, 0", ok, m["ibscope_metrics_nic_read_errors_total"])
	}
	t.Logf("rxe0: sent %d rcvd %d; capture %d; telemetry %v; metrics written %d", d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"], len(frames), tel, m["ibscope_capture_packets_written_total"])
}

// firstJSON is the first JSON value of out (ipd may print more than one).
func firstJSON(out []byte) []byte {
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return out
	}
	return raw
}

// telemetryDeltas reads an ibcap sidecar: each counter's last value minus
// its first.
func telemetryDeltas(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("telemetry sidecar: %v", err)
	}
	defer f.Close()
	var cols []string
	var first, last []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "sample_id,"):
			cols = strings.Split(l, ",")
		default:
			v := strings.Split(l, ",")
			if first == nil {
				first = v
			}
			last = v
		}
	}
	d := map[string]uint64{}
	for i, c := range cols {
		if i < 3 || i >= len(first) || i >= len(last) {
			continue
		}
		a, err1 := strconv.ParseUint(first[i], 10, 64)
		z, err2 := strconv.ParseUint(last[i], 10, 64)
		if err1 == nil && err2 == nil {
			d[c[strings.LastIndex(c, "/")+1:]] = z - a
		}
	}
	if len(d) == 0 {
		t.Fatalf("telemetry sidecar %s: no counters with a first and last sample", path)
	}
	return d
}

// readMetrics reads the unlabelled (or summed) value of each series of a
// Prometheus text scrape.
func readMetrics(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("metrics scrape: %v", err)
	}
	m := map[string]uint64{}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(l, " ")
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
			rest = l[strings.LastIndexByte(l, ' ')+1:]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err == nil {
			m[name] += uint64(v)
		}
	}
	return m
}

package correlate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testtel"
	"github.com/ibscope/ibscope/telemetry"
)

// scenario is a capture and a telemetry series built together, with
// everything the test needs to know what each row must say.
type scenario struct {
	capture, telemetry string
	split              [2]string // the capture as two files: what A sent, what B sent
	sampleNs           []int64   // sample times on the capture clock
	packets            []scenarioPacket
	capFirst, capLast  int64
	cnpStart           uint64 // np_cnp_sent at sample 0 (near 2^32: it wraps)
}

type scenarioPacket struct {
	testPacket
	frameLen int
	retx     bool // a retransmission of an earlier PSN
}

const (
	t0Ns       = int64(1_767_000_000_000_000_000) // a multiple of 1 ms
	intervalNs = int64(1_000_000)
	samples    = 13
)

// buildScenario writes a RoCEv2 capture from 0.5 ms to 10.2 ms after t0
// and a sidecar with samples every ms from t0 to t0+12 ms whose counters
// follow the capture exactly: port_xmit_data and port_rcv_data count the
// bytes A sent and received (in 4-byte words), np_cnp_sent the CNPs, wrapping
// at 2^32. The telemetry's clock is clock; its times are the capture's minus
// clockBehindNs.
func buildScenario(t *testing.T, dir string, clock telemetry.Clock, clockBehindNs int64) *scenario {
	sc := &scenario{capture: filepath.Join(dir, "cap.pcap"), telemetry: filepath.Join(dir, "tel.csv"), cnpStart: 1<<32 - 3}
	for k := range samples {
		sc.sampleNs = append(sc.sampleNs, t0Ns+int64(k)*intervalNs)
	}
	var pk []scenarioPacket
	psn := uint32(100)
	for k := 0; k < 11; k++ { // packets in [t_k, t_k+1)
		lo := max(sc.sampleNs[k], t0Ns+intervalNs/2)
		hi := min(sc.sampleNs[k+1], t0Ns+10*intervalNs+intervalNs/5)
		n := 5 + 3*k
		for i := range n {
			ts := lo + int64(i)*(hi-lo)/int64(n)
			p := testPacket{tsNs: ts, src: hostA, dst: hostB, op: 0x07, qp: 0x11, psn: psn, payload: 512 + 64*k, srcMACByte: 1}
			if i%4 == 3 {
				p.ecn = 3
			}
			psn++
			pk = append(pk, scenarioPacket{testPacket: p})
		}
		if k%2 == 0 { // a CNP from B
			pk = append(pk, scenarioPacket{testPacket: testPacket{tsNs: lo + 7, src: hostB, dst: hostA, op: decode.OpcodeCNP, qp: 0x11, srcMACByte: 2}})
		}
		if k == 5 { // a NAK from B
			pk = append(pk, scenarioPacket{testPacket: testPacket{tsNs: lo + 11, src: hostB, dst: hostA, op: 0x11, qp: 0x22, psn: psn - 3, nak: true, srcMACByte: 2}})
		}
		if k == 7 { // A resends an earlier PSN
			pk = append(pk, scenarioPacket{testPacket: testPacket{tsNs: hi - 13, src: hostA, dst: hostB, op: 0x07, qp: 0x11, psn: psn - 5, payload: 512 + 64*k, srcMACByte: 1}, retx: true})
		}
		if k == 4 { // exactly on the next sample's time: belongs to the next interval
			pk = append(pk, scenarioPacket{testPacket: testPacket{tsNs: sc.sampleNs[k+1], src: hostB, dst: hostA, op: 0x11, qp: 0x22, psn: 1, srcMACByte: 2}})
		}
	}
	sort.SliceStable(pk, func(i, j int) bool { return pk[i].tsNs < pk[j].tsNs })
	c := newTestCapture(t, sc.capture)
	// The same packets split by sender, as two capture points would see them.
	sc.split = [2]string{filepath.Join(dir, "capA.pcap"), filepath.Join(dir, "capB.pcap")}
	ca, cb := newTestCapture(t, sc.split[0]), newTestCapture(t, sc.split[1])
	for i := range pk {
		pk[i].frameLen = c.add(t, pk[i].testPacket)
		if pk[i].src == hostA {
			ca.add(t, pk[i].testPacket)
		} else {
			cb.add(t, pk[i].testPacket)
		}
	}
	c.close(t)
	ca.close(t)
	cb.close(t)
	sc.packets = pk
	sc.capFirst, sc.capLast = pk[0].tsNs, pk[len(pk)-1].tsNs

	counters := []telemetry.Counter{
		telemetry.SysfsCounter("counters", telemetry.PortXmitData),
		telemetry.SysfsCounter("counters", telemetry.PortRcvData),
		cnpCounter32(),
	}
	s := telemetry.NewSeries(telemetry.Source{Device: "mlx5_0", Port: 1}, clock, counters)
	for k, ts := range sc.sampleNs {
		tx, rx, cnps := countersBefore(pk, ts)
		tel := ts - clockBehindNs
		s.Append(uint64(k), tel, tel, []uint64{tx, rx, (sc.cnpStart + cnps) & (1<<32 - 1)})
	}
	f, err := os.Create(sc.telemetry)
	if err != nil {
		t.Fatal(err)
	}
	if err := testtel.WriteSidecar(f, s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// cnpCounter32 is np_cnp_sent declared 32 bits wide, as most of mlx5's
// hw_counters are, so that the scenario's CNP count wraps at 2^32 and the
// join's wrap handling is exercised. (mlx5 reads np_cnp_sent itself as 64
// bits, where a fall is a reset: the catalog says so.)
func cnpCounter32() telemetry.Counter {
	c := telemetry.SysfsCounter("hw_counters", telemetry.NpCNPSent)
	c.Width = 32
	return c
}

// countersBefore is what the NIC's counters hold at time ts, by plain loops
// over the packets (in time order) before it: host A's port_xmit_data and
// port_rcv_data (4-byte words) and the CNPs seen.
func countersBefore(pk []scenarioPacket, ts int64) (tx, rx, cnps uint64) {
	for _, p := range pk {
		if p.tsNs >= ts {
			break
		}
		if p.src == hostA {
			tx += uint64(p.frameLen)
		} else {
			rx += uint64(p.frameLen)
		}
		if p.op.IsCNP() {
			cnps++
		}
	}
	return tx / 4, rx / 4, cnps
}

// expectRow is what row k (the interval ending at sample k) must hold,
// worked out from the packet list by plain loops.
func (sc *scenario) expectRow(k int) map[string]string {
	row := map[string]string{
		"sample_id": strconv.Itoa(k), "source": "mlx5_0/1", "lost_samples": "0",
	}
	end := sc.sampleNs[k]
	start := end
	if k > 0 {
		start = sc.sampleNs[k-1]
	}
	row["start_ns"], row["end_ns"] = strconv.FormatInt(start, 10), strconv.FormatInt(end, 10)
	cov := 0.0
	if end > start {
		lo, hi := max(start, sc.capFirst), min(end, sc.capLast+1)
		cov = max(0, float64(hi-lo)/float64(end-start))
	}
	row["coverage"] = fmt.Sprint(cov)
	row["partial"] = fmt.Sprint(cov > 0 && cov < 1)

	// Counters from the packets before each sample time.
	tx, rx, cnps := countersBefore(sc.packets, end)
	row["port_xmit_data"], row["port_rcv_data"] = fmt.Sprint(tx), fmt.Sprint(rx)
	row["np_cnp_sent"] = fmt.Sprint((sc.cnpStart + cnps) & (1<<32 - 1))
	if k > 0 {
		ptx, prx, pcnps := countersBefore(sc.packets, start)
		secs := float64(end-start) / 1e9
		row["port_xmit_data_delta"], row["port_xmit_data_rate"] = fmt.Sprint(tx-ptx), fmt.Sprint(float64(4*(tx-ptx))/secs)
		row["port_rcv_data_delta"], row["port_rcv_data_rate"] = fmt.Sprint(rx-prx), fmt.Sprint(float64(4*(rx-prx))/secs)
		row["np_cnp_sent_delta"], row["np_cnp_sent_rate"] = fmt.Sprint(cnps-pcnps), fmt.Sprint(float64(cnps-pcnps)/secs)
		if (sc.cnpStart+pcnps)>>32 != (sc.cnpStart+cnps)>>32 {
			row["delta_flags"] = "wrapped"
		}
	} else {
		row["delta_flags"] = "no_prev|no_time"
	}
	if cov == 0 {
		return row
	}
	// Capture statistics, per direction (A is the local NIC).
	type acc struct {
		n, bytes, data, ce, cnp, nak, retx uint64
		ipd                                []int64
	}
	var all, txs, rxs acc
	var last = map[string]int64{}
	for _, p := range sc.packets {
		dirs := []string{"all", "rx"}
		if p.src == hostA {
			dirs[1] = "tx"
		}
		for _, d := range dirs {
			prev, had := last[d]
			last[d] = p.tsNs
			if p.tsNs < start || p.tsNs >= end {
				continue
			}
			a := map[string]*acc{"all": &all, "tx": &txs, "rx": &rxs}[d]
			a.n++
			a.bytes += uint64(p.frameLen)
			if p.op == 0x07 {
				a.data += uint64(p.payload)
			}
			if p.ecn == 3 {
				a.ce++
			}
			if p.op.IsCNP() {
				a.cnp++
			}
			if p.nak {
				a.nak++
			}
			if p.retx {
				a.retx++
			}
			if had {
				a.ipd = append(a.ipd, p.tsNs-prev)
			}
		}
	}
	for prefix, a := range map[string]*acc{"cap_": &all, "cap_tx_": &txs, "cap_rx_": &rxs} {
		for name, v := range map[string]uint64{"packets": a.n, "bytes": a.bytes, "data_bytes": a.data, "ecn_ce": a.ce,
			"cnps": a.cnp, "naks": a.nak, "retransmissions": a.retx} {
			row[prefix+name] = fmt.Sprint(v)
		}
		if len(a.ipd) > 0 {
			slices.Sort(a.ipd)
			rank := func(p float64) int64 { return a.ipd[int(math.Ceil(p*float64(len(a.ipd))))-1] }
			row[prefix+"ipd_p50_ns"], row[prefix+"ipd_p99_ns"] = fmt.Sprint(rank(0.50)), fmt.Sprint(rank(0.99))
		}
	}
	return row
}

// compareJoined checks the reader's rows against expectations; numbers that
// are rates compare within a relative 1e-9.
func compareJoined(t *testing.T, got, want []map[string]string, ignore map[string]bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("reader sees %d rows, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		for k, w := range want[i] {
			g, ok := got[i][k]
			if ok && g != w {
				gf, e1 := strconv.ParseFloat(g, 64)
				wf, e2 := strconv.ParseFloat(w, 64)
				if e1 == nil && e2 == nil && math.Abs(gf-wf) <= 1e-9*math.Abs(wf) {
					continue
				}
			}
			if !ok || g != w {
				if bad++; bad <= 15 {
					t.Errorf("row %d: %s = %q (present %v), want %q", i, k, g, ok, w)
				}
			}
		}
		for k, g := range got[i] {
			if _, ok := want[i][k]; !ok && !ignore[k] {
				if bad++; bad <= 15 {
					t.Errorf("row %d: %s = %q, want null", i, k, g)
				}
			}
		}
	}
}

func correlateTo(t *testing.T, sc *scenario, out string, opt Options) Result {
	t.Helper()
	res, err := Correlate([]string{sc.capture}, []string{sc.telemetry}, out, opt)
	if err != nil {
		t.Fatalf("correlate: %v", err)
	}
	return res
}

// TestCorrelateKnownCounts joins a capture and telemetry built together and
// has the independent reader check every row: counters, deltas across a
// 32-bit wrap, rates, packets, bytes, ECN-CE, CNPs, NAKs, retransmissions and
// IPD percentiles per direction, partial and uncovered intervals, for both
// formats and for a NIC clock set off from the capture's by a given offset.
func TestCorrelateKnownCounts(t *testing.T) {
	local, _ := ParseLocal(hostA.String())
	var jobs []readJob
	var wants [][]map[string]string
	for _, tc := range []struct {
		name   string
		clock  telemetry.Clock
		behind int64
		format Format
	}{
		{"host-parquet", telemetry.ClockHost, 0, FormatParquet},
		{"host-arrow", telemetry.ClockHost, 0, FormatArrow},
		{"frc-offset-parquet", telemetry.ClockNICFree, t0Ns - 5_000_000_000, FormatParquet},
		{"two-captures-arrow", telemetry.ClockHost, 0, FormatArrow},
	} {
		dir := t.TempDir()
		sc := buildScenario(t, dir, tc.clock, tc.behind)
		out := filepath.Join(dir, "joined"+tc.format.Ext())
		captures := []string{sc.capture}
		if strings.HasPrefix(tc.name, "two-captures") {
			captures = sc.split[:]
		}
		res, err := Correlate(captures, []string{sc.telemetry}, out, Options{Format: tc.format, OffsetGiven: true, OffsetNs: tc.behind, Local: local})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != samples || !res.DirectionKnown || res.Frames != int64(len(sc.packets)) {
			t.Fatalf("%s: %d rows from %d frames (direction known %v), want %d from %d", tc.name, res.Rows, res.Frames, res.DirectionKnown, samples, len(sc.packets))
		}
		var want []map[string]string
		for k := range samples {
			row := sc.expectRow(k)
			row["clock"] = tc.clock.String()
			want = append(want, row)
		}
		jobs = append(jobs, readJob{Kind: tc.format.String(), Path: out})
		wants = append(wants, want)
	}
	got := readBack(t, jobs...)
	for i, name := range []string{"host-parquet", "host-arrow", "frc-offset-parquet", "two-captures-arrow"} {
		t.Run(name, func(t *testing.T) {
			if jobs[i].Kind == "parquet" {
				got[i].checkTimestamps(t)
			}
			compareJoined(t, got[i].Rows, wants[i], nil)
			checkTypes(t, got[i], jobs[i].Kind)
		})
	}
}

// joinedTypes are the types the independent readers must see: what pandas
// maps to datetime64[ns], uint64, float64, bool and object columns.
var joinedTypes = map[string][2]string{ // column: DuckDB (Parquet), Arrow JS (Arrow IPC)
	"sample_id":              {"UBIGINT", "Uint64"},
	"start_ns":               {duckTimestamp, "Timestamp<NANOSECOND>"},
	"end_ns":                 {duckTimestamp, "Timestamp<NANOSECOND>"},
	"source":                 {"VARCHAR", "Utf8"},
	"partial":                {"BOOLEAN", "Bool"},
	"coverage":               {"DOUBLE", "Float64"},
	"port_xmit_data":         {"UBIGINT", "Uint64"},
	"port_xmit_data_delta":   {"UBIGINT", "Uint64"},
	"port_xmit_data_rate":    {"DOUBLE", "Float64"},
	"cap_tx_bytes":           {"UBIGINT", "Uint64"},
	"cap_ipd_p99_ns":         {"BIGINT", "Int64"},
	"cap_rx_retransmissions": {"UBIGINT", "Uint64"},
}

func checkTypes(t *testing.T, o *readerOutput, kind string) {
	t.Helper()
	types := o.types()
	for col, want := range joinedTypes {
		w := want[0]
		if kind == "arrow" {
			w = want[1]
		}
		if types[col] != w {
			t.Errorf("%s: column %s is %q, want %q", kind, col, types[col], w)
		}
	}
	if kind == "arrow" {
		for _, f := range o.Schema {
			want := map[string]string{"port_xmit_data": "words4", "port_xmit_data_delta": "words4",
				"port_xmit_data_rate": "bytes/s", "np_cnp_sent_rate": "count/s"}[f.Name]
			if want != "" && f.Metadata["unit"] != want {
				t.Errorf("column %s unit %q, want %q", f.Name, f.Metadata["unit"], want)
			}
			if f.Metadata[descriptionKey] == "" {
				t.Errorf("column %s has no description in its field metadata", f.Name)
			}
		}
	}
	if o.Metadata["ibscope.table"] != "correlate" || o.Metadata["ibscope.captures"] == "" || o.Metadata["ibscope.link_types"] == "" {
		t.Errorf("%s: metadata %v", kind, o.Metadata)
	}
	if kind == "parquet" && o.CreatedBy != createdBy {
		t.Errorf("created_by %q, want %q", o.CreatedBy, createdBy)
	}
}

// TestCorrelateWindows: with --window 1ms on a ms grid the windows are the
// sample intervals, so each window must say what the interval's row says,
// with counter values as read at the window's start.
func TestCorrelateWindows(t *testing.T) {
	local, _ := ParseLocal(hostA.String())
	dir := t.TempDir()
	sc := buildScenario(t, dir, telemetry.ClockHost, 0)
	out := filepath.Join(dir, "win.arrow")
	res := correlateTo(t, sc, out, Options{Format: FormatArrow, OffsetGiven: true, WindowNs: intervalNs, Local: local})
	// The capture runs from 0.5 ms to 10.2 ms: windows 0 to 10.
	if res.Rows != 11 {
		t.Fatalf("%d rows, want 11", res.Rows)
	}
	var want []map[string]string
	for k := 0; k < 11; k++ {
		row, prev := sc.expectRow(k+1), sc.expectRow(k)
		row["clock"] = "host"
		delete(row, "sample_id")
		delete(row, "lost_samples")
		row["delta_flags"] = "interpolated"
		for _, c := range []string{"port_xmit_data", "port_rcv_data", "np_cnp_sent"} {
			row[c] = prev[c]
		}
		want = append(want, row)
	}
	got := readBack(t, readJob{Kind: "arrow", Path: out})
	compareJoined(t, got[0].Rows, want, nil)
}

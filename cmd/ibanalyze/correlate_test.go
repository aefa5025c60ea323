package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSidecar writes telemetry samples every 20 µs from startNs, with
// port_xmit_data counting up.
func writeSidecar(t *testing.T, path, clock string, startNs int64, n int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# ibscope-telemetry v1 source=mlx5_0/1 clock=%s\nsample_id,start_ns,end_ns,port_xmit_data\n", clock)
	for i := range n {
		ts := startNs + int64(i)*20_000
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", i, ts, ts, 1000*i*i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorrelateCommand(t *testing.T) {
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8) // covers the capture's 112 µs
	out := filepath.Join(dir, "j.parquet")
	stdout, stderr, code := run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "--local", "192.168.7.1", "-o", out)
	if code != 0 || !strings.Contains(stdout, "offset +0ns (given)") || !strings.Contains(stdout, out+": 8 rows from 77 frames") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code = run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "-1us", "--local", "192.168.7.1", "-o", out, "--json")
	var sum struct {
		Rows           int  `json:"rows"`
		Frames         int  `json:"frames"`
		DirectionKnown bool `json:"direction_known"`
		Series         []struct {
			OffsetNs  int64 `json:"offset_ns"`
			Estimated bool  `json:"offset_estimated"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v\nstdout %s\nstderr %s", code, err, stdout, stderr)
	}
	if sum.Rows != 8 || sum.Frames != 77 || !sum.DirectionKnown || len(sum.Series) != 1 || sum.Series[0].OffsetNs != -1000 || sum.Series[0].Estimated {
		t.Errorf("--json summary %+v", sum)
	}

	// Without --local an Ethernet capture does not say who sent what.
	_, stderr, code = run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-o", filepath.Join(dir, "j.arrow"))
	if code != 0 || !strings.Contains(stderr, "cap_tx_* and cap_rx_* are null; give --local ADDR") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestCorrelateCommandRefuses(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "later.csv")
	writeSidecar(t, later, "host", 1893456000000000000, 8) // 2030
	out := filepath.Join(dir, "j.parquet")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--telemetry", later, "--offset", "0"}, []string{later, "does not overlap the capture in time",
			"the capture spans 2026-01-02T03:04:05.000000700Z .. 2026-01-02T03:04:05.000112297Z (111.597us)",
			"the telemetry (clock host) spans 2030-01-01T00:00:00.000000000Z .. 2030-01-01T00:00:00.000140000Z (140us)"}},
		{[]string{"--telemetry", later}, []string{"does not overlap", "give the offset with --offset"}},
		{[]string{"--telemetry", later, "--offset", "soon"}, []string{`--offset: duration "soon": want a number and a unit`}},
		{[]string{"--telemetry", filepath.Join(dir, "none.csv"), "--offset", "0"}, []string{"none.csv", "no such file"}},
		{[]string{"--telemetry", later, "--local", "host-a"}, []string{`--local: address "host-a": want an IP address`}},
	} {
		args := append([]string{"correlate", rocev2Pcap, "-o", out}, tc.args...)
		_, stderr, code := run(t, args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q does not say %q", tc.args, stderr, w)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.parquet")); len(left) > 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestCorrelateCommandDOCAWarnings: a DOCA telemetry_diag CSV row with a
// field missing is stepped over, and the warning names file and line.
func TestCorrelateCommandDOCAWarnings(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("sample_id, sample_time_start, sample_time_end, port_1_tx_bytes\n")
	for i := range 8 {
		ts := 1767323044_999990000 + int64(i)*20_000
		if i == 3 {
			fmt.Fprintf(&b, "%d, %d.%09d, %d.%09d\n", i, ts/1e9, ts%1e9, ts/1e9, ts%1e9)
			continue
		}
		fmt.Fprintf(&b, "%d, %d.%09d, %d.%09d, %d\n", i, ts/1e9, ts%1e9, ts/1e9, ts%1e9, 5000*i*i)
	}
	tel := filepath.Join(dir, "diag.csv")
	if err := os.WriteFile(tel, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "--source", "mlx5_2/1", "-o", filepath.Join(dir, "j.parquet"))
	if code != 0 || !strings.Contains(stderr, tel+":5:") || !strings.Contains(stdout, "7 rows from 77 frames") || !strings.Contains(stdout, tel+" mlx5_2/1: offset +0ns") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// TestCorrelateRowSpan: --row-span makes fixed rows; --window, its old
// name, still does, with a deprecation note.
func TestCorrelateRowSpan(t *testing.T) {
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	var rows []string
	for _, flag := range []string{"--row-span", "--window"} {
		out := filepath.Join(dir, "j.arrow")
		stdout, stderr, code := run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", flag, "50us", "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", flag, code, stdout, stderr)
		}
		if deprecated := strings.Contains(stderr, "deprecated"); deprecated != (flag == "--window") {
			t.Errorf("%s: stderr %q", flag, stderr)
		}
		line := stdout[strings.Index(stdout, out):]
		rows = append(rows, line[:strings.LastIndex(line, ",")]) // not the seconds taken
	}
	if rows[0] != rows[1] || !strings.Contains(rows[0], " rows from 77 frames") {
		t.Errorf("--row-span: %q, --window: %q", rows[0], rows[1])
	}
	if _, stderr, code := run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--row-span", "1.5ns", "-o", filepath.Join(dir, "k.arrow")); code == 0 || !strings.Contains(stderr, "--row-span") {
		t.Errorf("--row-span 1.5ns: exit %d, %s", code, stderr)
	}
}

// TestCorrelateSelect: correlate takes the selection every packet-reading
// command takes; the cap_* columns count only the selected packets, as many
// as decode selects with the same expression.
func TestCorrelateSelect(t *testing.T) {
	dir := t.TempDir()
	tel := filepath.Join(dir, "tel.csv")
	writeSidecar(t, tel, "host", 1767323044999990000, 8)
	out := filepath.Join(dir, "j.csv")
	want := strings.Count(runOK(t, "decode", "-Y", "pcp == 3", rocev2Pcap), "\n")
	stdout := runOK(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-Y", "pcp == 3", "-o", out)
	if !strings.Contains(stdout, fmt.Sprintf("8 rows from %d frames (%d more not selected)", want, 77-want)) {
		t.Errorf("want %d of 77 frames selected:\n%s", want, stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	sum := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		cells := strings.Split(line, ",")
		switch {
		case strings.HasPrefix(line, "#"):
		case header == nil:
			header = cells
		default:
			for i, h := range header {
				if h == "cap_packets" && cells[i] != "" {
					var n int
					fmt.Sscan(cells[i], &n)
					sum += n
				}
			}
		}
	}
	if sum != want {
		t.Errorf("cap_packets add up to %d, want the %d selected", sum, want)
	}
	if _, stderr, code := run(t, "correlate", rocev2Pcap, "--telemetry", tel, "--offset", "0", "-Y", "pcp ==", "-o", out); code == 0 || !strings.Contains(stderr, "--select: column") {
		t.Errorf("a bad expression: exit %d %s", code, stderr)
	}
}

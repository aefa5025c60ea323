package vmbench

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// offsetScript captures three ib_write_bw runs of different sizes with
// ibcap -i rxe0 sampling rxe0's counters every telemetryMs: traffic that
// starts and stops (each run's start-up, seconds under TCG, sends nothing),
// so that correlate can line the counters up with the capture; a steady
// run fits nearly as well at any offset.
func (b *bench) offsetScript(name string, telemetryMs int) string {
	_, dir := b.caseDir(name)
	return scriptPrelude(dir) + fmt.Sprintf(`tc qdisc del dev va root 2>/dev/null; tc qdisc del dev vb root 2>/dev/null
%[1]s/ibcap -i rxe0 -w $D/rxe0.pcap --telemetry %[2]dms 2>ibcap.err & cap=$!
waitfor "ibcap to start" grep -q 'capturing on' ibcap.err
burst() { # burst N: one ib_write_bw run of N 4 KiB writes
  ib_write_bw -d rxe1 -x %[3]d -n $1 -F -s 4096 > server-$1.out 2>&1 & srv=$!
  waitfor "ib_write_bw to listen" sh -c "ss -Hltn | grep -q ':18515 '"
  ib_write_bw -d rxe0 -x %[4]d -n $1 -F -s 4096 %[5]s > client-$1.out 2>&1 || fail "client: $(cat client-$1.out)"
  wait $srv || fail "server: $(cat server-$1.out)"
}
sleep 0.2
burst 1000
sleep 0.3
burst 300
sleep 0.7
burst 2000
sleep 0.2
kill -INT $cap; wait $cap; echo "ibcap exit $?" >> ibcap.err
true
`, b.bin, telemetryMs, b.gid["rxe1/4"], b.gid["rxe0/4"], ip4B)
}

// TestCorrelateOffsetRxe: correlate estimates the clock offset between a
// capture and the telemetry sampled beside it from real rxe counters
// (sent_pkts, rcvd_pkts: SoftRoCE has no byte counters), with no
// --offset: both are stamped by the guest's one clock, so the estimate
// must be 0 within two steps of its grid, labelled clear, and printed with
// its evidence (r, matched intervals, the counters). Sampled every 50 ms:
// at 10 ms the sample is as long as the gaps in TCG's lumpy sending (every
// other interval empty), and the estimate (+1.6 ms on a grid of 1.45, r =
// 0.893) was rightly called ambiguous against -29.8 ms (r = 0.809); the
// same run's samples taken every 20, 50 and 100 ms gave -4.7, +2.0 and
// -0.9 ms, clear, r = 0.984, 0.995 and 0.999.
func TestCorrelateOffsetRxe(t *testing.T) {
	b := need(t)
	const name, telemetryMs = "offset", 50
	host, _ := b.caseDir(name)
	out := b.run(t, b.offsetScript(name, telemetryMs), 4*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("case files kept in %s; guest script output:\n%s", host, out)
		}
	})
	pcap := filepath.Join(host, "rxe0.pcap")
	cmd := exec.Command(b.hostBin+"/ibanalyze", "correlate", pcap, "--telemetry", pcap+".telemetry.csv", "-o", filepath.Join(host, "joined.arrow"), "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("ibanalyze correlate without --offset: %v\n%s%s", err, js, stderr.String())
	}
	var res struct {
		Series []struct {
			Source, Quality, Counted, Why string
			Counters                      []string
			Estimated                     bool    `json:"offset_estimated"`
			OffsetNs                      int64   `json:"offset_ns"`
			R                             float64 `json:"r"`
			Intervals                     int     `json:"intervals"`
			ResolutionNs                  int64   `json:"resolution_ns"`
			NextOffsetNs                  int64   `json:"next_offset_ns"`
			NextR                         float64 `json:"next_r"`
		}
	}
	if err := json.Unmarshal(js, &res); err != nil {
		t.Fatalf("correlate --json: %v\n%s", err, js)
	}
	if len(res.Series) != 1 {
		t.Fatalf("correlate joined %d series, want rxe0's one:\n%s", len(res.Series), js)
	}
	s := res.Series[0]
	t.Logf("%s: offset %d ns estimated %v, %s: r = %.4f over %d intervals of %s %v (next best %d ns, r = %.3f; grid %d ns): %s",
		s.Source, s.OffsetNs, s.Estimated, s.Quality, s.R, s.Intervals, s.Counted, s.Counters, s.NextOffsetNs, s.NextR, s.ResolutionNs, s.Why)
	if !s.Estimated || s.Counted != "packets" || s.Intervals < 8 || s.R < 0.8 || s.Quality != "clear" {
		t.Errorf("%s: the estimate from rxe's packet counters is not a clear one on at least 8 intervals:\n%s", s.Source, js)
	}
	if limit := 2 * s.ResolutionNs; s.OffsetNs < -limit || s.OffsetNs > limit || s.ResolutionNs <= 0 {
		t.Errorf("%s: offset %d ns; the capture and the telemetry share the guest's clock, so 0 within two grid steps (%d ns)", s.Source, s.OffsetNs, limit)
	}

	// The text report names the estimate and its evidence on one line.
	text, err := exec.Command(b.hostBin+"/ibanalyze", "correlate", pcap, "--telemetry", pcap+".telemetry.csv", "-o", filepath.Join(host, "joined2.arrow")).CombinedOutput()
	if err != nil {
		t.Fatalf("ibanalyze correlate: %v\n%s", err, text)
	}
	t.Logf("correlate says:\n%s", text)
	want := fmt.Sprintf("%s: offset ", s.Source)
	if !strings.Contains(string(text), want) || !strings.Contains(string(text), "estimated, clear: r = ") || !strings.Contains(string(text), "matched intervals of ") || !strings.Contains(string(text), "sent_pkts") {
		t.Errorf("correlate's text does not give the estimate with its evidence (%q, r, matched intervals of sent_pkts):\n%s", want, text)
	}
}

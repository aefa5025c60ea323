package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestJobsSameOutput: every analysis gives byte for byte the same output,
// warnings and exit code on several cores (-j 2 and -j 4) as on one (-j 1): on the
// bundled captures, on a simulated incast of many read-ahead batches, on
// damaged captures, with --json, --interval, --select, --from and -c.
func TestJobsSameOutput(t *testing.T) {
	pcaps, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", "*.pcap*"))
	if err != nil || len(pcaps) == 0 {
		t.Fatalf("no bundled captures: %v", err)
	}
	dir := t.TempDir()
	damaged, damagedNG := damagedCapture(t, dir), damagedCaptureNG(t, dir)
	sim := simIncast(t)
	s1, s2, r, tel := filepath.Join(sim, "s1.pcap"), filepath.Join(sim, "s2.pcap"), filepath.Join(sim, "r.pcap"), filepath.Join(sim, "perfquery.txt")
	every := []string{s1, damaged, damagedNG}
	var cases [][]string
	for _, cmd := range []string{"flows", "ipd", "cm", "pfc", "hops"} {
		for _, in := range [][]string{pcaps, {s1}, {damaged}, {damagedNG}, every} {
			cases = append(cases, append([]string{cmd}, in...), append([]string{cmd, "--json"}, in...))
		}
	}
	for _, in := range [][]string{pcaps, every} {
		cases = append(cases,
			append([]string{"decode"}, in...),
			append([]string{"decode", "--json"}, in...),
			append([]string{"decode", "-e", "-v"}, in...),
			append([]string{"decode", "--summary"}, in...),
			append([]string{"decode", "--summary", "--json", "--no-crc"}, in...),
			append([]string{"decode", "-c", "300", "-Y", "psn > 3"}, in...))
	}
	cases = append(cases,
		[]string{"flows", "--json", "--interval", "100us", s1},
		[]string{"flows", "--interval", "100us", s1, damaged},
		[]string{"ipd", "--json", "--interval", "100us", s1},
		[]string{"ipd", "--by", "link", "--phases", s1},
		[]string{"flows", "-c", "500", "--from", "+20us", s1},
		[]string{"flows", "-Y", "opcode == \"RC_ACKNOWLEDGE\"", "--json", s1, damaged},
		[]string{"ipd", "--compare", s1, s2},
		[]string{"credits", "--rate", "QDR", s1},
		[]string{"credits", "--rate", "QDR", "--json", "--interval", "100us", s1},
		[]string{"tick", "--rate", "QDR", "--telemetry", tel, s1},
		[]string{"buffer", s1, s2, r},
		[]string{"buffer", "--json", "--interval", "100us", s1, s2, r},
	)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) { sameOnCores(t, args, "2", "4") })
	}
}

// sameOnCores checks that ibanalyze args gives byte for byte the same
// output, warnings and exit code with each of -j jobs as with -j 1.
func sameOnCores(t *testing.T, args []string, jobs ...string) {
	t.Helper()
	want, wantErr, wantCode := run(t, append([]string{"-j", "1"}, args...)...)
	for _, j := range jobs {
		got, gotErr, gotCode := run(t, append([]string{"-j", j}, args...)...)
		if got != want || gotErr != wantErr || gotCode != wantCode {
			t.Errorf("-j %s differs from -j 1: exit %d, want %d\nstderr:\n%.2000s\nwant:\n%.2000s\nstdout:\n%s",
				j, gotCode, wantCode, gotErr, wantErr, firstDiff(got, want))
		}
	}
	if strings.TrimSpace(want) == "" && wantCode != 0 {
		t.Logf("no output, exit %d: %.300s", wantCode, wantErr)
	}
}

// TestJobsSameDecodeSummary: decode --summary, which on several cores
// takes each batch's counts at once (tallyBatches), counts as one core
// does on a capture of many batches with frames that cannot be decoded
// (more than the warnings told), frames cut by the snap length and bad
// CRCs spread over them, and a damaged end.
func TestJobsSameDecodeSummary(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	offs, _ := pcapRecords(t, src)
	var recs [][]byte
	for _, off := range offs {
		recs = append(recs, src[off+16:off+16+int(binary.LittleEndian.Uint32(src[off+8:]))])
	}
	file := nsPcapHeader()
	for i := range 5000 {
		data := append([]byte(nil), recs[i%len(recs)]...)
		capLen, wireLen, _ := spoilRecord(i, data)
		file = appendNsRecord(file, i, data, capLen, wireLen)
	}
	dir := t.TempDir()
	whole, cut := filepath.Join(dir, "many.pcap"), filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(whole, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, file[:len(file)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"text":        {"decode", "--summary", whole},
		"json, two":   {"decode", "--summary", "--json", whole, cut},
		"no CRC, two": {"decode", "--summary", "--no-crc", cut, whole},
		"selected":    {"decode", "--summary", "-Y", "psn > 3", whole},
		"first 3000":  {"decode", "--summary", "-c", "3000", whole},
	} {
		t.Run(name, func(t *testing.T) { sameOnCores(t, args, "2", "4") })
	}
	want := ": 5000 frames, 4885 IB/RoCE decoded, 63 skipped (not IB/RoCE), 52 could not be decoded, 80 cut by the snap length (CRCs not checked), 116 bad ICRC, 0 bad VCRC/LPCRC\n"
	if out, _, _ := run(t, "-j", "2", "decode", "--summary", whole); out != whole+want {
		t.Errorf("-j 2 decode --summary:\n%s\nwant\n%s%s", out, whole, want)
	}
}

// firstDiff shows the first line where got and want part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// elapsed is the time export says it took.
var elapsed = regexp.MustCompile(`, [0-9.]+ s`)

// TestJobsSameExport: export and correlate write the same rows on several
// cores as on one, for every text format, damaged captures included.
func TestJobsSameExport(t *testing.T) {
	dir := t.TempDir()
	sim := simIncast(t)
	s1 := filepath.Join(sim, "s1.pcap")
	captures := []string{s1, damagedCapture(t, dir), damagedCaptureNG(t, dir)}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"export jsonl", append([]string{"export"}, captures...), 1}, // the damaged captures
		{"export csv", append([]string{"export"}, captures...), 1},
		{"correlate csv", []string{"correlate", s1, "--telemetry", filepath.Join(sim, "perfquery.txt"), "--offset", "0"}, 0},
	} {
		ext := c.name[strings.IndexByte(c.name, ' ')+1:]
		t.Run(c.name, func(t *testing.T) {
			var outs [2]string
			var stderrs [2]string
			for i, j := range []string{"1", "3"} {
				path := filepath.Join(dir, "rows-j"+j+"."+ext)
				_, stderr, code := run(t, append([]string{"-j", j}, append(c.args, "-o", path)...)...)
				if code != c.code {
					t.Fatalf("-j %s: exit %d, want %d: %s", j, code, c.code, stderr)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				outs[i], stderrs[i] = string(data), elapsed.ReplaceAllString(strings.ReplaceAll(stderr, path, "OUT"), ", T s")
			}
			if strings.Count(outs[0], "\n") < 2 {
				t.Fatalf("-j 1 wrote no rows:\n%s", outs[0])
			}
			if outs[1] != outs[0] {
				t.Errorf("-j 3 rows differ from -j 1: %s", firstDiff(outs[1], outs[0]))
			}
			if stderrs[1] != stderrs[0] {
				t.Errorf("-j 3 told:\n%s\nwant as -j 1:\n%s", stderrs[1], stderrs[0])
			}
		})
	}
}

// TestJobsRange: -j outside 1 to maxJobs is refused in one line naming it,
// before anything is read.
func TestJobsRange(t *testing.T) {
	pcap := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap")
	for _, j := range []string{"0", "-1", "257"} {
		for _, cmd := range []string{"flows", "decode", "export"} {
			args := []string{"-j", j, cmd, pcap}
			if cmd == "export" {
				args = append(args, "-o", filepath.Join(t.TempDir(), "x.jsonl"))
			}
			stdout, stderr, code := run(t, args...)
			if want := "ibanalyze: -j " + j + ": want 1 to 256 cores\n"; code != 1 || stdout != "" || stderr != want {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", strings.Join(args, " "), code, stdout, stderr, want)
			}
		}
	}
}

// TestJobsWhereCapturesAreRead: -j is offered by the commands that read
// captures, before their name or after it, and refused by the fleet
// view's, which read none.
func TestJobsWhereCapturesAreRead(t *testing.T) {
	pcap := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_cm.pcap")
	for _, cmd := range []string{"decode", "ipd", "flows", "cm", "credits", "buffer", "tick", "pfc", "hops", "correlate", "export", "report"} {
		if out, _, code := run(t, cmd, "--help"); code != 0 || !strings.Contains(out, "-j, --jobs N") {
			t.Errorf("%s --help: exit %d, no -j:\n%s", cmd, code, out)
		}
	}
	for _, args := range [][]string{{"-j", "1", "flows", pcap}, {"flows", "-j", "1", pcap}} {
		if _, errOut, code := run(t, args...); code != 0 {
			t.Errorf("%q: exit %d\n%s", args, code, errOut)
		}
	}
	for _, cmd := range []string{"status", "nics", "links"} {
		if out, _, _ := run(t, cmd, "--help"); strings.Contains(out, "--jobs") {
			t.Errorf("%s --help offers --jobs:\n%s", cmd, out)
		}
		for _, args := range [][]string{{cmd, "-j", "2"}, {"-j", "2", cmd}, {cmd, "--jobs", "2"}} {
			if _, errOut, code := run(t, args...); code == 0 || !strings.Contains(errOut, "unknown") {
				t.Errorf("%q: exit %d, want the flag refused:\n%s", args, code, errOut)
			}
		}
	}
}

// TestDefaultJobs: without -j, one core where reading ahead does not pay
// (the analyses, decode --summary, correlate), the idle cores where it
// does; -j given is taken as it is either way.
func TestDefaultJobs(t *testing.T) {
	saved := jobs
	defer func() { jobs = saved }()
	jobs = jobsFlag{}
	if n, err := workers(false); n != 1 || err != nil {
		t.Errorf("without -j, where it does not pay: %d cores, %v; want 1", n, err)
	}
	if n, err := workers(true); n < 1 || n > runtime.GOMAXPROCS(0) || err != nil { // idleCores: the load moves
		t.Errorf("without -j, where it pays: %d cores, %v", n, err)
	}
	jobs = jobsFlag{n: 3, set: true}
	for _, pays := range []bool{false, true} {
		if n, err := workers(pays); n != 3 || err != nil {
			t.Errorf("-j 3 (pays %v): %d cores, %v", pays, n, err)
		}
	}
}

// TestIdleCores: the default -j is the cores the others leave idle,
// rounded, from 1 to all of them; busy is the load average, or the tasks
// running now (but ibanalyze) when fewer.
func TestIdleCores(t *testing.T) {
	for _, c := range []struct {
		cores int
		busy  float64
		want  int
	}{
		{2, 0, 2}, {2, 0.4, 2}, {2, 0.6, 1}, {2, 1.4, 1}, {2, 7, 1}, {1, 0, 1},
		{64, 10.2, 54}, {64, 0, 64}, {64, 200, 1}, {8, -1, 8},
	} {
		if got := idleCores(c.cores, c.busy); got != c.want {
			t.Errorf("idleCores(%d, %g) = %d, want %d", c.cores, c.busy, got, c.want)
		}
	}
	for loadavg, want := range map[string]float64{
		"7.02 6.10 5.00 6/140 5416\n": 5,   // five others running now
		"1.40 0.90 0.40 1/120 100\n":  0,   // only ibanalyze: the average holds the last run's load
		"0.30 0.20 0.10 4/120 100\n":  0.3, // a moment's crowd: the average
		"0.30 0.20 0.10\n":            0,
		"x 0.20 0.10 1/1 1\n":         0,
		"NaN 0 0 3/9 1\n":             0,
		"-1 0 0 3/9 1\n":              0,
		"":                            0,
	} {
		if got := parseBusy(loadavg); got != want {
			t.Errorf("parseBusy(%q) = %g, want %g", loadavg, got, want)
		}
	}
	if busy := busyCores(); busy < 0 {
		t.Errorf("busyCores() = %g", busy)
	}
}

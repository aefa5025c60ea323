package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/cmdtest"
	"github.com/ibscope/ibscope/internal/testenv"
)

var ibsimBin string

func TestMain(m *testing.M) { cmdtest.Main(m, "ibsim", &ibsimBin) }

func runIbsim(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cmdtest.Run(t, ibsimBin, args...)
}

func TestIbsimPresetRoundTrip(t *testing.T) {
	out, _, code := runIbsim(t, "--list-presets")
	if code != 0 || !strings.Contains(out, "incast2015") {
		t.Fatalf("--list-presets: exit %d, %q", code, out)
	}
	// The printed scenario is a scenario file ibsim runs.
	yaml, _, code := runIbsim(t, "--preset", "incast-small", "--print")
	if code != 0 {
		t.Fatalf("--print: exit %d", code)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runIbsim(t, file, "-o", filepath.Join(dir, "out"), "--quantize-ns", "1000")
	if code != 0 || !strings.Contains(out, "4096 data packets") || !strings.Contains(out, "port s1/1   longest congestion episode") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"s1.pcapng", "s2.pcapng", "r.pcapng", "perfquery.txt", "truth.json"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
}

func TestIbsimBadScenario(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	text := "hosts: [{name: a}, {name: b}]\nlinks: [{a: a, b: b, rate: ZDR}]\nflows: [{src: a, dst: b, bytes: 1}]\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runIbsim(t, file, "-o", dir)
	if code == 0 || !strings.Contains(errOut, "links[0].rate") {
		t.Errorf("exit %d, stderr %q: want a failure naming links[0].rate", code, errOut)
	}
	_, errOut, code = runIbsim(t, "--preset", "nope", "-o", dir)
	if code == 0 || !strings.Contains(errOut, "incast2015") {
		t.Errorf("unknown preset: exit %d, stderr %q: want the presets listed", code, errOut)
	}
}

// TestIbsimSnap: --snap sets the snap length of every tap that sets none,
// a tap's own snap_bytes wins, and lengths too short are refused.
func TestIbsimSnap(t *testing.T) {
	yaml, _, code := runIbsim(t, "--preset", "incast-small", "--print")
	if code != 0 || strings.Count(yaml, "snap_bytes: 0") != 3 {
		t.Fatalf("--print: exit %d, want three taps with snap_bytes: 0\n%s", code, yaml)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(yaml, "snap_bytes: 0", "snap_bytes: 64", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, cut := filepath.Join(dir, "whole"), filepath.Join(dir, "cut")
	for _, run := range [][]string{{file, "-o", whole}, {file, "-o", cut, "--snap", "128"}} {
		if out, errOut, code := runIbsim(t, run...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", run, code, out, errOut)
		}
	}
	truth, err := os.ReadFile(filepath.Join(cut, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Taps []struct {
			File      string `json:"file"`
			SnapBytes int    `json:"snap_bytes"`
		} `json:"taps"`
	}
	if err := json.Unmarshal(truth, &tr); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"s1.pcapng": 64, "s2.pcapng": 128, "r.pcapng": 128}
	for _, tp := range tr.Taps {
		if tp.SnapBytes != want[tp.File] {
			t.Errorf("tap %s: snap_bytes %d, want %d", tp.File, tp.SnapBytes, want[tp.File])
		}
		a, errA := os.Stat(filepath.Join(whole, tp.File))
		b, errB := os.Stat(filepath.Join(cut, tp.File))
		if errA != nil || errB != nil {
			t.Fatal(errors.Join(errA, errB))
		}
		switch {
		case tp.File == "s1.pcapng" && a.Size() != b.Size():
			t.Errorf("%s sets its own snap length, yet is %d bytes with --snap, %d without", tp.File, b.Size(), a.Size())
		case tp.File != "s1.pcapng" && b.Size()*5 > a.Size():
			t.Errorf("%s: %d bytes with a snap length, %d without: want far smaller", tp.File, b.Size(), a.Size())
		}
	}

	for _, bad := range []string{"-1", "19"} {
		_, errOut, code := runIbsim(t, "--preset", "incast-small", "-o", dir, "--snap", bad)
		if code == 0 || !strings.Contains(errOut, "--snap "+bad) {
			t.Errorf("--snap %s: exit %d, stderr %q: want a refusal naming --snap", bad, code, errOut)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Replace(yaml, "snap_bytes: 0", "snap_bytes: -5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runIbsim(t, file, "-o", dir); code == 0 || !strings.Contains(errOut, "taps[0].snap_bytes") {
		t.Errorf("snap_bytes -5: exit %d, stderr %q: want a refusal naming taps[0].snap_bytes", code, errOut)
	}
}

// TestIbsimRefusesBeforeWriting: values out of range, fractions in integer
// keys, a bad --quantize-ns and outputs outside -o are refused with the key
// or flag named, and nothing is written.
func TestIbsimRefusesBeforeWriting(t *testing.T) {
	base := t.TempDir()
	good := "hosts: [{name: a}, {name: b}]\nlinks: [{a: a, b: b}]\nflows: [{src: a, dst: b, bytes: 65536}]\ntaps: [{port: a/1, file: a.pcap}]\n"
	for _, c := range []struct {
		name, text string
		args       []string
		want       string
	}{
		{"credit jitter at int64's max", good + "credit_jitter_ns: 9223372036854775807\n", nil, "key credit_jitter_ns: 9223372036854775807 is out of range"},
		{"fcp period of 1 ns", good + "fcp_period_ns: 1\n", nil, "key fcp_period_ns: 1 is out of range: want 1000"},
		{"tick NaN", good + "tick_ns: .nan\n", nil, "key tick_ns: NaN: want a finite number"},
		{"fractional bytes", strings.Replace(good, "bytes: 65536", "bytes: 1.5", 1), nil, "key flows[0].bytes: 1.5: want a whole number"},
		{"start near 2^63", strings.Replace(good, "bytes: 65536", "bytes: 65536, start_ns: 9223372036854775000", 1), nil, "key flows[0].start_ns"},
		{"huge bytes", strings.Replace(good, "bytes: 65536", "bytes: 1099511627776", 1), nil, "key flows[0].bytes"},
		{"tap two levels up", strings.Replace(good, "file: a.pcap", "file: ../../x", 1), nil, "key taps[0].file"},
		{"sysfs dir outside", good + "telemetry: {period_ns: 20000, sysfs_dir: /tmp/sysfs}\n", nil, "key telemetry.sysfs_dir"},
		{"tap named truth.json", strings.Replace(good, "file: a.pcap", "file: truth.json", 1), nil, "truth.json"},
		// A name that shows backwards on a terminal, or that the file system
		// refuses only when the run is over.
		{"tap name with U+202E", strings.Replace(good, "file: a.pcap", `file: "a\u202Epacp.exe"`, 1), nil, `key taps[0].file: "a\u202epacp.exe": want a name of printable characters`},
		{"tap name with NUL", strings.Replace(good, "file: a.pcap", `file: "a\0.pcap"`, 1), nil, `key taps[0].file: "a\x00.pcap": want a name of printable characters`},
		{"scenario name with ESC", "name: \"\\e[2Jx\"\n" + good, nil, `key name: "\x1b[2Jx": want printable characters only`},
		{"host name with OSC", strings.Replace(good, "{name: a}", `{name: "\e]0;owned\a"}`, 1), nil, `key hosts[0].name: "\x1b]0;owned\a": want a non-empty name of printable characters`},
		{"negative --quantize-ns", good, []string{"--quantize-ns", "-7"}, "--quantize-ns -7"},
		{"--snap too long", good, []string{"--snap", "70000"}, "--snap 70000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(c.name, " ", "_"))
			os.Mkdir(dir, 0o755)
			file := filepath.Join(dir, "s.yaml")
			os.WriteFile(file, []byte(c.text), 0o644)
			out := filepath.Join(dir, "a", "b", "out")
			_, errOut, code := runIbsim(t, append([]string{file, "-o", out}, c.args...)...)
			if code != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q: want 1 and %q", code, errOut, c.want)
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Errorf("written: %v", es)
			}
		})
	}
}

// TestIbsimFullDisk: a run that fills its file system stops with the write
// error and leaves none of its files. Needs root for the tmpfs.
func TestIbsimFullDisk(t *testing.T) {
	out := testenv.SmallTmpfs(t, "256k")
	_, errOut, code := runIbsim(t, "--preset", "incast-small", "-o", out)
	if code != 1 || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("exit %d, stderr %q: want 1 and the write error", code, errOut)
	}
	if es, _ := os.ReadDir(out); len(es) > 0 {
		t.Errorf("left behind: %v", es)
	}
}

// TestIbsimInterrupted: SIGTERM or SIGINT during a run leaves none of its
// files, temporary ones included, and exits 128+signal.
func TestIbsimInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(ibsimBin, "--preset", "incast2015", "-o", out)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait, without a time limit of its own, for the temporary files.
		for {
			if m, _ := filepath.Glob(filepath.Join(out, ".*.tmp")); len(m) > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			// The run may have finished first on a fast machine.
			if err == nil {
				t.Logf("%v: the run finished before the signal", sig)
				continue
			}
			t.Errorf("%v: %v, want exit status %d; stderr %s", sig, err, 128+int(sig), stderr.String())
		}
		if !strings.Contains(stderr.String(), "partial output removed") {
			t.Errorf("%v: stderr %q", sig, stderr.String())
		}
		if _, err := os.Lstat(out); err == nil {
			es, _ := os.ReadDir(out)
			t.Errorf("%v: left behind %v", sig, es)
		}
	}
}

// TestMissingScenarioNamedOnce: the scenario file that cannot be opened is
// named once, with the one verb that failed.
func TestMissingScenarioNamedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	_, stderr, code := runIbsim(t, "-o", filepath.Join(t.TempDir(), "out"), missing)
	if code == 0 || strings.Count(stderr, missing) != 1 || strings.Count(stderr, "open ") != 1 ||
		!strings.Contains(stderr, "no such file or directory") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestIbsimInterruptedLarge: SIGINT stops a run of the largest size a
// scenario may have at once, wherever it is (a chain of 8000 switches that
// a 64 MiB flow would cross for minutes): exit 130, nothing left.
func TestIbsimInterruptedLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: chain\nhosts: [{name: a}, {name: b}]\nswitches:\n")
	const switches = 8000
	for i := range switches {
		fmt.Fprintf(&b, "  - {name: s%d}\n", i)
	}
	b.WriteString("links:\n  - {a: a, b: s0}\n")
	for i := range switches - 1 {
		fmt.Fprintf(&b, "  - {a: s%d, b: s%d}\n", i, i+1)
	}
	fmt.Fprintf(&b, "  - {a: s%d, b: b}\nflows: [{src: a, dst: b, bytes: %d}]\ntaps: [{port: a/1, file: a.pcap}]\n", switches-1, 64<<20)
	dir := t.TempDir()
	scenario, out := filepath.Join(dir, "chain.yaml"), filepath.Join(dir, "out")
	if err := os.WriteFile(scenario, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ibsimBin, scenario, "-o", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	testenv.WaitFor(t, 0, "the run's temporary files", func() bool {
		m, _ := filepath.Glob(filepath.Join(out, ".*.tmp"))
		return len(m) > 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stderr.String(), "partial output removed") {
			t.Errorf("after SIGINT: %v, stderr %q; want exit 130", err, stderr.String())
		}
	case <-time.After(testenv.WaitDeadline):
		cmd.Process.Kill()
		t.Fatalf("still running %v after SIGINT", testenv.WaitDeadline)
	}
	if _, err := os.Lstat(out); err == nil {
		es, _ := os.ReadDir(out)
		t.Errorf("left behind %v", es)
	}
}

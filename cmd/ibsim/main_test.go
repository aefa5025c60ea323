package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var ibsimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibsim-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ibsimBin = filepath.Join(dir, "ibsim")
	if out, err := exec.Command("go", "build", "-o", ibsimBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build ibsim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runIbsim(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(ibsimBin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
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
	for _, f := range []string{"s1.pcap", "s2.pcap", "r.pcap", "perfquery.txt", "truth.json"} {
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

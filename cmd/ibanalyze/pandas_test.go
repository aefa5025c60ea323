package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// debianPython is Debian's python3, whose python3-pandas (1.5 on Debian 12)
// has no pyarrow: a pyenv python3 first on PATH may have both.
const debianPython = "/usr/bin/python3"

// readmePandasLines returns the README's pandas-without-pyarrow lines: the
// indented block that starts with "import json, pandas as pd".
func readmePandasLines(t *testing.T) string {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "    import json, pandas as pd") || (len(block) > 0 && strings.HasPrefix(l, "    ")) {
			block = append(block, strings.TrimPrefix(l, "    "))
		} else if len(block) > 0 {
			break
		}
	}
	if len(block) < 3 || !strings.Contains(strings.Join(block, "\n"), "pd.read_csv(") || !strings.Contains(strings.Join(block, "\n"), "pd.read_json(") {
		t.Fatalf("README has no pandas block with read_csv and read_json: %q", block)
	}
	return strings.Join(block, "\n") + "\n"
}

// TestPandasWithoutPyarrow runs the README's read_csv and read_json lines
// with Debian's pandas on export's and correlate's CSV and JSON Lines of an
// ibsim run, and checks what pandas made of them (issue 24: without pyarrow
// nothing ibanalyze wrote but decode's JSON reached pandas).
func TestPandasWithoutPyarrow(t *testing.T) {
	if out, err := exec.Command(debianPython, "-c", "import pandas").CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "%s has no pandas (apt-get install python3-pandas): %v %s", debianPython, err, out)
	}
	sim := simPreset(t, "incast-small-roce")
	dir := t.TempDir()
	r := filepath.Join(sim, "r.pcapng")
	for _, ext := range []string{".csv", ".jsonl"} {
		runOK(t, "export", r, "-o", filepath.Join(dir, "packets"+ext))
		runOK(t, "correlate", r, "--telemetry", filepath.Join(sim, "perfquery.txt"), "-o", filepath.Join(dir, "joined"+ext))
	}
	block := readmePandasLines(t)
	// The README's lines, then what they must have read: the 4104 frames
	// of the receiver's tap, exact 64-bit values and nulls in the CSV.
	packets := block + `
assert len(p) == 4104, len(p)
assert p.ts_ns.iloc[0] == 1433116800000010440, p.ts_ns.iloc[0]
assert p.opcode_name.iloc[0] == "RC_RDMA_WRITE_FIRST"
c = pd.read_csv("packets.csv", skiprows=1, dtype=dtype)
assert len(c) == 4104 and str(c.reth_va.dtype) == "UInt64" and str(c.icrc_ok.dtype) == "boolean", c.dtypes
assert c.reth_va.iloc[0] == p.reth_va.iloc[0] and c.reth_va.isna().sum() == p.reth_va.isna().sum()
assert c.ts_ns.iloc[-1] == p.ts_ns.iloc[-1] and c.src.iloc[0] == "10.0.0.1"
print("ok", pd.__version__)
`
	joined := strings.NewReplacer("packets", "joined", "ts_ns", "start_ns").Replace(block) + `
c = pd.read_csv("joined.csv", skiprows=1, dtype=dtype)
assert len(c) == len(p) > 0, (len(c), len(p))
assert (c.start_ns.values == p.start_ns.values).all() and c.cap_bytes.sum() == p.cap_bytes.sum() > 0
print("ok", len(c))
`
	for name, script := range map[string]string{"export": packets, "correlate": joined} {
		cmd := exec.Command(debianPython, "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "ok ") {
			t.Errorf("%s: %v\n%s\n%s", name, err, script, out)
		} else {
			t.Logf("%s: %s", name, strings.TrimSpace(string(out)))
		}
	}
}

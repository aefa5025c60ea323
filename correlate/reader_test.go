package correlate

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// readerDir holds the independent reader (DuckDB and Arrow JS under node);
// `npm install --no-save` there (what `make deps` runs) installs it.
const readerDir = "testdata/reader"

// readerOutput is what read.mjs prints.
type readerOutput struct {
	Schema []struct {
		Name     string            `json:"name"`
		Type     string            `json:"type"`
		Metadata map[string]string `json:"metadata"` // field metadata (Arrow JS only)
	} `json:"schema"`
	Metadata     map[string]string   `json:"metadata"`
	ParquetTypes map[string]string   `json:"parquet_types"`
	CreatedBy    string              `json:"created_by"` // Parquet footer (DuckDB only)
	Rows         []map[string]string `json:"rows"`
}

// duckTimestamp is how DuckDB types a Parquet INT64 TIMESTAMP(NANOS,
// isAdjustedToUTC=false): to the ns (with the UTC flag it reads
// TIMESTAMPTZ, which holds microseconds).
const duckTimestamp = "TIMESTAMP_NS"

// parquetNanos is what parquet_schema says of a timestamp[ns] column.
const parquetNanos = "INT64 TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MILLIS=<null>, MICROS=<null>, NANOS=NanoSeconds()))"

// checkTimestamps checks that every TIMESTAMP column of a Parquet file is
// stored as ns since the epoch and read by DuckDB as TIMESTAMP_NS, whose
// values (compared row for row with want by the caller) keep every ns.
func (o *readerOutput) checkTimestamps(t testing.TB) {
	t.Helper()
	for _, c := range o.Schema {
		if !strings.HasPrefix(c.Type, "TIMESTAMP") {
			continue
		}
		if c.Type != duckTimestamp {
			t.Errorf("DuckDB reads column %s as %s, want %s", c.Name, c.Type, duckTimestamp)
		}
		if pt := o.ParquetTypes[c.Name]; pt != parquetNanos {
			t.Errorf("column %s stored as %q, want %q", c.Name, pt, parquetNanos)
		}
	}
}

// types maps column name to the type the reader reports.
func (o *readerOutput) types() map[string]string {
	m := make(map[string]string, len(o.Schema))
	for _, c := range o.Schema {
		m[c.Name] = c.Type
	}
	return m
}

// readJob is one file for the independent reader: Kind is "parquet",
// "dataset", "arrow" or "sql" (then SQL is a query over the file as table t).
type readJob struct {
	Kind, Path, SQL string
}

// readBack opens files with the independent reader, all in one node process,
// and returns what it saw of each. It skips the test when node or the
// reader's packages are missing.
func readBack(t testing.TB, jobs ...readJob) []*readerOutput {
	t.Helper()
	node := testenv.MustHaveTool(t, "node")
	if _, err := os.Stat(filepath.Join(readerDir, "node_modules", "@duckdb", "node-api")); err != nil {
		testenv.SkipOrFail(t, "independent reader not installed: run `npm install --no-save` in correlate/%s (or make deps)", readerDir)
	}
	args := make([][]string, len(jobs))
	for i, j := range jobs {
		abs, err := filepath.Abs(j.Path)
		if err != nil {
			t.Fatal(err)
		}
		args[i] = []string{j.Kind, abs}
		if j.SQL != "" {
			args[i] = append(args[i], j.SQL)
		}
	}
	in, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "read.mjs", "batch")
	cmd.Dir = readerDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("independent reader: %v\n%s", err, stderr.String())
	}
	var o []*readerOutput
	if err := json.Unmarshal(out, &o); err != nil || len(o) != len(jobs) {
		t.Fatalf("independent reader: bad output (%d results for %d files): %v", len(o), len(jobs), err)
	}
	return o
}

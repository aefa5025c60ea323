// Package pcapexpect reads, for tests, testdata/pcaps/expect.json: what
// testdata/gen says each generated capture holds. It imports nothing of
// ibscope's, so that decode's own tests, below every reader of captures,
// can use it too.
package pcapexpect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Expectation mirrors testdata/gen's expect.json entry for one file.
type Expectation struct {
	LinkType  int   `json:"link_type"`
	Frames    int   `json:"frames"`
	IBFrames  int   `json:"ib_frames"`
	BadICRC   []int `json:"bad_icrc"`
	BadVCRC   []int `json:"bad_vcrc"`
	Cut       []int `json:"cut"`
	NotIB     []int `json:"not_ib"`
	UDPLowSrc []int `json:"udp_low_src"`
}

// Load reads dir/expect.json, by file name; a missing or bad file fails
// the test.
func Load(t testing.TB, dir string) map[string]Expectation {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatalf("read expect.json (regenerate with go run ./testdata/gen): %v", err)
	}
	m := map[string]Expectation{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", filepath.Join(dir, "expect.json"), err)
	}
	return m
}

// Names lists the generated captures dir/expect.json describes, sorted.
func Names(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	for name := range Load(t, dir) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// TestRotatedLargeSetSameAsWhole: flows and ipd give the same report for
// a capture and for its records cut in four files over the read buffer,
// given out of order, at one core and at two: the merge takes each file
// in turn by its fast paths, reads a file ahead only once its first frame
// is handed out, and gives a file's read buffer and batches to the next
// one's at its end (capfile: Stream.take, Stream.attach, Reader.letGo).
func TestRotatedLargeSetSameAsWhole(t *testing.T) {
	a := testcap.Stream(12000, 1, 2, 7, 0, 200, testcap.BaseNs, func(i int) int64 { return int64(900 + 37*(i%11)) })
	b := testcap.Stream(12000, 3, 4, 9, 100, 180, testcap.BaseNs+450, func(i int) int64 { return int64(1000 + 53*(i%7)) })
	pkts := append(a, b...)
	slices.SortStableFunc(pkts, func(x, y testcap.Packet) int { return int(x.TsNs - y.TsNs) })
	whole := testcap.Write(t, "whole.pcap", false, pkts)
	parts := cutPcap(t, whole, 4)
	for _, p := range parts {
		if st, err := os.Stat(p); err != nil || st.Size() <= 1<<20+64<<10 {
			t.Fatalf("%s: %v, want a file over the read buffer", p, err)
		}
	}
	given := []string{parts[2], parts[0], parts[3], parts[1]}
	files := regexp.MustCompile(`"files": \[[^\]]*\]`)
	for _, cmd := range []string{"flows", "ipd"} {
		want := files.ReplaceAllString(runOK(t, cmd, "--json", "-j", "1", whole), `"files": []`)
		for _, j := range []string{"1", "2"} {
			got := files.ReplaceAllString(runOK(t, append([]string{cmd, "--json", "-j", j}, given...)...), `"files": []`)
			if got != want {
				t.Errorf("%s -j %s on four files: another report than the whole capture's:\n%.800s\nwant\n%.800s", cmd, j, got, want)
			}
		}
	}
}

// cutPcap writes the records of the pcap at path into n files, in order,
// as a rotated capture would be.
func cutPcap(t *testing.T, path string, n int) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	for off := 24; off < len(b); off += 16 + int(binary.LittleEndian.Uint32(b[off+8:])) {
		offs = append(offs, off)
	}
	dir := t.TempDir()
	var out []string
	for i := range n {
		from, to := offs[i*len(offs)/n], len(b)
		if i+1 < n {
			to = offs[(i+1)*len(offs)/n]
		}
		p := filepath.Join(dir, fmt.Sprintf("cap-%d.pcap", i))
		if err := os.WriteFile(p, append(bytes.Clone(b[:24]), b[from:to]...), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

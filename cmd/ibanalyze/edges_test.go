package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
)

func TestParseEdges(t *testing.T) {
	for _, bad := range []string{"1us", "0,1us,1us", "2us,1us", "0,x", "0,-1us", "", strings.Repeat("1,", analyze.MaxBins+1) + "1"} {
		if _, err := parseEdges(bad); err == nil {
			t.Errorf("edges %.40q accepted", bad)
		}
	}
	if e, err := parseEdges("0, 1us,2.5us,1ms"); err != nil || !slices.Equal(e, []int64{0, 1000, 2500, 1_000_000}) {
		t.Errorf("edges: %v %v", e, err)
	}
}

// FuzzParseEdges: edges that parse make a histogram that counts.
func FuzzParseEdges(f *testing.F) {
	for _, s := range []string{"0,1us,2us", "1ms,2ms", "0,,1", "-1,2", "1e3us,1e9s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		edges, err := parseEdges(s)
		if err != nil {
			return
		}
		h, err := analyze.NewHistogram(analyze.HistSpec{Mode: analyze.ModeEdges, EdgesNs: edges})
		if err != nil {
			t.Fatalf("edges %v parsed but make no histogram: %v", edges, err)
		}
		h.Add(edges[0])
		h.Add(edges[len(edges)-1])
		if h.Total() != 2 || h.Above != 1 {
			t.Fatalf("edges %v: total %d above %d", edges, h.Total(), h.Above)
		}
	})
}

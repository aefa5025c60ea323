package main

import (
	"fmt"
	"strings"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/internal/units"
)

// parseEdges reads ipd's --edges, "0,1us,2us,4us", into ascending bin edges
// in ns: at least two, at most analyze.MaxBins+1.
func parseEdges(s string) ([]int64, error) {
	var edges []int64
	for i, f := range strings.Split(s, ",") {
		if i > analyze.MaxBins {
			return nil, fmt.Errorf("more than %d bin edges", analyze.MaxBins+1)
		}
		v, err := units.ParseDurationNs(f)
		if err != nil {
			return nil, fmt.Errorf("bin edge %d: %w", i+1, err)
		}
		if v < 0 {
			return nil, fmt.Errorf("bin edge %d (%s) is negative", i+1, strings.TrimSpace(f))
		}
		if i > 0 && v <= edges[i-1] {
			return nil, fmt.Errorf("bin edges must increase: edge %d (%s) is not above %s", i+1, strings.TrimSpace(f), units.FormatNs(edges[i-1]))
		}
		edges = append(edges, v)
	}
	if len(edges) < 2 {
		return nil, fmt.Errorf("bin edges %q: need at least two edges to make a bin", s)
	}
	return edges, nil
}

package main

import "github.com/ibscope/ibscope/internal/plots"

// checkPlot refuses a --plot file name no picture can be drawn to before
// any work is done; "" (no --plot) passes.
func checkPlot(path string) error {
	if path == "" {
		return nil
	}
	return plots.CheckPath(path)
}

// Package plots draws ibanalyze's figures with gonum/plot: histograms as
// step lines and time series as lines, with time axes labelled in the unit
// their span reads best in, written to .png, .svg or .pdf by the
// output-file rule. It knows nothing of the analyses: the commands hand it
// edges, counts and points.
package plots

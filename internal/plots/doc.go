// Package plots draws ibanalyze's figures with gonum/plot: histograms as
// step lines, time series as lines, timelines of named rows of bars and
// shaded spans, in panels stacked over one time axis labelled in the unit
// its span reads best in, written to .png, .svg or .pdf by the output-file
// rule. Every picture is 8 inches wide and as tall as its panels and
// legend need: the legend sits below the panels, in columns, its names
// cut in the middle if one would pass the edge, so nothing is drawn
// outside the picture or over the data. It knows nothing of the analyses:
// the commands hand it names, edges, counts, points and spans.
package plots

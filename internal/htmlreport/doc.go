// Package htmlreport writes ibanalyze's report: one self-contained HTML
// page of sections, each with notes, preformatted tables and PNG pictures
// inlined as data: URIs. The page fetches nothing (its Content Security
// Policy allows no source but data: images and its own style), holds no
// script, and lays out for any window width: pictures scale down to it
// and wide table lines wrap rather than run past the edge. It knows
// nothing of the analyses: the command hands it text and pictures.
package htmlreport

// Package htmlreport writes ibanalyze's report: one self-contained HTML
// page of sections, each with notes, preformatted tables and PNG pictures
// inlined as data: URIs. The page fetches nothing (its Content Security
// Policy allows no source but data: images and its own style), holds no
// script, and lays out for windows from 800 pixels wide: pictures scale
// down to the window and wide text lines wrap rather than run past its
// edge. It knows
// nothing of the analyses: the command hands it text and pictures.
package htmlreport

package htmlreport

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
)

// Report is the page: a title, lines that say what it was made from, a
// table of facts, and the sections, each listed in the contents.
type Report struct {
	Title    string
	Subtitle []string
	Facts    Table
	Sections []Section
}

// Table is a table of strings: a header row and rows of the same width.
type Table struct {
	Header []string
	Rows   [][]string
}

// Section is one part of the page: a capture's analyses, or one analysis.
type Section struct {
	Title string
	// Level 2 sections appear in the contents; level 3 are their parts.
	Level    int
	Notes    []string // plain sentences: what applies, why something is missing
	Warnings []string // what the analysis warned about
	Error    string   // why the analysis failed, if it did
	Text     string   // its text output (tables), shown as is
	Pictures []Picture
}

// Picture is a PNG image with the text that stands for it.
type Picture struct {
	Alt string
	PNG []byte
}

// id is the section's anchor.
func (s Section) id(i int) string { return fmt.Sprintf("s%d", i+1) }

type sectionView struct {
	Section
	ID       string
	Pictures []pictureView
}

type pictureView struct {
	Alt string
	Src template.URL
}

// Write writes r as one HTML page to w.
func Write(w io.Writer, r Report) error {
	view := struct {
		Report
		Sections []sectionView
	}{Report: r}
	for i, s := range r.Sections {
		sv := sectionView{Section: s, ID: s.id(i)}
		if sv.Level != 3 {
			sv.Level = 2
		}
		for _, p := range s.Pictures {
			// A data: URI of a PNG the command drew: nothing to escape.
			src := template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))
			sv.Pictures = append(sv.Pictures, pictureView{Alt: p.Alt, Src: src})
		}
		view.Sections = append(view.Sections, sv)
	}
	if err := page().Execute(w, view); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// contentPolicy lets the page load nothing but its own style and data:
// images: a report opened anywhere makes no request.
const contentPolicy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

// page is the page's template, parsed on first use rather than as the
// package initializes: every ibanalyze command links this package, one
// writes a report.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"policy": func() string { return contentPolicy },
		"join":   strings.Join,
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{policy}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
html { -webkit-text-size-adjust: 100%; }
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; margin: 0 auto; padding: 1em; max-width: 1200px; color: #222; line-height: 1.4; }
h1, h2, h3, p, li { overflow-wrap: anywhere; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
.sub { color: #555; margin: 0.1em 0; overflow-wrap: anywhere; }
nav ul { padding-left: 1.2em; }
table { border-collapse: collapse; margin: 0.8em 0; max-width: 100%; font-size: 0.85em; }
@media (max-width: 700px) { table, pre { font-size: 0.75em; } body { padding: 0.5em; } }
th, td { border: 1px solid #ccc; padding: 0.2em 0.4em; text-align: right; }
th:first-child, td:first-child { text-align: left; overflow-wrap: break-word; }
pre { font-size: 12px; background: #f7f7f7; padding: 0.6em; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 100%; box-sizing: border-box; }
img { display: block; max-width: 100%; height: auto; margin: 0.8em 0; border: 1px solid #eee; }
.warn { color: #8a5a00; }
.error { color: #b00020; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Subtitle}}<p class="sub">{{.}}</p>
{{end}}
{{if .Facts.Header}}<table>
<tr>{{range .Facts.Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Facts.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}
<nav><ul>
{{range .Sections}}{{if eq .Level 2}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}{{end}}</ul></nav>
{{range .Sections}}
{{if eq .Level 2}}<h2 id="{{.ID}}">{{.Title}}</h2>{{else}}<h3 id="{{.ID}}">{{.Title}}</h3>{{end}}
{{range .Notes}}<p>{{.}}</p>
{{end}}{{if .Error}}<p class="error">{{.Error}}</p>
{{end}}{{if .Warnings}}<ul class="warn">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Text}}<pre>{{.Text}}</pre>
{{end}}{{range .Pictures}}<img src="{{.Src}}" alt="{{.Alt}}">
{{end}}{{end}}
</body>
</html>
`))
})

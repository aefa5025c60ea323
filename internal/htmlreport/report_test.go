package htmlreport

import (
	"strings"
	"testing"
)

// TestWriteEscapesAndInlines: text from captures (file names, analysis
// output) is escaped, never markup; pictures are data: URIs; the page
// carries its content policy and no script.
func TestWriteEscapesAndInlines(t *testing.T) {
	var b strings.Builder
	err := Write(&b, Report{Title: "report <b>x</b>", Facts: Table{Header: []string{"capture"}, Rows: [][]string{{"a&b.pcap"}}},
		Sections: []Section{{Title: `cap "<script>alert(1)</script>"`, Level: 2, Text: "flow\t<1>", Warnings: []string{"w<"},
			Pictures: []Picture{{Alt: "p", PNG: []byte{0x89, 'P', 'N', 'G'}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"report &lt;b&gt;x&lt;/b&gt;", "a&amp;b.pcap", "&lt;script&gt;alert(1)&lt;/script&gt;", "flow\t&lt;1&gt;", "w&lt;",
		`src="data:image/png;base64,iVBORw=="`, `http-equiv="Content-Security-Policy"`, `href="#s1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("page holds a script element")
	}
}

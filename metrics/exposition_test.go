package metrics

import (
	"compress/gzip"
	"io"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/ibscope/ibscope/decode"
)

// TestExpositionMatchesRegistry: what the handler writes itself parses
// back to exactly the families the registry gathers (every series, its
// labels and value; flow="other" and escaped label values included),
// plain and gzipped.
func TestExpositionMatchesRegistry(t *testing.T) {
	src := flowFrames(t, 30, 3)
	l, err := New(Config{Device: `mem"0\`, LinkType: decode.LinkTypeEthernet, TopFlows: 10})
	if err != nil {
		t.Fatal(err)
	}
	l.Finish(runCapture(t, l, src))
	want := gather(t, l)
	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		l.Handler().ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("gzip %v: Content-Type %q", gz, ct)
		}
		var body io.Reader = rec.Body
		if gz {
			if rec.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("gzip asked for, Content-Encoding %q", rec.Header().Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		got, err := parser.TextToMetricFamilies(body)
		if err != nil {
			t.Fatalf("gzip %v: the exposition does not parse: %v", gz, err)
		}
		if len(got) != len(want) {
			t.Errorf("gzip %v: %d families, the registry has %d", gz, len(got), len(want))
		}
		for name, w := range want {
			g := got[name]
			if g == nil {
				t.Errorf("gzip %v: %s missing", gz, name)
				continue
			}
			if len(g.GetMetric()) != len(w.GetMetric()) {
				t.Errorf("gzip %v: %s: %d series, the registry has %d", gz, name, len(g.GetMetric()), len(w.GetMetric()))
				continue
			}
			for i := range w.GetMetric() {
				// The text format carries no created timestamps.
				wm := proto.Clone(w.GetMetric()[i]).(*dto.Metric)
				if c := wm.GetCounter(); c != nil {
					c.CreatedTimestamp = nil
				}
				if h := wm.GetHistogram(); h != nil {
					h.CreatedTimestamp = nil
				}
				if h := g.GetMetric()[i].GetHistogram(); h != nil && len(h.Bucket) > 0 && math.IsInf(h.Bucket[len(h.Bucket)-1].GetUpperBound(), 1) {
					h.Bucket = h.Bucket[:len(h.Bucket)-1] // the text format's explicit +Inf bucket
				}
				if !proto.Equal(g.GetMetric()[i], wm) {
					t.Errorf("gzip %v: %s series %d:\n%v\nthe registry's:\n%v", gz, name, i, g.GetMetric()[i], wm)
				}
			}
		}
	}
	if n := len(want["ibscope_flow_bytes_total"].GetMetric()); n != 11 {
		t.Errorf("%d flow series, want 10 and other", n)
	}
}

package metrics

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// The handler writes the text exposition format itself: the per-flow
// series straight from the served flows' counts and label text, the few
// dozen other series through the registry. Through the registry, each of
// 7,000 flow series of a scrape of 1,000 flows became a dto.Metric,
// sorted, then written field by field: 8 ms of a scrape's 8.5.

// textContentType is the text format's, version 0.0.4, which Prometheus
// takes whatever else its Accept header prefers.
var textContentType = string(expfmt.NewFormat(expfmt.TypeTextPlain))

// exposition pools the buffers a scrape writes into.
var expositionBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipWriters pools gzip writers at BestSpeed: 900 KB of text (1,000 flows
// served) compress in about 4 ms at it, 12 ms at the default level, to a
// size Prometheus fetches in well under that.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// serveMetrics answers a scrape: every series in the text format, gzipped
// when the scraper accepts it.
func (l *Live) serveMetrics(w http.ResponseWriter, r *http.Request) {
	buf := expositionBufs.Get().(*bytes.Buffer)
	defer expositionBufs.Put(buf)
	buf.Reset()
	// A collector's error still serves the rest, as promhttp's
	// ContinueOnError does: Prometheus takes what parses.
	mfs, _ := l.baseReg.Gather()
	enc := expfmt.NewEncoder(buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		enc.Encode(mf) // a bytes.Buffer takes every write
	}
	served := l.servedFlows()
	// Room for the flow series first, so that they are appended in place
	// (the pooled buffer keeps it from scrape to scrape).
	n := 0
	for i := range served {
		n += len(served[i].labels.text)
	}
	buf.Grow(len(flowFamilies) * (n + len(served)*maxSeriesOverhead + 256))
	buf.Write(appendFlowFamilies(buf.AvailableBuffer(), served))
	h := w.Header()
	h.Set("Content-Type", textContentType)
	if !acceptsGzip(r) {
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		w.Write(buf.Bytes())
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(w)
	gz.Write(buf.Bytes())
	gz.Close()
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip
// (without q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.TrimSpace(coding) == "gzip" && strings.ReplaceAll(params, " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
}

// maxSeriesOverhead bounds what a flow series line adds to its label
// text: the longest family name, braces, a space, the value and a newline.
const maxSeriesOverhead = len("ibscope_flow_retransmissions_total") + 4 + 24

// appendFlowFamilies appends the seven per-flow families of served in the
// text format, as expfmt writes them.
func appendFlowFamilies(b []byte, served []servedFlow) []byte {
	if len(served) == 0 {
		return b
	}
	for i := range flowFamilies {
		fam := &flowFamilies[i]
		b = append(b, "# HELP "...)
		b = append(b, fam.name...)
		b = append(b, ' ')
		b = appendHelp(b, fam.help)
		b = append(b, "\n# TYPE "...)
		b = append(b, fam.name...)
		b = append(b, " counter\n"...)
		for j := range served {
			f := &served[j]
			b = append(b, fam.name...)
			b = append(b, '{')
			b = append(b, f.labels.text...)
			b = append(b, '}', ' ')
			b = strconv.AppendFloat(b, float64(fam.count(f.counts)), 'g', -1, 64)
			b = append(b, '\n')
		}
	}
	return b
}

// appendHelp appends a HELP text escaped as the text format wants (\\ and
// \n).
func appendHelp(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendLabelValue appends a label value escaped as the text format wants
// (\\, \" and \n).
func appendLabelValue(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// registries returns the registry of every series (Registry) and the one
// of all but the per-flow series, which the handler writes itself.
func (l *Live) registries() (all, base *prometheus.Registry) {
	all, base = prometheus.NewRegistry(), prometheus.NewRegistry()
	all.MustRegister(l, flowSeries{l})
	base.MustRegister(l)
	return all, base
}

package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ibscope/ibscope/internal/termtext"
)

// Bounds of what one query's reply may bring: a reply is read as it
// arrives, series by series, and never past them, so that a huge or
// hostile reply (200 MB, a million series) is an error naming the bound
// instead of an out-of-memory crash.
const (
	DefaultMaxReplyBytes = 64 << 20 // far beyond a fleet of thousands of agents (a series is ~300 bytes)
	DefaultMaxSeries     = 100_000
	MaxMaxReplyBytes     = 16 << 30
	MaxMaxSeries         = 10_000_000
)

// errBound is returned by the reader of a reply past its byte bound.
var errBound = errors.New("reply too large")

// boundedReader reads r but fails with errBound past n bytes, instead of
// the io.EOF of io.LimitReader, which would read as a cut reply.
type boundedReader struct {
	r io.Reader
	n int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, errBound
		}
		return b.r.Read(p) // io.EOF, or the body's own error
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

// eachSample runs an instant query and calls fn with each sample of the
// vector it returns, as the reply is decoded: the reply is never held
// whole. It fails past c.MaxReplyBytes or c.MaxSeries, naming the bound.
func (c *Client) eachSample(ctx context.Context, query string, at time.Time, fn func(*model.Sample)) error {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	q := url.Values{"query": {query}}
	if !at.IsZero() {
		q.Set("time", at.Format(time.RFC3339Nano))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/api/v1/query?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("prometheus at %s: %w", c.url, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// A refused connection, an unknown host, a timeout: say it
			// on one line without the request's method and path.
			return fmt.Errorf("cannot reach Prometheus at %s: %w", c.url, ue.Err)
		}
		return fmt.Errorf("cannot reach Prometheus at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	body := &boundedReader{r: resp.Body, n: c.MaxReplyBytes}
	_, err = decodeReply(json.NewDecoder(body), c.MaxSeries, fn)
	switch {
	case errors.Is(err, errBound):
		return fmt.Errorf("prometheus at %s: query %s: the reply is larger than %d MB (--max-reply-mb); raise --max-reply-mb, or narrow the query", c.url, query, c.MaxReplyBytes>>20)
	case errors.Is(err, errTooManySeries):
		return fmt.Errorf("prometheus at %s: query %s: the reply holds more than %d series (--max-series); raise --max-series", c.url, query, c.MaxSeries)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("prometheus at %s: query %s: no whole reply within %v", c.url, query, queryTimeout)
	case errors.As(err, new(*replyError)):
		return fmt.Errorf("prometheus at %s: query %s: %w", c.url, query, err)
	case err != nil && resp.StatusCode/100 != 2:
		return fmt.Errorf("prometheus at %s: query %s: HTTP %s", c.url, query, resp.Status)
	case err != nil:
		return fmt.Errorf("prometheus at %s: query %s: %w", c.url, query, err)
	}
	return nil
}

var errTooManySeries = errors.New("too many series")

// replyError is the error Prometheus' API reports in its reply.
type replyError struct{ kind, msg string }

func (e *replyError) Error() string {
	// The server's words, escaped: they end on a terminal.
	return termtext.Escape(strings.TrimSpace(e.kind + ": " + e.msg))
}

// decodeReply walks the API's reply, {"status": ..., "data": {"resultType":
// "vector", "result": [SAMPLE, ...]}, "error": ...}, token by token and
// hands each sample of the result to fn, at most maxSeries of them. It
// returns how many it handed.
func decodeReply(dec *json.Decoder, maxSeries int, fn func(*model.Sample)) (int, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return 0, err
	}
	var status, kind, msg string
	n := 0
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return n, err
		}
		switch key {
		case "status":
			err = dec.Decode(&status)
		case "errorType":
			err = dec.Decode(&kind)
		case "error":
			err = dec.Decode(&msg)
		case "data":
			n, err = decodeData(dec, maxSeries, fn)
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return n, err
		}
	}
	if status != "success" {
		if kind == "" && msg == "" {
			return n, fmt.Errorf("not a Prometheus API reply (status %q)", status)
		}
		return n, &replyError{kind, msg}
	}
	return n, nil
}

// decodeData reads the reply's data object: its result must be a vector.
func decodeData(dec *json.Decoder, maxSeries int, fn func(*model.Sample)) (int, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return 0, err
	}
	n := 0
	resultType := ""
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return n, err
		}
		switch key {
		case "resultType":
			if err := dec.Decode(&resultType); err != nil {
				return n, err
			}
			if resultType != model.ValVector.String() {
				return n, fmt.Errorf("a %q result, not a vector", resultType)
			}
		case "result":
			// Prometheus writes resultType first; a result before it is
			// decoded as samples all the same, and refused below if it
			// was not a vector.
			if err := expectDelim(dec, '['); err != nil {
				return n, err
			}
			for dec.More() {
				if n == maxSeries {
					return n, errTooManySeries
				}
				var s model.Sample
				if err := dec.Decode(&s); err != nil {
					return n, err
				}
				fn(&s)
				n++
			}
			if err := expectDelim(dec, ']'); err != nil {
				return n, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return n, err
			}
		}
	}
	if resultType != model.ValVector.String() {
		return n, fmt.Errorf("a %q result, not a vector", resultType)
	}
	return n, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, got %v", d, tok)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want an object key, got %v", tok)
	}
	return key, nil
}

// skipValue reads past one value token by token, holding none of it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

package fleet

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// DefaultURL is where a Prometheus server listens on its own host.
const DefaultURL = "http://127.0.0.1:9090"

// Defaults and bounds of Options.
const (
	DefaultRange    = time.Minute
	DefaultLookback = time.Hour
	MinRange        = time.Second
	MaxRange        = 7 * 24 * time.Hour
	// queryTimeout bounds each query, so an unanswering server is an
	// error, not a hang.
	queryTimeout = 30 * time.Second
)

// Options say which time a view covers.
type Options struct {
	// Range is what rates and counts are taken over (DefaultRange), as in a
	// PromQL range vector; it needs at least two scrapes.
	Range time.Duration
	// Lookback is how far back an agent that went away is still listed
	// (DefaultLookback).
	Lookback time.Duration
	// At is the evaluation time; zero is the server's now.
	At time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.Range == 0 {
		o.Range = DefaultRange
	}
	if o.Lookback == 0 {
		o.Lookback = DefaultLookback
	}
	if o.Range < MinRange || o.Range > MaxRange {
		return o, fmt.Errorf("range %v: want %v to %v", o.Range, MinRange, MaxRange)
	}
	if o.Lookback < o.Range || o.Lookback > MaxRange {
		return o, fmt.Errorf("lookback %v: want the range (%v) up to %v", o.Lookback, o.Range, MaxRange)
	}
	return o, nil
}

// Client queries one Prometheus server.
type Client struct {
	url  string
	http *http.Client
	// MaxReplyBytes and MaxSeries bound each query's reply
	// (DefaultMaxReplyBytes, DefaultMaxSeries).
	MaxReplyBytes int64
	MaxSeries     int
}

// NewClient checks address (http or https, with a host) and returns a
// client of the server there; it does not connect yet.
func NewClient(address string) (*Client, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want http://HOST:PORT, e.g. %s", address, DefaultURL)
	}
	return &Client{url: strings.TrimSuffix(address, "/"), http: &http.Client{}, MaxReplyBytes: DefaultMaxReplyBytes, MaxSeries: DefaultMaxSeries}, nil
}

// vector runs an instant query whose result is a vector, at most
// c.MaxSeries samples.
func (c *Client) vector(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	var vec model.Vector
	err := c.eachSample(ctx, query, at, func(s *model.Sample) { vec = append(vec, s) })
	return vec, err
}

// agentKey is one scraped target.
type agentKey struct{ job, instance string }

func keyOf(m model.Metric) agentKey {
	return agentKey{job: string(m["job"]), instance: string(m["instance"])}
}

// byAgent runs a query summed by (job, instance) and returns its values by
// agent.
func (c *Client) byAgent(ctx context.Context, query string, at time.Time) (map[agentKey]float64, error) {
	m := map[agentKey]float64{}
	err := c.eachSample(ctx, query, at, func(s *model.Sample) { m[keyOf(s.Metric)] += float64(s.Value) })
	if err != nil {
		return nil, err
	}
	return m, nil
}

// rng is a PromQL range of d, in whole milliseconds.
func rng(d time.Duration) string { return fmt.Sprintf("[%dms]", d.Milliseconds()) }

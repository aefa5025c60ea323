package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
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
	url string
	api v1.API
}

// NewClient checks address (http or https, with a host) and returns a
// client of the server there; it does not connect yet.
func NewClient(address string) (*Client, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want http://HOST:PORT, e.g. %s", address, DefaultURL)
	}
	c, err := api.NewClient(api.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("prometheus URL %q: %w", address, err)
	}
	return &Client{url: address, api: v1.NewAPI(c)}, nil
}

// vector runs an instant query whose result is a vector.
func (c *Client) vector(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, _, _, err := c.api.Query(ctx, query, at)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// A refused connection, an unknown host, a timeout: say it
			// on one line without the request's method and path.
			return nil, fmt.Errorf("cannot reach Prometheus at %s: %w", c.url, ue.Err)
		}
		return nil, fmt.Errorf("prometheus at %s: query %s: %w", c.url, query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus at %s: query %s: a %s, not a vector", c.url, query, v.Type())
	}
	return vec, nil
}

// agentKey is one scraped target.
type agentKey struct{ job, instance string }

func keyOf(m model.Metric) agentKey {
	return agentKey{job: string(m["job"]), instance: string(m["instance"])}
}

// byAgent runs a query summed by (job, instance) and returns its values by
// agent.
func (c *Client) byAgent(ctx context.Context, query string, at time.Time) (map[agentKey]float64, error) {
	vec, err := c.vector(ctx, query, at)
	if err != nil {
		return nil, err
	}
	m := make(map[agentKey]float64, len(vec))
	for _, s := range vec {
		m[keyOf(s.Metric)] += float64(s.Value)
	}
	return m, nil
}

// rng is a PromQL range of d, in whole milliseconds.
func rng(d time.Duration) string { return fmt.Sprintf("[%dms]", d.Milliseconds()) }

package fleet

import (
	"cmp"
	"context"
	"slices"
)

// State is an agent's state (see the package comment for the rule).
type State string

const (
	Alive   State = "alive"
	Stale   State = "stale"
	Stopped State = "stopped"
)

// Agent is one ibcap --metrics that Prometheus scraped.
type Agent struct {
	Job      string `json:"job"`
	Instance string `json:"instance"`
	Host     string `json:"host"`
	Device   string `json:"device"`         // what ibcap captures (-i)
	Port     string `json:"port,omitempty"` // its RDMA port, DEVICE:N
	Version  string `json:"version"`
	State    State  `json:"state"`
	// ElapsedSeconds is how long the capture had run at its newest sample.
	ElapsedSeconds float64 `json:"elapsed_s"`
}

// Name is the agent's host and device as tables write them.
func (a *Agent) Name() string { return a.Host + "/" + a.Device }

// agents lists the agents seen within the lookback, classified, sorted by
// host, device and instance.
func (c *Client) agents(ctx context.Context, o Options) ([]Agent, error) {
	info, err := c.vector(ctx, "last_over_time(ibscope_capture_info"+rng(o.Lookback)+")", o.At)
	if err != nil {
		return nil, err
	}
	current, err := c.byAgent(ctx, "ibscope_capture_info", o.At)
	if err != nil {
		return nil, err
	}
	stopped, err := c.byAgent(ctx, "last_over_time(ibscope_capture_stopped"+rng(o.Lookback)+")", o.At)
	if err != nil {
		return nil, err
	}
	elapsed, err := c.byAgent(ctx, "last_over_time(ibscope_capture_elapsed_seconds"+rng(o.Lookback)+")", o.At)
	if err != nil {
		return nil, err
	}
	var out []Agent
	seen := map[agentKey]bool{}
	for _, s := range info {
		k := keyOf(s.Metric)
		if seen[k] { // an agent whose labels changed (a restart with a new version): its newest
			continue
		}
		seen[k] = true
		a := Agent{Job: k.job, Instance: k.instance, Host: string(s.Metric["host"]), Device: string(s.Metric["device"]),
			Port: string(s.Metric["port"]), Version: string(s.Metric["version"]), ElapsedSeconds: elapsed[k]}
		_, now := current[k]
		a.State = classify(now, stopped[k] == 1)
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Agent) int {
		return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Device, b.Device), cmp.Compare(a.Instance, b.Instance))
	})
	return out, nil
}

// classify is the staleness rule: a graceful stop wins, then a current
// sample means alive; an agent with neither went away without saying so.
func classify(current, stopped bool) State {
	switch {
	case stopped:
		return Stopped
	case current:
		return Alive
	}
	return Stale
}

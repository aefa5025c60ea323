package metrics

import "github.com/ibscope/ibscope/capture"

// SeriesNames are the names of the series ibcap --metrics serves, the
// per-flow ones (which appear with a capture's first packet) and the RDMA
// port's counters (with a capture that has one) included:
// what the Grafana dashboard and ibanalyze's fleet view may query, so that
// their tests fail on a name one side renamed.
func SeriesNames() (map[string]bool, error) {
	l, err := New(Config{Host: "h", Device: "d", Netdev: "lo"})
	if err != nil {
		return nil, err
	}
	l.Finish(capture.Report{Stats: capture.Stats{DeviceDropsKnown: true, RingSlots: 1}})
	mfs, err := l.Registry().Gather()
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, f := range mfs {
		names[f.GetName()] = true
	}
	for _, f := range flowFamilies {
		names[f.name] = true
	}
	for sysfs := range nicCounters { // served with a capture's RDMA port
		names[nicSeries(sysfs)] = true
	}
	return names, nil
}

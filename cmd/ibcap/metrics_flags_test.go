package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/analyze"
)

// TestMetricsFlagsChecked: each --metrics-* mistake is refused before the
// capture opens, naming the flag.
func TestMetricsFlagsChecked(t *testing.T) {
	ok := metricsFlags{addr: "127.0.0.1:9464", flows: 100, linger: 5 * time.Second}
	if err := ok.check(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for _, c := range []struct {
		edit func(*metricsFlags)
		want string
	}{
		{func(m *metricsFlags) { m.addr = "9464" }, "--metrics"},
		{func(m *metricsFlags) { m.flows = 0 }, "--metrics-flows"},
		{func(m *metricsFlags) { m.flows = 10001 }, "--metrics-flows"},
		{func(m *metricsFlags) { m.linger = -time.Second }, "--metrics-linger"},
		{func(m *metricsFlags) { m.samplePps = -1 }, "--metrics-sample-pps"},
		{func(m *metricsFlags) { m.ipdBin = "-1us" }, "--metrics-ipd-bin"},
		{func(m *metricsFlags) { m.ipdBins = 100000 }, "--metrics-ipd"},
		{func(m *metricsFlags) { m.ipdEdges = "1us,x" }, "--metrics-ipd-edges"},
		{func(m *metricsFlags) { m.ipdEdges = "2us,1us" }, "--metrics-ipd"},
		{func(m *metricsFlags) { m.ipdEdges, m.ipdExp = "1us,2us", true }, "--metrics-ipd-edges"},
	} {
		m := ok
		c.edit(&m)
		if err := m.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", m, err, c.want)
		}
	}
	m := ok
	m.ipdBin, m.ipdBins = "1us", 10
	if h, err := m.ipdSpec(); err != nil || h.Mode != analyze.ModeLinear || h.BinNs != 1000 || h.Bins != 10 {
		t.Errorf("--metrics-ipd-bin 1us --metrics-ipd-bins 10: %+v, %v", h, err)
	}
	m.ipdExp = true
	if h, _ := m.ipdSpec(); h.Mode != analyze.ModeExp {
		t.Errorf("--metrics-ipd-exp: mode %s", h.Mode)
	}
}

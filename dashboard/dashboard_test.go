package dashboard

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	sdk "github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/ibscope/ibscope/metrics"
)

// TestDashboardJSON: the JSON reads back as a Grafana dashboard (the
// SDK's own types), every panel has an id of its own, the dashboard's
// Prometheus variable as data source and a query, and every ibscope_*
// series a query names is one package metrics serves, so a rename on one
// side fails here (the fleet test runs the queries against Prometheus).
func TestDashboardJSON(t *testing.T) {
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	plugins.RegisterDefaultPlugins()
	//lint:ignore SA1019 the schema the package writes (dashboard.go)
	var d sdk.Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the JSON does not read back: %v", err)
	}
	if d.Uid == nil || *d.Uid != UID {
		t.Errorf("uid %v, want %s", d.Uid, UID)
	}
	served, err := metrics.SeriesNames()
	if err != nil {
		t.Fatal(err)
	}
	seriesName := regexp.MustCompile(`\b(ibscope|node_infiniband)_[a-z0-9_]+\b`)
	ids := map[uint32]bool{}
	panels := 0
	for _, pr := range d.Panels {
		if r := pr.RowPanel; r != nil {
			if ids[r.Id] {
				t.Errorf("row %v: id %d twice", r.Title, r.Id)
			}
			ids[r.Id] = true
			continue
		}
		p := pr.Panel
		panels++
		title := ""
		if p.Title != nil {
			title = *p.Title
		}
		if p.Id == nil || ids[*p.Id] {
			t.Errorf("panel %q: id %v missing or twice", title, p.Id)
		} else {
			ids[*p.Id] = true
		}
		if p.Datasource == nil || p.Datasource.Uid == nil || *p.Datasource.Uid != "${datasource}" {
			t.Errorf("panel %q: data source %+v, want the datasource variable", title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", title)
		}
		raw, _ := json.Marshal(p.Targets)
		var targets []struct{ Expr string }
		json.Unmarshal(raw, &targets)
		for _, q := range targets {
			for _, n := range seriesName.FindAllString(q.Expr, -1) {
				if !served[strings.TrimSuffix(n, "_bucket")] {
					t.Errorf("panel %q queries %s, which metrics does not serve", title, n)
				}
			}
		}
	}
	if panels < 10 {
		t.Errorf("%d panels", panels)
	}
}

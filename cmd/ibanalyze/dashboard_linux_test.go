package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/dashboard"
)

// The dashboard's placeholders as Grafana fills them in: every host and
// device picked, and a rate interval of several scrapes (the fleet test
// scrapes every second).
var dashboardVars = strings.NewReplacer("$__rate_interval", "10s", "$host", ".*", "$device", ".*")

// optionalLabels are labels a panel shows that a capture may leave empty,
// which Prometheus then drops: port, the RDMA port, on a netdev capture
// without one (the fleet test's veths).
var optionalLabels = []string{"port"}

var (
	legendLabelRe = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)
	// outerByRe is the outermost aggregation's by (...): the labels the
	// result keeps (an inner by names intermediate labels).
	outerByRe      = regexp.MustCompile(`^(?:topk\(\d+, )?(?:\d+ \* )?(?:sum|max) by \(([^)]*)\)`)
	labelValuesRe  = regexp.MustCompile(`^label_values\((.*), (\w+)\)$`)
	dashboardPanel struct {
		Panels []struct {
			Type, Title string
			Targets     []struct {
				RefID        string `json:"refId"`
				Expr         string `json:"expr"`
				LegendFormat string `json:"legendFormat"`
			}
			Transformations []struct {
				ID      string         `json:"id"`
				Options map[string]any `json:"options"`
			}
		}
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			}
		}
	}
)

// checkDashboard runs every query of the generated Grafana dashboard (its
// variables' label_values and each panel's targets) against the fleet
// test's Prometheus, which scrapes real agents: each must return series,
// and every series the labels the panel uses (its legend's, its outermost
// by()'s, the fields its transformations group by). It returns what it
// checked, for the log.
func checkDashboard(t *testing.T, mon string) []string {
	t.Helper()
	b, err := dashboard.JSON()
	if err != nil {
		t.Fatal(err)
	}
	d := dashboardPanel
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard's JSON: %v", err)
	}
	var checked []string
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValuesRe.FindStringSubmatch(fmt.Sprint(v.Query))
		if m == nil {
			t.Errorf("variable %s: query %v is not label_values(SERIES, LABEL)", v.Name, v.Query)
			continue
		}
		checkQuery(t, mon, "variable "+v.Name, dashboardVars.Replace(m[1]), []string{m[2]})
		checked = append(checked, "variable "+v.Name)
	}
	panels := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		panels++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		var fields []string
		for _, tr := range p.Transformations {
			if tr.ID == "groupingToMatrix" {
				fields = append(fields, fmt.Sprint(tr.Options["rowField"]), fmt.Sprint(tr.Options["columnField"]))
			}
		}
		for _, q := range p.Targets {
			labels := slices.Clone(fields)
			for _, m := range legendLabelRe.FindAllStringSubmatch(q.LegendFormat, -1) {
				labels = append(labels, m[1])
			}
			if m := outerByRe.FindStringSubmatch(q.Expr); m != nil {
				for _, l := range strings.Split(m[1], ",") {
					labels = append(labels, strings.TrimSpace(l))
				}
			}
			slices.Sort(labels)
			labels = slices.Compact(labels)
			what := fmt.Sprintf("panel %q query %s", p.Title, q.RefID)
			checkQuery(t, mon, what, dashboardVars.Replace(q.Expr), labels)
			checked = append(checked, fmt.Sprintf("%s: labels %s", what, strings.Join(labels, ",")))
		}
	}
	if panels < 10 {
		t.Errorf("%d panels in the dashboard, want every one of its views", panels)
	}
	return checked
}

// checkQuery runs an instant query in the monitoring namespace and checks
// that it returns series, each carrying labels (but optionalLabels).
func checkQuery(t *testing.T, mon, what, expr string, labels []string) {
	t.Helper()
	out, err := exec.Command("ip", "netns", "exec", mon, "curl", "-sS", "--max-time", "30", "-G",
		"--data-urlencode", "query="+expr, "http://"+fleetPromAddr+"/api/v1/query").Output()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	var reply struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &reply); err != nil || reply.Status != "success" {
		t.Errorf("%s: Prometheus says %s %s (%v) to\n%s", what, reply.Status, reply.Error, err, expr)
		return
	}
	if len(reply.Data.Result) == 0 {
		t.Errorf("%s returns no series:\n%s", what, expr)
		return
	}
	for _, s := range reply.Data.Result {
		for _, l := range labels {
			if _, ok := s.Metric[l]; !ok && !slices.Contains(optionalLabels, l) {
				t.Errorf("%s: a series without label %s: %v\n%s", what, l, s.Metric, expr)
			}
		}
	}
}

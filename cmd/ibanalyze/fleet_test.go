package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// emptyPrometheus answers every query as a Prometheus server that scrapes
// no agent does: an empty vector.
func emptyPrometheus(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": []any{}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFleetCommandsEmpty: with no agents, each command says so (text) or
// gives empty lists (JSON), and exits 0.
func TestFleetCommandsEmpty(t *testing.T) {
	url := emptyPrometheus(t)
	wantInOutput(t, runOK(t, "status", "--prometheus", url), "agents: 0 alive, 0 stale, 0 stopped", "over 60s: 0.0 pkt/s")
	wantInOutput(t, runOK(t, "nics", "--prometheus", url), "no agents")
	wantInOutput(t, runOK(t, "links", "--prometheus", url, "--range", "30s"), "no links")
	for cmd, want := range map[string]string{
		"status": `"agents": []`, "nics": `"nics": []`, "links": `"links": []`} {
		out := runOK(t, cmd, "--prometheus", url, "--json")
		wantInOutput(t, out, want, `"range_s": 60`)
	}
}

// TestFleetCommandsErrors: an unreachable server, a bad URL and a bad
// range are one line each on stderr and exit 1.
func TestFleetCommandsErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--prometheus", closed}, "ibanalyze: cannot reach Prometheus at " + closed + ": "},
		{[]string{"nics", "--prometheus", "127.0.0.1:9090"}, "ibanalyze: --prometheus: prometheus URL"},
		{[]string{"links", "--prometheus", closed, "--range", "1ms"}, "ibanalyze: range 1ms: want"},
	} {
		out, errOut, code := run(t, c.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line starting %q", c.args, code, out, errOut, c.want)
		}
	}
}

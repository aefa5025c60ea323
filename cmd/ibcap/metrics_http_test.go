package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// /metrics answers GET and HEAD; POST, PUT, DELETE and TRACE get 405 with
// Allow: GET, HEAD (they got 200 and the metrics). --metrics :PORT says on
// stderr that it listens on every interface (it says so with -q too); an
// address does not.
func TestMetricsMethodsAndWildcard(t *testing.T) {
	feed := testcap.Write(t, "flows.pcap", false, testcap.Stream(10, 1, 2, 0x100, 0, 200, testcap.BaseNs, func(int) int64 { return 1000 }))
	env := fakeverbs.New(t, fakeverbs.Config{Feed: feed})
	requireVerbsIbcap(t, env)
	addr := freeAddr(t)
	v := &verbsCase{env: env}
	p := v.start(t, "-i", "fake_1", "--metrics", addr, "--metrics-linger", "0s")
	testenv.WaitFor(t, 0, "the metrics endpoint", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "PATCH"} {
		req, err := http.NewRequest(m, "http://"+addr+"/metrics", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s /metrics: %v", m, err)
		}
		resp.Body.Close()
		want := http.StatusMethodNotAllowed
		if m == "GET" || m == "HEAD" {
			want = http.StatusOK
		}
		if resp.StatusCode != want || want == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /metrics: %s, Allow %q; want %d", m, resp.Status, resp.Header.Get("Allow"), want)
		}
	}
	stopIbcap(t, p)
	if strings.Contains(p.stderr.String(), "every interface") {
		t.Errorf("--metrics %s said it listens on every interface:\n%s", addr, p.stderr.String())
	}

	q := v.start(t, "-i", "fake_1", "--metrics", ":0", "--metrics-linger", "0s")
	stopIbcap(t, q)
	if !strings.Contains(q.stderr.String(), "ibcap: note: --metrics :0 listens on every interface of this host") {
		t.Errorf("--metrics :0 did not say it listens on every interface:\n%s", q.stderr.String())
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
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

// hostilePrometheus answers every query with one series whose label values
// are terminal attacks: ESC[2J clears the screen, an OSC sequence sets the
// window title, U+202E shows the rest backwards, a NUL and a newline.
func hostilePrometheus(t *testing.T) string {
	t.Helper()
	labels := map[string]string{"job": "ibcap\x00", "instance": "a:9464\u202e", "host": "h\x1b[2J", "device": "d\x1b]0;owned\x07",
		"version": "v\x9b1", "src": "10.0.0.1\x1b[31m", "dst": "10.0.0.2\nforged line", "address": "10.0.0.3\u2066"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector",
			"result": []any{map[string]any{"metric": labels, "value": []any{1700000000.5, "1"}}}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFleetCommandsEscapeLabels: label values print escaped in the text
// tables, never as control or bidirectional characters, and as they are
// (JSON-escaped) in --json.
func TestFleetCommandsEscapeLabels(t *testing.T) {
	url := hostilePrometheus(t)
	for _, cmd := range []string{"status", "nics", "links"} {
		out := runOK(t, cmd, "--prometheus", url)
		for _, r := range out {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x202e || r == 0x2066 {
				t.Errorf("%s prints %U:\n%q", cmd, r, out)
				break
			}
		}
		if strings.Contains(out, "\nforged line") {
			t.Errorf("%s prints a label's newline:\n%s", cmd, out)
		}
		if cmd != "links" {
			wantInOutput(t, out, `h\x1b[2J`)
		}
		js := runOK(t, cmd, "--prometheus", url, "--json")
		if cmd != "links" && !strings.Contains(js, `h\u001b[2J`) {
			t.Errorf("%s --json does not keep the label as it is:\n%s", cmd, js)
		}
	}
}

// hugePrometheus answers every query with a vector of series series, each
// with a label of labelBytes bytes, written as it is sent (never held).
func hugePrometheus(t *testing.T, series, labelBytes int) string {
	t.Helper()
	label := strings.Repeat("x", labelBytes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriter(w)
		bw.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		for i := range series {
			if i > 0 {
				bw.WriteString(",")
			}
			fmt.Fprintf(bw, `{"metric":{"job":"ibcap","instance":"a:%d","host":"%s"},"value":[1700000000.5,"1"]}`, i, label)
		}
		bw.WriteString("]}}")
		bw.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFleetCommandsBoundReply: a 200 MB reply, or one of a million series,
// is refused with one line naming the server, the bound and the flag that
// raises it, read only up to the bound (before, status died out of memory
// with a stack dump); raising the flag lets a reply in.
func TestFleetCommandsBoundReply(t *testing.T) {
	big := hugePrometheus(t, 2000, 100_000) // 200 MB
	many := hugePrometheus(t, 1_000_000, 1)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--prometheus", big}, "the reply is larger than 64 MB (--max-reply-mb); raise --max-reply-mb"},
		{[]string{"nics", "--prometheus", big, "--max-reply-mb", "1"}, "the reply is larger than 1 MB (--max-reply-mb)"},
		{[]string{"links", "--prometheus", big}, "the reply is larger than 64 MB"},
		{[]string{"status", "--prometheus", many}, "the reply holds more than 100000 series (--max-series); raise --max-series"},
		{[]string{"status", "--prometheus", many, "--max-series", "0"}, "--max-series 0: want 1 to 10000000"},
		{[]string{"status", "--prometheus", many, "--max-reply-mb", "100000000"}, "--max-reply-mb 100000000: want 1 to 16384"},
	} {
		out, errOut, code := run(t, c.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and one line saying %q", c.args, code, out, errOut, c.want)
		}
	}
	small := hugePrometheus(t, 20, 100_000) // 2 MB
	if _, errOut, code := run(t, "status", "--prometheus", small, "--max-reply-mb", "1"); code != 1 || !strings.Contains(errOut, "larger than 1 MB") {
		t.Errorf("2 MB reply under --max-reply-mb 1: exit %d, %s", code, errOut)
	}
	wantInOutput(t, runOK(t, "status", "--prometheus", small, "--max-reply-mb", "3"), "agents: 0 alive")
}

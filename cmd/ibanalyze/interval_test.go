package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
)

// packetTimes is the first and last packet time of the capture at path as
// the analyses read it (link packets too, for credits), and the widest gap
// between two packets.
func packetTimes(t *testing.T, path string, link bool) (firstNs, lastNs, maxGapNs int64) {
	t.Helper()
	s, err := analyze.OpenStream([]string{path}, analyze.StreamOptions{LinkPackets: link})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var p analyze.Packet
	for n := 0; s.Next(&p) == nil; n++ {
		if n == 0 {
			firstNs = p.TsNs
		} else {
			maxGapNs = max(maxGapNs, p.TsNs-lastNs)
		}
		lastNs = p.TsNs
	}
	return firstNs, lastNs, maxGapNs
}

// jsonDocs splits one JSON object after another.
func jsonDocs(t *testing.T, out string) []map[string]json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var docs []map[string]json.RawMessage
	for dec.More() {
		var d map[string]json.RawMessage
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%v in:\n%.2000s", err, out)
		}
		docs = append(docs, d)
	}
	return docs
}

// TestIntervalEveryCommand: --interval D on each command that reads one
// stream through its analysis, over a simulated incast. With D a fifth of
// the capture (and wider than any gap between its packets) there is one
// report so far at the first packet time + D, + 2D, ... up to the last
// packet: span/D of them, then the totals exactly as without --interval
// (ceil(span/D) documents in all). Each JSON report so far has until_ns
// first, or is {until_ns, error} when there is nothing to report yet; the
// text ones are headed "== so far", the totals "== totals". With D wider
// than the capture, the output is the one without --interval.
func TestIntervalEveryCommand(t *testing.T) {
	dir := simIncast(t)
	s1, s2, r, tel := filepath.Join(dir, "s1.pcap"), filepath.Join(dir, "s2.pcap"), filepath.Join(dir, "r.pcap"), filepath.Join(dir, "perfquery.txt")
	for _, c := range []struct {
		args    []string
		capture string // whose packet time the reports follow
		link    bool   // the analysis reads link packets
		key     string // a key of the command's report
	}{
		{[]string{"ipd", s1}, s1, false, `"flows"`},
		{[]string{"ipd", "--by", "link", "--phases", s1}, s1, false, `"flows"`},
		{[]string{"flows", s1}, s1, false, `"flows"`},
		{[]string{"credits", "--rate", "QDR", s1}, s1, true, `"links"`},
		{[]string{"tick", "--rate", "QDR", "--telemetry", tel, s1}, s1, false, `"tick_ns"`},
		{[]string{"buffer", s1, s2, r}, r, false, `"senders"`},
	} {
		name := strings.Join(c.args, " ")
		t.Run(c.args[0], func(t *testing.T) {
			firstNs, lastNs, gapNs := packetTimes(t, c.capture, c.link)
			everyNs := max((lastNs-firstNs)/5, gapNs+1)
			reports := int((lastNs - firstNs) / everyNs)
			if reports < 3 {
				t.Fatalf("%s: %d reports so far: the capture is too short for the test", name, reports)
			}
			interval := []string{"--interval", strconv.FormatInt(everyNs, 10)}

			jsonArgs := append([]string{c.args[0], "--json"}, c.args[1:]...)
			want := runOK(t, jsonArgs...)
			out := runOK(t, append(jsonArgs, interval...)...)
			if !strings.HasSuffix(out, want) {
				t.Errorf("%s: the last JSON object is not the report without --interval:\n%.1000s", name, out[max(0, len(out)-len(want)-200):])
			}
			docs := jsonDocs(t, out)
			if len(docs) != reports+1 {
				t.Fatalf("%s --interval %d: %d JSON objects, want %d reports so far over %d ns and the totals", name, everyNs, len(docs), reports, lastNs-firstNs)
			}
			made := 0
			for i, d := range docs[:reports] {
				until, err := strconv.ParseInt(string(d["until_ns"]), 10, 64)
				if wantNs := firstNs + int64(i+1)*everyNs; err != nil || until != wantNs {
					t.Errorf("%s: report so far %d: until_ns %s, want %d", name, i, d["until_ns"], wantNs)
				}
				if _, failed := d["error"]; failed && len(d) != 2 {
					t.Errorf("%s: report so far %d holds an error and more: %v", name, i, d)
				} else if !failed {
					made++
				}
			}
			if _, ok := docs[reports]["until_ns"]; ok {
				t.Errorf("%s: the totals have until_ns", name)
			}
			if made == 0 || !strings.HasPrefix(out, "{\n  \"until_ns\": ") || !strings.Contains(out, c.key) {
				t.Errorf("%s: %d of %d reports so far made, want some, each with until_ns first:\n%.600s", name, made, reports, out)
			}
			if out := runOK(t, append(jsonArgs, "--interval", strconv.FormatInt(lastNs-firstNs+1, 10))...); out != want {
				t.Errorf("%s with an interval wider than the capture: %.600s, want the report without --interval", name, out)
			}

			want = runOK(t, c.args...)
			out = runOK(t, append(c.args, interval...)...)
			if n := strings.Count(out, "== so far: packets before +"); n != reports || !strings.HasSuffix(out, "\n== totals\n"+want) {
				t.Errorf("%s: %d text reports so far, want %d, then the totals as without --interval:\n%.600s", name, n, reports, out)
			}
		})
	}
}

// TestIntervalRefused: --interval takes a duration from 1ns to a week, on
// every command that has it; ipd --compare and credits without --rate
// (which read to the end before reporting) refuse it in one line.
func TestIntervalRefused(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_rping.pcap")
	for _, cmd := range [][]string{{"ipd"}, {"flows"}, {"credits", "--rate", "QDR"}, {"tick", "--telemetry", path}, {"buffer", path}} {
		for _, bad := range []string{"0", "-1ms", "169h", "1e300h", "1us2"} {
			args := append(append(cmd, "--interval", bad), path)
			if _, errOut, code := run(t, args...); code == 0 || !strings.Contains(errOut, `for "--interval" flag`) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s: exit %d, %s", strings.Join(args, " "), code, errOut)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ipd", "--compare", "--interval", "1s", path, path}, "--interval does not go with --compare"},
		{[]string{"credits", "--interval", "1s", path}, "--interval needs --rate"},
	} {
		if _, errOut, code := run(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, %s", strings.Join(c.args, " "), code, errOut)
		}
	}
}

package fleet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

// Seeds: the hostile replies of both rounds (labels holding terminal
// escapes, a reply cut short, one past its series bound, an error reply,
// a matrix where a vector was asked for, deep nesting in skipped keys).
var replySeeds = []string{
	`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"host":"h\u001b[2J","device":"d\u001b]0;x\u0007"},"value":[1700000000.5,"1"]}]}}`,
	`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[1,"2"]}`,
	`{"status":"success","data":{"result":[{"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"1"]}],"resultType":"vector"}}`,
	`{"status":"error","errorType":"bad_data","error":"parse error\u001b[2J"}`,
	`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`,
	`{"status":"success","warnings":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]],"data":{"resultType":"vector","result":[]}}`,
	`[]`, `{"status":"success"}`, ``, `{"data":{"resultType":"vector","result":[{"metric":{"x":1},"value":[1,"1"]}]}}`,
}

// FuzzDecodeReply: any reply is decoded or refused, never a panic; no more
// samples than the bound are handed on; an error reply's words are escaped.
func FuzzDecodeReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		const maxSeries = 2
		n := 0
		got, err := decodeReply(json.NewDecoder(strings.NewReader(reply)), maxSeries, func(*model.Sample) { n++ })
		if got != n || n > maxSeries {
			t.Fatalf("%d samples handed on, %d counted, bound %d", n, got, maxSeries)
		}
		var re *replyError
		if errors.As(err, &re) && strings.ContainsAny(re.Error(), "\x1b\x07") {
			t.Fatalf("error reply printed raw: %q", re.Error())
		}
	})
}

// The seeds' verdicts, one by one.
func TestDecodeReplySeeds(t *testing.T) {
	for i, want := range []string{"", "EOF", "too many series", "parse error\\x1b[2J", `a "matrix" result`, "", "want {", "", "EOF", "cannot unmarshal number"} {
		_, err := decodeReply(json.NewDecoder(strings.NewReader(replySeeds[i])), 2, func(*model.Sample) {})
		switch {
		case want == "" && err != nil:
			t.Errorf("seed %d: %v", i, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("seed %d: %v, want %q", i, err, want)
		}
	}
}
